package actors

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// withFailures is a revived operation that counted failed jobs before the
// restart, their ids stored with it.
func withFailures(st *pb.OperationStatus, maxFailed int32, ids ...string) *pb.OperationStatus {
	st.Spec.MaxFailedJobCount = maxFailed
	st.Jobs = &pb.JobCounters{Failed: int64(len(ids))}
	st.FailedJobIds = ids
	return st
}

// The journal's failures are added to a revived operation's count unless
// its stored status names them; a failure journaled twice counts once.
// Finished operations, and ids that are not jobs, are left alone; the
// revived statuses given are not modified.
func TestMergeJournalCountsUncountedFailures(t *testing.T) {
	running := withFailures(revivedOp("op-1-1", 4), 10, "op-1-1.0.0.0.1")
	done := withFailures(revivedOp("op-1-2", 4), 10)
	done.State = pb.OperationState_OPERATION_STATE_FAILED
	before := []*pb.OperationStatus{proto.Clone(running).(*pb.OperationStatus), proto.Clone(done).(*pb.OperationStatus)}
	found := []JournalBatch{
		{Seq: 1, JobIDs: []string{"op-1-1.0.1.0.1"}, FailedJobIDs: []string{"op-1-1.0.0.0.1", "op-1-1.0.2.0.1", "not-a-job"}},
		{Seq: 2, FailedJobIDs: []string{"op-1-1.0.2.0.1", "op-1-2.0.0.0.1", "op-1-1.0.2.1.2"}},
	}
	out, owed := mergeJournal([]*pb.OperationStatus{running, done}, found, slog.New(slog.DiscardHandler))

	got := out[0]
	if j := got.GetJobs(); j.GetFailed() != 3 || j.GetCompleted() != 1 {
		t.Errorf("op-1-1 jobs %v, want 3 failed (1 stored, 2 journaled), 1 completed", j)
	}
	if diff := cmp.Diff([]string{"op-1-1.0.0.0.1", "op-1-1.0.2.0.1", "op-1-1.0.2.1.2"}, got.GetFailedJobIds()); diff != "" {
		t.Errorf("op-1-1 failed job ids (-want +got):\n%s", diff)
	}
	if out[1] != done {
		t.Errorf("the finished operation's status was replaced: %v", out[1])
	}
	if diff := cmp.Diff(map[string]bool{"op-1-1": true}, owed); diff != "" {
		t.Errorf("owed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, []*pb.OperationStatus{running, done}, protocmp.Transform()); diff != "" {
		t.Errorf("the revived statuses were modified (-before +after):\n%s", diff)
	}
}

// A failure alone in the journal makes the operation owe a status write.
func TestMergeJournalFailuresOnlyAreOwed(t *testing.T) {
	st := withFailures(revivedOp("op-1-1", 4), 10)
	out, owed := mergeJournal([]*pb.OperationStatus{st}, []JournalBatch{{Seq: 7, FailedJobIDs: []string{"op-1-1.0.3.0.1"}}}, slog.New(slog.DiscardHandler))
	if !owed["op-1-1"] || out[0].GetJobs().GetFailed() != 1 {
		t.Errorf("owed %v, jobs %v; want op-1-1 owed with 1 failed job", owed, out[0].GetJobs())
	}
}

func TestAppendBoundedKeepsTheNewest(t *testing.T) {
	var ids []string
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		ids = appendBounded(ids, id, 3)
	}
	if diff := cmp.Diff([]string{"c", "d", "e"}, ids); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// After a restart a node reports failures of jobs the scheduler before it
// started: one that scheduler counted (its id is in the stored status) is
// not counted again, one it never stored is; each is acknowledged once
// the journal stored it.
func TestRestartCountsAReportedFailureOnce(t *testing.T) {
	j := newMemJournal()
	counted, lost := "op-1-1.0.0.0.1", "op-1-1.0.1.0.1"
	h := startHarness(t, func(d *Deps) { d.Journal = j }, withFailures(revivedOp("op-1-1", 4), 10, counted))
	ledger := h.sys.dir.Load().trees[0].ledger
	testutil.WaitFor(t, 10*time.Second, "the revived operation to be scheduled", func() bool { return ledger.hasOperation("op-1-1") })

	finished := map[string]pb.JobState{counted: pb.JobState_JOB_STATE_FAILED, lost: pb.JobState_JOB_STATE_FAILED}
	acked := map[string]bool{}
	testutil.WaitFor(t, 10*time.Second, "both failures to be acknowledged", func() bool {
		for _, id := range acks(h.beat("n1", nil, finished)) {
			acked[id] = true
		}
		return acked[counted] && acked[lost]
	})
	st := h.status("op-1-1")
	if j := st.GetJobs(); j.GetFailed() != 2 || j.GetRunning() != 0 {
		t.Errorf("jobs %v, want 2 failed (1 stored, 1 reported after the restart), none running", j)
	}
	if diff := cmp.Diff([]string{counted, lost}, st.GetFailedJobIds()); diff != "" {
		t.Errorf("failed job ids (-want +got):\n%s", diff)
	}
	if failed := j.failedIDs(); !strings.Contains(strings.Join(failed, ","), lost) {
		t.Errorf("journal's failed jobs %v, want %s among them (acknowledged before any status write)", failed, lost)
	}
}

// A revived operation whose failures, with those found in the journal,
// are more than its max_failed_job_count fails as it starts: the scheduler
// before the restart stopped before it ended it.
func TestRevivedOperationOverItsFailureLimitFails(t *testing.T) {
	j := newMemJournal()
	j.batches = append(j.batches, JournalBatch{Seq: 1, FailedJobIDs: []string{"op-1-1.0.1.0.1"}})
	j.next = 2
	h := startHarness(t, func(d *Deps) { d.Journal = j }, withFailures(revivedOp("op-1-1", 4), 1, "op-1-1.0.0.0.1"))
	var st *pb.OperationStatus
	testutil.WaitFor(t, 10*time.Second, "the revived operation to fail", func() bool {
		st = h.status("op-1-1")
		return st.GetState() == pb.OperationState_OPERATION_STATE_FAILED
	})
	if j := st.GetJobs(); j.GetFailed() != 2 {
		t.Errorf("jobs %v, want 2 failed", j)
	}
	if msg := st.GetError().GetMessage(); !strings.Contains(msg, "max_failed_job_count 1") {
		t.Errorf("error %q, want it to name max_failed_job_count 1", msg)
	}
}
