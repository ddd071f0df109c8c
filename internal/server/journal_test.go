package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// journalBatches is how many batches the completions journal holds.
func journalBatches(t *testing.T, nc *nats.Conn) uint64 {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(context.Background(), subjects.CompletionsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// TestAcknowledgedCompletionsSurviveARestart: a completed job whose finish
// the scheduler acknowledged runs no second time after a restart, even
// when its operation had not stored it in its status yet (the progress
// writes here are an hour apart): the completions journal has it. Once the
// operation is over, the journal is empty again.
func TestAcknowledgedCompletionsSurviveARestart(t *testing.T) {
	start, srv, nc := restartable(t, time.Hour)
	// One slot: the jobs run one after the other.
	agent := servertest.StartAgent(t, srv.URL(), "node-0", scheduler.Resources{scheduler.CPU: 1, scheduler.UserSlots: 1})
	cl := client.New(nc, 5*time.Second)
	id, err := cl.Submit(context.Background(), simulated("light", 4, 1, 300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "two jobs completed and acknowledged", func() bool {
		s := agent.Stats()
		return s.JobsCompleted >= 2 && s.UnackedFinishedJobs == 0
	})
	acked := agent.Stats().JobsCompleted
	if stored := storedCompleted(t, nc, id); int64(stored) >= int64(acked) {
		t.Fatalf("the status already stores %d completed jobs of the %d acknowledged: the test needs some only in the journal", stored, acked)
	}
	if n := journalBatches(t, nc); n == 0 {
		t.Fatal("the completions journal is empty with acknowledged completions not in any status")
	}
	srv.Close()

	_, nc = start()
	cl = client.New(nc, 5*time.Second)
	var st *pb.OperationStatus
	testutil.WaitFor(t, 20*time.Second, "operation "+id+" to complete after the restart", func() bool {
		st, err = cl.Get(context.Background(), id)
		return err == nil && st.GetState() == pb.OperationState_OPERATION_STATE_COMPLETED
	})
	if j := st.GetJobs(); j.GetCompleted() != 4 || j.GetFailed() != 0 || j.GetAborted() != 0 {
		t.Errorf("operation jobs %v, want 4 completed, none failed or aborted", j)
	}
	if s := agent.Stats(); s.JobsStarted != 4 {
		t.Errorf("the agent started %d jobs; want each of the 4 started once (%d were acknowledged complete before the restart)", s.JobsStarted, acked)
	}
	testutil.WaitFor(t, 10*time.Second, "the completions journal to be trimmed once the operation is over", func() bool {
		return journalBatches(t, nc) == 0
	})
}
