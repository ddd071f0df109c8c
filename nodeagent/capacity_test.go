package nodeagent_test

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
)

// TestJobsBeyondTheNodesCapacityAreCountedAndObserved: the node has 8
// user slots and the scheduler starts nine one-slot jobs on it. The agent
// runs all nine (the scheduler accounts for them), counts the ninth in
// JobsOverCapacity, and tells OnJobStart about every start with what the
// node holds after it.
func TestJobsBeyondTheNodesCapacityAreCountedAndObserved(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	sched := newFakeScheduler(t, nc, "n")
	var specs []*pb.JobSpec
	for _, id := range []string{"j1", "j2", "j3", "j4", "j5", "j6", "j7", "j8", "j9"} {
		specs = append(specs, simJob(id, time.Hour))
	}
	sched.start(specs...)
	var (
		mu   sync.Mutex
		seen []nodeagent.JobStart
	)
	cfg := testConfig(t, "n")
	cfg.OnJobStart = func(s nodeagent.JobStart) {
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
	}
	a := startAgent(t, nc, cfg)
	st := waitStats(t, a, "nine jobs started", func(s nodeagent.Stats) bool { return s.JobsStarted == 9 })
	if st.JobsOverCapacity != 1 || st.RunningJobs != 9 {
		t.Fatalf("stats %+v: want nine running, one over capacity", st)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 9 {
		t.Fatalf("OnJobStart saw %d starts, want 9", len(seen))
	}
	last := seen[8]
	want := nodeagent.JobStart{
		ID: "j9", OperationID: "op1",
		Resources:    scheduler.Resources{scheduler.UserSlots: 1, scheduler.CPU: 2},
		Allocated:    scheduler.Resources{scheduler.UserSlots: 9, scheduler.CPU: 18},
		OverCapacity: true,
	}
	if diff := cmp.Diff(want, last); diff != "" {
		t.Errorf("the ninth start (-want +got):\n%s", diff)
	}
	for _, s := range seen[:8] {
		if s.OverCapacity {
			t.Errorf("start %s within the node's 8 slots reported over capacity (allocated %v)", s.ID, s.Allocated)
		}
	}
}

// TestReportedTimesComeFromTheAgentsClock: an agent whose clock is five
// minutes behind reports its jobs' start and finish times on that clock
// (the scheduler shows them and decides nothing by them), while its
// heartbeats, timed on the monotonic clock, go on at their period.
func TestReportedTimesComeFromTheAgentsClock(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	sched := newFakeScheduler(t, nc, "n")
	sched.start(simJob("j", 50*time.Millisecond))
	const skew = -5 * time.Minute
	cfg := testConfig(t, "n")
	cfg.Now = func() time.Time { return time.Now().Add(skew) }
	before := time.Now()
	startAgent(t, nc, cfg)
	f := sched.waitFinished(t, "j")
	after := time.Now()
	for _, c := range []struct {
		name string
		ts   time.Time
	}{{"start", f.GetStartTime().AsTime()}, {"finish", f.GetFinishTime().AsTime()}} {
		name, ts := c.name, c.ts
		if ts.Before(before.Add(skew)) || ts.After(after.Add(skew)) {
			t.Errorf("%s time %s, want on the agent's clock, within [%s, %s]", name, ts, before.Add(skew), after.Add(skew))
		}
	}
	n := sched.count()
	sched.waitBeat(t, n, "heartbeats going on", func(*pb.Heartbeat) bool { return true })
}
