package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/natsembed"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	"github.com/sharetree/sharetree/subjects"
)

const durabilityTrees = `
version: 1
trees:
  - name: physical
    pools:
      - {name: shared}
`

// persistMode is the named stream's persist mode.
func persistMode(t *testing.T, js jetstream.JetStream, stream string) jetstream.PersistModeType {
	t.Helper()
	s, err := js.Stream(context.Background(), stream)
	if err != nil {
		t.Fatalf("stream %s: %v", stream, err)
	}
	return s.CachedInfo().Config.PersistMode
}

// TestStateIsSyncedAndEventsAreNot: by default the embedded server fsyncs
// every JetStream write before acknowledging it, so the operation, scheduler
// and configuration buckets survive a power loss; the events stream alone
// opts out, in JetStream's asynchronous persist mode.
func TestStateIsSyncedAndEventsAreNot(t *testing.T) {
	srv, nc := servertest.Start(t, durabilityTrees, nil)
	if !srv.EmbeddedSyncAlways() {
		t.Fatal("the embedded NATS server does not fsync every write by default")
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if got := persistMode(t, js, subjects.EventsStream); got != jetstream.AsyncPersistMode {
		t.Errorf("events stream persist mode = %s, want async", got)
	}
	for _, bucket := range []string{subjects.OperationsBucket, subjects.SchedulerBucket, subjects.ConfigBucket} {
		if got := persistMode(t, js, "KV_"+bucket); got != jetstream.DefaultPersistMode {
			t.Errorf("bucket %s persist mode = %s, want default (synced with the server)", bucket, got)
		}
	}
	off, _ := servertest.Start(t, durabilityTrees, func(c *server.Config) { c.SyncAlways = false })
	if off.EmbeddedSyncAlways() {
		t.Error("SyncAlways false still fsyncs every write")
	}
}

// withStoreOffline serves the JetStream store in dir from a bare NATS
// server while no scheduler runs on it, as another process of the
// operator's could, and stops that server when use returns.
func withStoreOffline(t *testing.T, dir string, use func(jetstream.JetStream)) {
	t.Helper()
	emb, err := natsembed.Start(natsembed.Default(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Stop()
	nc, err := nats.Connect(emb.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	use(js)
}

// TestAnOlderEventsStreamIsKept: an events stream an older sharetree made
// (each event flushed before its acknowledgement) cannot change its persist
// mode; the scheduler starts on it, keeps its events and its mode, and
// stores new events in it.
func TestAnOlderEventsStreamIsKept(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	withStoreOffline(t, dir, func(ojs jetstream.JetStream) {
		old := server.EventStreamConfig(time.Hour, 1<<20)
		old.PersistMode = jetstream.DefaultPersistMode
		if _, err := ojs.CreateStream(ctx, old); err != nil {
			t.Fatal(err)
		}
		oldEvent, err := subjects.Events("physical", subjects.EventOperation)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ojs.Publish(ctx, oldEvent, []byte("an older event")); err != nil {
			t.Fatal(err)
		}
	})

	srv, nc := servertest.Start(t, durabilityTrees, func(c *server.Config) { c.DataDir = dir })
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if got := persistMode(t, js, subjects.EventsStream); got != jetstream.DefaultPersistMode {
		t.Errorf("older events stream persist mode = %s, want it kept (default)", got)
	}
	if _, err := client.New(nc, 5*time.Second).Submit(ctx, simulated("shared", 1, 1, time.Minute)); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the submission's event in the older stream", func() bool {
		s, err := js.Stream(ctx, subjects.EventsStream)
		if err != nil || !srv.EventsSettled() {
			return false
		}
		info, err := s.Info(ctx)
		return err == nil && info.State.Msgs >= 2
	})
	s, err := js.Stream(ctx, subjects.EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if string(first.Data) != "an older event" {
		t.Errorf("first event = %q, want the older one kept", first.Data)
	}
}
