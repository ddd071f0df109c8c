package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
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
	// (The stream's other subject holds the leader's fence.)
	info, err := s.Info(context.Background(), jetstream.WithSubjectFilter(subjects.Completions()))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Subjects[subjects.Completions()]
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

// TestAcknowledgedFailuresSurviveARestart: a failed job whose finish the
// scheduler acknowledged still counts towards max_failed_job_count after a
// restart, even when its operation had not stored it in its status yet
// (the progress writes here are an hour apart): the completions journal
// has it. The operation fails after max_failed_job_count + 1 failures in
// all, not that many after the restart, and its status names each failed
// attempt once, with the epoch of the scheduler that started it.
func TestAcknowledgedFailuresSurviveARestart(t *testing.T) {
	start, srv, nc := restartable(t, time.Hour)
	epoch := srv.Epoch()
	// One slot: the attempts run one after the other.
	agent := servertest.StartAgent(t, srv.URL(), "node-0", scheduler.Resources{scheduler.CPU: 1, scheduler.UserSlots: 1})
	cl := client.New(nc, 5*time.Second)
	id, err := cl.Submit(context.Background(), &pb.OperationSpec{Pool: "light", MaxFailedJobCount: 3, Tasks: []*pb.TaskSpec{{
		Name: "bad", JobCount: 1, JobResources: &pb.Resources{Cpu: 1},
		Run: &pb.TaskSpec_Command{Command: &pb.Command{Argv: []string{"sh", "-c", "sleep 0.2; exit 3"}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "two failures acknowledged", func() bool {
		s := agent.Stats()
		return s.JobsFailed >= 2 && s.UnackedFinishedJobs == 0
	})
	acked := agent.Stats().JobsFailed
	if stored := storedStatus(t, nc, id).GetJobs().GetFailed(); uint64(stored) >= acked {
		t.Fatalf("the status already stores %d failed jobs of the %d acknowledged: the test needs some only in the journal", stored, acked)
	}
	srv.Close()

	srv, nc = start()
	if srv.Epoch() <= epoch {
		t.Fatalf("epoch %d after the restart, want above %d", srv.Epoch(), epoch)
	}
	cl = client.New(nc, 5*time.Second)
	var st *pb.OperationStatus
	testutil.WaitFor(t, 20*time.Second, "operation "+id+" to fail after the restart", func() bool {
		st, err = cl.Get(context.Background(), id)
		return err == nil && st.GetState() == pb.OperationState_OPERATION_STATE_FAILED
	})
	if j := st.GetJobs(); j.GetFailed() != 4 {
		t.Errorf("operation jobs %v, want 4 failed (max_failed_job_count 3, then one more)", j)
	}
	// (A fifth attempt may start in the response to the heartbeat that
	// reports the fourth failure, before the operation ends; it is
	// aborted.)
	if s := agent.Stats(); s.JobsFailed != 4 || s.JobsStarted > 5 {
		t.Errorf("the agent started %d attempts and %d failed; want 4 failed in all, at most 5 started (%d failed and were acknowledged before the restart)", s.JobsStarted, s.JobsFailed, acked)
	}
	ids := st.GetFailedJobIds()
	before, after := 0, 0
	for _, jid := range ids {
		switch {
		case strings.HasSuffix(jid, fmt.Sprintf(".%d", epoch)):
			before++
		case strings.HasSuffix(jid, fmt.Sprintf(".%d", srv.Epoch())):
			after++
		}
	}
	if len(ids) != 4 || len(slices.Compact(slices.Sorted(slices.Values(ids)))) != 4 || before < int(acked) || after == 0 {
		t.Errorf("failed job ids %v; want 4 distinct ones, at least %d of epoch %d and some of epoch %d", ids, acked, epoch, srv.Epoch())
	}
}
