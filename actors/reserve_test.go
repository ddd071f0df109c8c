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

// preemptHarness is a tree with a "guaranteed" pool (2 cores) and an
// "other" pool, driven by heartbeats and a fake clock.
type preemptHarness struct {
	t     *testing.T
	sys   *System
	clock *fakeClock
	seq   map[string]uint64
}

func newPreemptHarness(t *testing.T, rateLimit float64) *preemptHarness {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg := DefaultConfig()
	cfg.Now, cfg.RequestTimeout = clock.Now, 5*time.Second
	cfg.PreemptionRateLimit = rateLimit
	tc := scheduler.DefaultTreeConfig()
	tc.FairShareUpdatePeriod = 10 * time.Millisecond
	tc.FairShareStarvationTimeout, tc.FairShareAggressiveStarvationTimeout = 100*time.Millisecond, 100*time.Millisecond
	tc.PreemptiveSchedulingBackoff = 0
	tc.AllocationPreemptionTimeout = time.Minute
	tree := TreeSpec{Name: "physical", Config: tc, Pools: []scheduler.PoolConfig{
		{Name: "guaranteed", StrongGuaranteeResources: scheduler.PartialResources{}.With(scheduler.CPU, 2)},
		{Name: "other"},
	}}
	// nopSignals drops every job signal: interruptions reach the node
	// only in heartbeat responses, as when signals are lost.
	sys, err := Start(cfg, Deps{Events: nopEvents{}, Signals: nopSignals{}, Store: memStore{}, Epoch: 1}, []TreeSpec{tree}, "physical", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sys.Stop)
	return &preemptHarness{t: t, sys: sys, clock: clock, seq: map[string]uint64{}}
}

// submit submits jobs simulated jobs of cpu cores to pool.
func (h *preemptHarness) submit(pool string, jobs int32, cpu float64) string {
	h.t.Helper()
	ids := make(chan string, 1)
	h.sys.Submit(&SubmitOperation{Spec: &pb.OperationSpec{Pool: pool, Tasks: []*pb.TaskSpec{{
		Name: "t", JobCount: jobs, JobResources: &pb.Resources{Cpu: cpu},
		Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(time.Hour)},
	}}}, Reply: func(r *pb.StartOperationResponse, e *pb.Error) {
		if e != nil {
			h.t.Errorf("submit to %s: %v", pool, e)
		}
		ids <- r.GetOperationId()
	}})
	return await(h.t, ids, "submission")
}

// beat sends node's heartbeat (cpu cores, running and finished jobs) and
// returns the response.
func (h *preemptHarness) beat(node string, cpu float64, running, finished []string) *pb.HeartbeatResponse {
	h.t.Helper()
	h.seq[node]++
	hb := &pb.Heartbeat{NodeId: node, Incarnation: "i1", Sequence: h.seq[node], ResourceLimits: &pb.Resources{Cpu: cpu}}
	for _, id := range running {
		hb.RunningJobs = append(hb.RunningJobs, &pb.RunningJob{JobId: id})
	}
	for _, id := range finished {
		hb.FinishedJobs = append(hb.FinishedJobs, &pb.FinishedJob{JobId: id, State: pb.JobState_JOB_STATE_COMPLETED})
	}
	return heartbeat(h.t, h.sys, hb)
}

func interrupted(resp *pb.HeartbeatResponse) []string {
	out := []string{}
	for _, in := range resp.GetJobsToInterrupt() {
		out = append(out, in.GetJobId())
	}
	slices.Sort(out)
	return out
}

// A starving operation's job needs two cores, and preemption interrupts two
// one-core jobs for it. The victims leave one at a time: the core the first
// one frees must stay free (the interrupted operation's requeued job would
// take it, and the two-core job would never fit), and the job must start
// once the second has left.
func TestPreemptionReservesTheRoomItMakes(t *testing.T) {
	h := newPreemptHarness(t, 1)

	beat := func(running, finished []string) *pb.HeartbeatResponse {
		t.Helper()
		return h.beat("n1", 2, running, finished)
	}
	other := h.submit("other", 4, 1)
	var running []string
	testutil.WaitFor(t, 10*time.Second, "two one-core jobs of the other pool to start", func() bool {
		for _, j := range beat(running, nil).GetJobsToStart() {
			running = append(running, j.GetJobId())
		}
		return len(running) == 2
	})
	starving := h.submit("guaranteed", 1, 2)
	var victims []string
	testutil.WaitFor(t, 10*time.Second, "the starving operation to have both jobs interrupted", func() bool {
		h.clock.advance(50 * time.Millisecond)
		for _, in := range beat(running, nil).GetJobsToInterrupt() {
			if !slices.Contains(victims, in.GetJobId()) {
				victims = append(victims, in.GetJobId())
			}
		}
		return len(victims) == 2
	})
	slices.Sort(victims)
	// The interruption is repeated in every response until the job leaves
	// (the signal may have been lost; here every signal is).
	if got := interrupted(beat(running, nil)); !slices.Equal(got, victims) {
		t.Fatalf("the next response interrupts %v, want %v again", got, victims)
	}
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
	if got := interrupted(resp); !slices.Equal(got, victims[1:]) {
		t.Fatalf("with one victim gone, the response interrupts %v; want %v", got, victims[1:])
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

// The tree's preemption rate limit: at one job per second, a starving
// operation that needs a core on each of two nodes has one node's job
// interrupted at once and the other's only after a second, however often
// the other node heartbeats meanwhile.
func TestPreemptionRateLimit(t *testing.T) {
	h := newPreemptHarness(t, 1)
	h.submit("other", 2, 1)
	running := map[string][]string{}
	testutil.WaitFor(t, 10*time.Second, "one job of the other pool on each node", func() bool {
		for _, n := range []string{"n1", "n2"} {
			for _, j := range h.beat(n, 1, running[n], nil).GetJobsToStart() {
				running[n] = append(running[n], j.GetJobId())
			}
		}
		return len(running["n1"]) == 1 && len(running["n2"]) == 1
	})
	h.submit("guaranteed", 2, 1)
	first, second := "", ""
	testutil.WaitFor(t, 10*time.Second, "a first interruption", func() bool {
		h.clock.advance(50 * time.Millisecond)
		for _, n := range []string{"n1", "n2"} {
			if len(interrupted(h.beat(n, 1, running[n], nil))) > 0 {
				first = n
				return true
			}
		}
		return false
	})
	second = map[string]string{"n1": "n2", "n2": "n1"}[first]
	for range 5 {
		if got := interrupted(h.beat(second, 1, running[second], nil)); len(got) != 0 {
			t.Fatalf("%s interrupted %v within the same second as %s's job (rate limit 1/s)", second, got, first)
		}
	}
	h.clock.advance(time.Second)
	testutil.WaitFor(t, 10*time.Second, "the second interruption a second later", func() bool {
		return len(interrupted(h.beat(second, 1, running[second], nil))) == 1
	})
}
