package actors

import (
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// A starving operation's job needs two cores, and preemption interrupts two
// one-core jobs for it. The victims leave one at a time: the core the first
// one frees must stay free (the interrupted operation's requeued job would
// take it, and the two-core job would never fit), and the job must start
// once the second has left.
func TestPreemptionReservesTheRoomItMakes(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg := DefaultConfig()
	cfg.Now, cfg.RequestTimeout = clock.Now, 5*time.Second
	tc := scheduler.DefaultTreeConfig()
	tc.FairShareUpdatePeriod = 10 * time.Millisecond
	tc.FairShareStarvationTimeout, tc.FairShareAggressiveStarvationTimeout = 100*time.Millisecond, 100*time.Millisecond
	tc.PreemptiveSchedulingBackoff = 0
	tc.AllocationPreemptionTimeout = time.Minute
	tree := TreeSpec{Name: "physical", Config: tc, Pools: []scheduler.PoolConfig{
		{Name: "guaranteed", StrongGuaranteeResources: scheduler.PartialResources{}.With(scheduler.CPU, 2)},
		{Name: "other"},
	}}
	sys, err := Start(cfg, Deps{Events: nopEvents{}, Signals: nopSignals{}, Store: memStore{}, Epoch: 1}, []TreeSpec{tree}, "physical", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Stop()

	submit := func(pool string, jobs int32, cpu float64) string {
		t.Helper()
		ids := make(chan string, 1)
		sys.Submit(&SubmitOperation{Spec: &pb.OperationSpec{Pool: pool, Tasks: []*pb.TaskSpec{{
			Name: "t", JobCount: jobs, JobResources: &pb.Resources{Cpu: cpu},
			Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(time.Hour)},
		}}}, Reply: func(r *pb.StartOperationResponse, e *pb.Error) {
			if e != nil {
				t.Errorf("submit to %s: %v", pool, e)
			}
			ids <- r.GetOperationId()
		}})
		return await(t, ids, "submission")
	}
	answers := make(chan hbAnswer, 1)
	seq := uint64(0)
	beat := func(running, finished []string) *pb.HeartbeatResponse {
		t.Helper()
		seq++
		hb := &pb.Heartbeat{NodeId: "n1", Incarnation: "i1", Sequence: seq, ResourceLimits: &pb.Resources{Cpu: 2}}
		for _, id := range running {
			hb.RunningJobs = append(hb.RunningJobs, &pb.RunningJob{JobId: id})
		}
		for _, id := range finished {
			hb.FinishedJobs = append(hb.FinishedJobs, &pb.FinishedJob{JobId: id, State: pb.JobState_JOB_STATE_COMPLETED})
		}
		sys.Heartbeat(&NodeHeartbeat{Heartbeat: hb, Reply: func(r *pb.HeartbeatResponse, e *pb.Error) { answers <- hbAnswer{r, e} }})
		a := await(t, answers, "heartbeat answer")
		if a.err != nil {
			t.Fatalf("heartbeat %d: %v", seq, a.err)
		}
		return a.resp
	}

	other := submit("other", 4, 1)
	var running []string
	testutil.WaitFor(t, 10*time.Second, "two one-core jobs of the other pool to start", func() bool {
		for _, j := range beat(running, nil).GetJobsToStart() {
			running = append(running, j.GetJobId())
		}
		return len(running) == 2
	})
	starving := submit("guaranteed", 1, 2)
	var victims []string
	testutil.WaitFor(t, 10*time.Second, "the starving operation to have both jobs interrupted", func() bool {
		clock.advance(50 * time.Millisecond)
		for _, in := range beat(running, nil).GetJobsToInterrupt() {
			if !slices.Contains(victims, in.GetJobId()) {
				victims = append(victims, in.GetJobId())
			}
		}
		return len(victims) == 2
	})
	// The first victim exits: its core is kept for the starving job.
	running = slices.DeleteFunc(running, func(id string) bool { return id == victims[0] })
	resp := beat(running, victims[:1])
	if got := resp.GetJobsToStart(); len(got) != 0 {
		t.Fatalf("with one victim gone, the node starts %v; want nothing (the freed core is reserved)", jobOps(got))
	}
	resp = beat(running, nil)
	if got := resp.GetJobsToStart(); len(got) != 0 {
		t.Fatalf("on the next heartbeat the node starts %v; want nothing", jobOps(got))
	}
	// The second exits: the starving job starts in their place.
	resp = beat(nil, victims[1:])
	got := resp.GetJobsToStart()
	if len(got) != 1 || got[0].GetOperationId() != starving {
		t.Fatalf("with both victims gone, the node starts %v; want one job of %s (not %s)", jobOps(got), starving, other)
	}
}

func jobOps(js []*pb.JobSpec) []string {
	out := []string{}
	for _, j := range js {
		out = append(out, j.GetOperationId()+"/"+j.GetJobId())
	}
	return out
}
