package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// TestReplicatedSchedulerSurvivesANATSServerLoss: a scheduler on a
// three-server NATS cluster with Replicas 3 keeps three copies of every
// stream and bucket it writes; when the NATS server it and its agent are
// connected to stops, they move to the others, the scheduler stays the
// leader, and operations submitted before and after run to completion.
func TestReplicatedSchedulerSurvivesANATSServerLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-server NATS cluster")
	}
	cluster := testutil.StartNATSCluster(t, 3)
	url := cluster.URLs()
	cfg := sharedNATSConfig(t, url, "a")
	// The default lease: the stream leaders' election after the NATS
	// server's loss may take longer than a 2s lease's renew deadline.
	cfg.Replicas, cfg.Leader.TTL = 3, 10*time.Second
	srv, err := server.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)

	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{subjects.KVStream(subjects.OperationsBucket), subjects.KVStream(subjects.SchedulerBucket),
		subjects.KVStream(subjects.LeaderBucket), subjects.KVStream(subjects.ConfigBucket), subjects.CompletionsStream, subjects.EventsStream} {
		s, err := js.Stream(context.Background(), name)
		if err != nil {
			t.Fatalf("stream %s: %v", name, err)
		}
		if r := s.CachedInfo().Config.Replicas; r != 3 {
			t.Errorf("stream %s has %d replicas, want 3", name, r)
		}
	}

	agent := servertest.StartAgent(t, url, "node-0", scheduler.Resources{scheduler.CPU: 2, scheduler.UserSlots: 2})
	cl := client.New(nc, 5*time.Second)
	run := func(what string) string {
		t.Helper()
		id, err := cl.Submit(context.Background(), simulated("light", 4, 1, 200*time.Millisecond))
		if err != nil {
			t.Fatalf("%s: submit: %v", what, err)
		}
		testutil.WaitFor(t, 60*time.Second, what+": the operation to complete", func() bool {
			st, err := cl.Get(context.Background(), id)
			return err == nil && st.GetState() == pb.OperationState_OPERATION_STATE_COMPLETED
		})
		return id
	}
	before := run("before the loss")

	// Stop the server the scheduler's connection uses.
	connected := srv.ConnectedServer()
	var stopped bool
	for _, s := range cluster.Servers {
		if s.ID() == connected {
			s.Shutdown()
			s.WaitForShutdown()
			stopped = true
		}
	}
	if !stopped {
		t.Fatalf("the scheduler's NATS server %s is not in the cluster", connected)
	}
	after := run("after the loss")
	if !srv.Leading() {
		t.Error("the scheduler stopped leading across the NATS server's loss")
	}
	for _, id := range []string{before, after} {
		testutil.WaitFor(t, 30*time.Second, "operation "+id+"'s final status to be stored", func() bool {
			return storedStatus(t, nc, id).GetState() == pb.OperationState_OPERATION_STATE_COMPLETED
		})
	}
	if s := agent.Stats(); s.JobsStarted != 8 || s.JobsAborted != 0 {
		t.Errorf("agent: %d jobs started, %d aborted; want 8 started once each, none aborted", s.JobsStarted, s.JobsAborted)
	}
}
