package preemption

import (
	"fmt"
	"testing"
	"time"

	"github.com/sharetree/sharetree/scheduler"
)

// TestEngineWorkloadProperties runs random workloads through the real
// engine and placement — pools with guarantees, operations arriving late
// and starving, jobs already leaving — builds each node's view with the
// adapter and checks every plan with checkPlan: no non-starving operation
// below its floor, the preempting operation's new job not preemptible by the
// engine's classification, victims eligible and sufficient.
func TestEngineWorkloadProperties(t *testing.T) {
	cases := uint64(1000)
	if testing.Short() {
		cases = 100
	}
	decisions := 0
	for seed := range cases {
		r := rng(seed)
		tree := scheduler.DefaultTreeConfig()
		tree.PreemptionSatisfactionThreshold = []float64{0.8, 1, 1.5}[r.IntN(3)]
		tree.AggressivePreemptionSatisfactionThreshold = tree.PreemptionSatisfactionThreshold * []float64{0, 0.2, 0.5}[r.IntN(3)]
		tree.EnableAggressiveStarvation = r.IntN(2) == 0
		tree.FairShareAggressiveStarvationTimeout = time.Minute
		if r.IntN(3) == 0 {
			tree.NonPreemptibleResourceUsageThreshold = scheduler.PartialResources{}.With(scheduler.UserSlots, float64(1+r.IntN(4)))
		}
		g0 := []float64{0, 3, 6}[r.IntN(3)]
		pools := []scheduler.PoolConfig{{Name: "p0"}, {Name: "p1"}, {Name: "p2", Parent: "p0"}}
		if g0 > 0 {
			pools[0] = guaranteed("p0", g0)
			if r.IntN(2) == 0 {
				pools[2] = guaranteed("p2", g0/3)
				pools[2].Parent = "p0"
			}
		}
		h := newHarness(t, tree, pools)
		poolNames := []string{"p0", "p1", "p2", ""}
		n := 0
		addOps := func(k int) {
			for range k {
				shape := unit.Scale(float64(1 + r.IntN(2)))
				h.addShaped(fmt.Sprintf("op%d", n), poolNames[r.IntN(4)], 1+r.IntN(10), shape, Mode(r.IntN(5)/4))
				n++
			}
		}
		addOps(2 + r.IntN(2))
		h.update(0)
		h.fill()
		addOps(1 + r.IntN(3))
		h.update(time.Second)
		h.fill()
		h.update([]time.Duration{31 * time.Second, 61 * time.Second}[r.IntN(2)])
		// Some running jobs are already leaving.
		for _, u := range h.p.Operations() {
			for _, j := range h.p.RunningJobs(u.ID) {
				if r.IntN(8) == 0 {
					h.leaves[j.Key] = j.Resources
				}
			}
		}
		for _, node := range []scheduler.NodeID{"n1", "n2"} {
			src := h.source()
			src.MaxStarts = r.IntN(3)
			jobs := h.nodeJobs(node)
			v, err := src.PreemptionView(h.node(node), jobs)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			plan, err := Preempt(v)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			w := world{view: *v, opJobs: map[scheduler.OperationID][]scheduler.Job{}}
			for _, o := range v.Operations {
				for _, j := range h.p.RunningJobs(o.ID) {
					if _, out := h.leaves[j.Key]; !out {
						w.opJobs[o.ID] = append(w.opJobs[o.ID], scheduler.Job{Usage: j.Resources})
					}
				}
			}
			checkPlan(t, seed, w, plan)
			checkViewAgainstPlacement(t, seed, h, v)
			decisions += len(plan.Decisions)
		}
	}
	t.Logf("%d decisions", decisions)
	if decisions == 0 {
		t.Fatal("no workload led to a preemption")
	}
}

// checkViewAgainstPlacement: every operation's usage in the view is its
// placement usage minus its leaving jobs.
func checkViewAgainstPlacement(t *testing.T, seed uint64, h *harness, v *View) {
	t.Helper()
	for _, o := range v.Operations {
		u, ok := h.p.Operation(o.ID)
		if !ok {
			continue
		}
		want := u.Usage
		for _, j := range h.p.RunningJobs(o.ID) {
			if res, out := h.leaves[j.Key]; out {
				want = want.Sub(res)
			}
		}
		if o.Usage != want {
			t.Fatalf("seed %d: %s usage %s in the view, %s live without leaving jobs", seed, o.ID, o.Usage, want)
		}
		if o.Starvation != scheduler.NonStarving && len(o.Pools) > 0 {
			if _, known := h.p.PoolUsage(o.Pools[0]); !known {
				t.Fatalf("seed %d: %s's pool %s unknown", seed, o.ID, o.Pools[0])
			}
		}
	}
}
