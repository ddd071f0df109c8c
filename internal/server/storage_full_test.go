package server_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// TestSchedulerFailsClosedWhileJetStreamIsFull (reliability test 24, the
// storage full): the embedded JetStream may use 64 MiB (--max-store), of
// which the events stream and the journal reserve 8 MiB each. While an
// operation runs, another stream fills the rest. A submission, whose
// write the operations bucket now refuses, is answered UNAVAILABLE, and
// the scheduler fails closed: no job starts, even into a free slot, none
// is aborted, /healthz answers 503 naming the full store. Once the other
// stream is deleted it notices the space by itself (its probe writes the
// bucket) and the operation runs to completion, each job started once.
func TestSchedulerFailsClosedWhileJetStreamIsFull(t *testing.T) {
	srv, nc := servertest.Start(t, treesYAML, func(c *server.Config) {
		c.MaxStore, c.EventMaxBytes, c.JournalMaxBytes, c.DashboardMaxBytes = 64<<20, 8<<20, 8<<20, 8<<20
		c.Actors.HeartbeatPeriod = 50 * time.Millisecond
		c.Actors.ProgressPersistPeriod = 100 * time.Millisecond
		c.StorageProbePeriod = 50 * time.Millisecond
	})
	agent := servertest.StartAgent(t, srv.URL(), "node-0", scheduler.Resources{scheduler.CPU: 2, scheduler.UserSlots: 2})
	cl := client.New(nc, 5*time.Second)
	ctx := context.Background()
	id, err := cl.Submit(ctx, simulated("light", 4, 1, 3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "two jobs to run", func() bool { return agent.Stats().RunningJobs == 2 })

	// Fill what the streams with limits leave, a MiB at a time.
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	filler, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "FILLER", Subjects: []string{"filler.>"}, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	var full error
	for i := 0; i < 100 && full == nil; i++ {
		_, full = js.Publish(ctx, "filler.x", chunk)
	}
	if full == nil {
		t.Fatal("100 MiB fit in a 64 MiB store")
	}
	t.Logf("the store is full: %v", full)

	// A submission needs a write: refused, and the storage is seen full.
	if _, err := client.New(nc, 2*time.Second).Submit(ctx, simulated("light", 1, 1, time.Second)); err == nil {
		t.Fatal("a submission was acknowledged with the store full")
	} else {
		t.Logf("submission with the store full: %v", err)
	}
	testutil.WaitFor(t, 10*time.Second, "the scheduler to see the storage full", func() bool { return !srv.StorageAvailable() })
	started := agent.Stats().JobsStarted
	testutil.WaitFor(t, 20*time.Second, "the running jobs to complete", func() bool { return agent.Stats().JobsCompleted >= 2 })
	sent := agent.Stats().HeartbeatsSent
	testutil.WaitFor(t, 10*time.Second, "ten more heartbeats", func() bool { return agent.Stats().HeartbeatsSent >= sent+10 })
	if s := agent.Stats(); s.JobsStarted != started || s.JobsAborted != 0 {
		t.Fatalf("with the store full: %d jobs started (was %d), %d aborted; want none started, none aborted", s.JobsStarted, started, s.JobsAborted)
	}
	code, h, body := storageHealthz(t, srv)
	if code != http.StatusServiceUnavailable || h.StorageAvailable || !h.Leading || !slices.Contains(h.FailingStores, "operations") {
		t.Errorf("/healthz with the store full: %d %s; want 503, leading, storage unavailable, operations failing", code, body)
	}

	if err := js.DeleteStream(ctx, filler.CachedInfo().Config.Name); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, "the scheduler to see the space back", srv.StorageAvailable)
	var st *pb.OperationStatus
	testutil.WaitFor(t, 60*time.Second, "the operation to complete", func() bool {
		st, err = cl.Get(ctx, id)
		return err == nil && st.GetState() == pb.OperationState_OPERATION_STATE_COMPLETED
	})
	if j := st.GetJobs(); j.GetCompleted() != 4 || j.GetFailed() != 0 || j.GetAborted() != 0 {
		t.Errorf("operation jobs %v, want 4 completed", j)
	}
	if s := agent.Stats(); s.JobsStarted != 4 || s.JobsAborted != 0 || s.DuplicateStarts != 0 {
		t.Errorf("agent: %d jobs started (%d duplicates), %d aborted; want the operation's 4 started once each (none of the refused submission's), none aborted",
			s.JobsStarted, s.DuplicateStarts, s.JobsAborted)
	}
	// The refused submission (each of the client's tries a new operation,
	// never stored) is listed failed, not run.
	list, err := cl.List(ctx, &pb.ListOperationsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, op := range list {
		states = append(states, op.GetId()+"="+strings.TrimPrefix(op.GetState().String(), "OPERATION_STATE_"))
		if op.GetId() != id && (op.GetState() != pb.OperationState_OPERATION_STATE_FAILED || op.GetJobs().GetCompleted() != 0) {
			t.Errorf("refused submission %s: %v, %v; want failed, no job run", op.GetId(), op.GetState(), op.GetJobs())
		}
	}
	t.Logf("operations after the store was freed: %v", states)
}
