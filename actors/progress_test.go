package actors

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler/placement"
)

func progressSpec(counts ...int32) *pb.OperationSpec {
	spec := &pb.OperationSpec{}
	for _, n := range counts {
		spec.Tasks = append(spec.Tasks, &pb.TaskSpec{JobCount: n})
	}
	return spec
}

func TestJobProgressRanges(t *testing.T) {
	spec := progressSpec(200, 3)
	var p jobProgress
	for _, j := range [][2]int{{0, 5}, {0, 6}, {0, 63}, {0, 64}, {0, 65}, {0, 199}, {1, 0}, {0, 7}, {1, 2}} {
		if !p.mark(spec, j[0], j[1]) {
			t.Fatalf("mark(%v) refused", j)
		}
	}
	for _, j := range [][2]int{{0, 6}, {0, 200}, {0, -1}, {2, 0}, {-1, 0}} {
		if p.mark(spec, j[0], j[1]) {
			t.Errorf("mark(%v) accepted a job marked already or out of range", j)
		}
	}
	want := []*pb.JobRange{
		{Task: 0, First: 5, Count: 3}, {Task: 0, First: 63, Count: 3}, {Task: 0, First: 199, Count: 1},
		{Task: 1, First: 0, Count: 1}, {Task: 1, First: 2, Count: 1},
	}
	if diff := cmp.Diff(want, p.ranges(), protocmp.Transform()); diff != "" {
		t.Errorf("ranges (-want +got):\n%s", diff)
	}
	if p.count != 9 || len(p.keys("o")) != 9 || p.keys("o")[3] != (placement.JobKey{Operation: "o", Task: 0, Index: 63}) {
		t.Errorf("count %d keys %v", p.count, p.keys("o"))
	}
	// What ranges writes, storedProgress reads back.
	back, err := storedProgress(spec, &pb.OperationStatus{CompletedJobs: p.ranges()})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p.ranges(), back.ranges(), protocmp.Transform()); diff != "" || back.count != p.count {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestStoredProgressRefusesBadRanges(t *testing.T) {
	spec := progressSpec(10)
	for _, tc := range []struct {
		ranges []*pb.JobRange
		want   string
	}{
		{[]*pb.JobRange{{Task: 1, First: 0, Count: 1}}, "completed_jobs[0]: task 1 does not exist"},
		{[]*pb.JobRange{{Task: 0, First: 8, Count: 3}}, "completed_jobs[0]: jobs 8 to 10 of task 0 are outside its 10 jobs"},
		{[]*pb.JobRange{{Task: 0, First: -1, Count: 2}}, "outside"},
		{[]*pb.JobRange{{Task: 0, First: 0, Count: 0}}, "outside"},
		{[]*pb.JobRange{{Task: 0, First: 2147483647, Count: 2147483647}}, "outside"},
		{[]*pb.JobRange{{Task: 0, First: 0, Count: 4}, {Task: 0, First: 3, Count: 1}}, "completed_jobs[1]: job 3 of task 0 is listed twice"},
	} {
		_, err := storedProgress(spec, &pb.OperationStatus{CompletedJobs: tc.ranges})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want it to say %q", tc.ranges, err, tc.want)
		}
	}
}

// A revived operation runs none of the jobs stored as completed, keeps its
// stored failure count, and one whose jobs all completed completes; stored
// ranges that do not fit the spec are not trusted (every job runs).
func TestRevivalSkipsStoredCompletedJobs(t *testing.T) {
	partial := revivedOp("op-1-1", 6)
	partial.CompletedJobs = []*pb.JobRange{{Task: 0, First: 0, Count: 2}, {Task: 0, First: 4, Count: 1}}
	partial.Jobs = &pb.JobCounters{Total: 6, Completed: 3, Failed: 1}
	began := time.Date(2025, 12, 31, 1, 0, 0, 0, time.UTC)
	partial.StartTime = timestamppb.New(began)
	full := revivedOp("op-1-2", 2)
	full.CompletedJobs = []*pb.JobRange{{Task: 0, First: 0, Count: 2}}
	bad := revivedOp("op-1-3", 2)
	bad.CompletedJobs = []*pb.JobRange{{Task: 0, First: 1, Count: 5}}
	h := startRevived(t, partial, full, bad)

	testutil.WaitFor(t, 10*time.Second, "op-1-2 to complete", func() bool {
		return h.status("op-1-2").GetState() == pb.OperationState_OPERATION_STATE_COMPLETED
	})
	h.clock.advance(11 * time.Second)
	var started []string
	for i := 0; len(started) < 6 && i < 50; i++ {
		started = append(started, startIDs(h.beat("n1", started, nil))...)
		h.clock.advance(10 * time.Millisecond)
	}
	// (The ids end with the restarted scheduler's epoch, 2.)
	want := []string{"op-1-1.0.2.0.2", "op-1-1.0.3.0.2", "op-1-1.0.5.0.2", "op-1-3.0.0.0.2", "op-1-3.0.1.0.2"}
	if diff := cmp.Diff(want, started); diff != "" {
		t.Errorf("jobs started (-want +got):\n%s", diff)
	}
	st := h.status("op-1-1")
	if j := st.GetJobs(); j.GetCompleted() != 3 || j.GetFailed() != 1 || j.GetRunning() != 3 {
		t.Errorf("op-1-1 jobs %v, want 3 completed (stored), 1 failed (stored), 3 running", j)
	}
	if got := st.GetStartTime().AsTime(); !got.Equal(began) {
		t.Errorf("op-1-1 start time %v, want the stored %v", got, began)
	}
}

// lastStatusStore keeps the last status written of each operation.
type lastStatusStore struct {
	mu   sync.Mutex
	last map[string]*pb.OperationStatus
}

func (s *lastStatusStore) Put(_ context.Context, st *pb.OperationStatus) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[string]*pb.OperationStatus{}
	}
	s.last[st.GetId()] = proto.Clone(st).(*pb.OperationStatus)
	return nil
}

func (s *lastStatusStore) List(context.Context) ([]*pb.OperationStatus, error) { return nil, nil }

func (s *lastStatusStore) jobs(id string) *pb.JobCounters {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last[id].GetJobs()
}

// A failed, aborted or lost job's count is stored within the progress
// period, as a completed one is, though no job completed: a revived
// operation goes on from the stored counts, and max_failed_job_count
// counts the failures before a restart.
func TestJobCountsAreStoredWithoutACompletion(t *testing.T) {
	store := &lastStatusStore{}
	h := startHarnessConfig(t, func(c *Config) { c.ProgressPersistPeriod = 20 * time.Millisecond },
		func(d *Deps) { d.Store = store })
	op, started := h.submitStarted(3)
	// One job fails, one is aborted; the jobs started in their place run.
	again := startIDs(h.beat("n1", started[2:], map[string]pb.JobState{started[0]: pb.JobState_JOB_STATE_FAILED, started[1]: pb.JobState_JOB_STATE_ABORTED}))
	h.beat("n1", again, nil) // started[2] vanished: lost
	testutil.WaitFor(t, 10*time.Second, "the failed, aborted and lost jobs to be stored", func() bool {
		j := store.jobs(op)
		return j.GetFailed() == 1 && j.GetAborted() == 2 // aborted and lost
	})
}
