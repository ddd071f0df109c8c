package preemption

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/placement"
)

// harness is a small live cluster: the engine's tree configuration and
// pools, a placement, and the latest result.
type harness struct {
	t      testing.TB
	tree   scheduler.TreeConfig
	pools  []scheduler.PoolConfig
	nodes  []scheduler.Node
	p      *placement.Placement
	now    time.Time
	state  scheduler.State
	res    *scheduler.Result
	order  uint64
	modes  map[scheduler.OperationID]Mode
	leaves map[placement.JobKey]scheduler.Resources
}

var unit = scheduler.Resources{scheduler.UserSlots: 1, scheduler.CPU: 1, scheduler.Memory: 10}

func newHarness(t testing.TB, tree scheduler.TreeConfig, pools []scheduler.PoolConfig) *harness {
	h := &harness{t: t, tree: tree, pools: pools, p: placement.New(), now: time.Unix(1_000_000, 0),
		modes: map[scheduler.OperationID]Mode{}, leaves: map[placement.JobKey]scheduler.Resources{}}
	for _, id := range []scheduler.NodeID{"n1", "n2"} {
		h.nodes = append(h.nodes, scheduler.Node{ID: id, Resources: unit.Scale(6)})
	}
	var specs []placement.PoolSpec
	for _, pc := range pools {
		specs = append(specs, placement.PoolSpec{Name: pc.Name, Parent: pc.Parent, Mode: pc.Mode})
	}
	if err := h.p.SetPools(specs); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) add(id, pool string, jobs int, mode Mode) { h.addShaped(id, pool, jobs, unit, mode) }

func (h *harness) addShaped(id, pool string, jobs int, res scheduler.Resources, mode Mode) {
	h.order++
	if err := h.p.AddOperation(placement.OperationSpec{ID: scheduler.OperationID(id), Pool: scheduler.PoolID(pool), Order: h.order,
		Tasks: []placement.TaskSpec{{Name: "t", JobCount: jobs, JobResources: res}}}); err != nil {
		h.t.Fatal(err)
	}
	h.modes[scheduler.OperationID(id)] = mode
}

// fill schedules every node as full as it goes.
func (h *harness) fill() {
	for _, n := range h.nodes {
		h.p.Schedule(n.ID, h.free(n.ID), 0)
	}
}

func (h *harness) total(node scheduler.NodeID) scheduler.Resources {
	for _, n := range h.nodes {
		if n.ID == node {
			return n.Resources
		}
	}
	return scheduler.Resources{}
}

func (h *harness) free(node scheduler.NodeID) scheduler.Resources {
	free := h.total(node)
	for _, j := range h.nodeJobs(node) {
		free = free.Sub(j.Resources)
	}
	return free
}

// update runs the engine after advancing the clock by d.
func (h *harness) update(d time.Duration) {
	h.now = h.now.Add(d)
	snap := &scheduler.Snapshot{Now: h.now, Cluster: scheduler.NewClusterFromNodes(h.nodes), Tree: h.tree, Pools: h.pools}
	for _, u := range h.p.Operations() {
		snap.Operations = append(snap.Operations, scheduler.Operation{ID: u.ID, Pool: u.Pool, StartTime: h.now.Add(time.Duration(u.Order)),
			Demand: u.Demand, Usage: u.Usage, JobResources: u.JobResources, PendingJobCount: u.PendingJobCount})
	}
	res, err := scheduler.Update(snap, &h.state)
	if err != nil {
		h.t.Fatal(err)
	}
	h.res, h.state = res, res.State
	h.p.SetTotal(res.Total)
	h.p.SetFairShares(res)
}

// nodeJobs lists the node's running jobs as the node actor knows them.
func (h *harness) nodeJobs(node scheduler.NodeID) []NodeJob {
	var out []NodeJob
	for _, u := range h.p.Operations() {
		for _, j := range h.p.RunningJobs(u.ID) {
			if j.Node == node {
				out = append(out, NodeJob{ID: JobID(jobName(j.Key)), Key: j.Key, Resources: j.Resources})
			}
		}
	}
	return out
}

func jobName(k placement.JobKey) string {
	return string(k.Operation) + "." + string(rune('a'+k.Task)) + "." + strconv.Itoa(k.Index)
}

func (h *harness) source() *Source {
	ts, err := NewTreeSettings(h.tree, h.pools)
	if err != nil {
		h.t.Fatal(err)
	}
	return &Source{Settings: ts, Result: h.res, Placement: h.p, Interrupting: h.leaves, Starving: StarvingOperations(h.res),
		Operation: func(id scheduler.OperationID) OperationSettings { return OperationSettings{Mode: h.modes[id]} }}
}

func (h *harness) node(id scheduler.NodeID) Node {
	return Node{ID: id, Total: h.total(id), Free: h.free(id)}
}

func (h *harness) preempt(node scheduler.NodeID) (Plan, *View) {
	v, err := h.source().PreemptionView(h.node(node), h.nodeJobs(node))
	if err != nil {
		h.t.Fatal(err)
	}
	plan, err := Preempt(v)
	if err != nil {
		h.t.Fatal(err)
	}
	return plan, v
}

func guaranteed(name string, cpu float64) scheduler.PoolConfig {
	return scheduler.PoolConfig{Name: scheduler.PoolID(name), StrongGuaranteeResources: scheduler.PartialResources{}.With(scheduler.CPU, cpu)}
}

// starvingScenario: batch's b fills both nodes; a arrives in prod, which is
// guaranteed half the cluster, and starves.
func starvingScenario(t *testing.T, tree scheduler.TreeConfig, starve time.Duration) *harness {
	h := newHarness(t, tree, []scheduler.PoolConfig{guaranteed("prod", 6), {Name: "batch"}})
	h.add("b", "batch", 12, ModeNormal)
	h.update(0)
	h.fill()
	h.add("a", "prod", 6, ModeNormal)
	h.update(time.Second)
	h.update(starve)
	return h
}

func TestAdapterStarvingGuaranteedPoolTakesBack(t *testing.T) {
	h := starvingScenario(t, scheduler.DefaultTreeConfig(), 31*time.Second)
	if e, _ := h.res.Element("a"); e.StarvationStatus != scheduler.Starving {
		t.Fatalf("a is %s, want starving", e.StarvationStatus)
	}
	// fill scheduled b's oldest six jobs on n1: with b at twice its fair
	// share, those are within it and not preemptible.
	if plan, _ := h.preempt("n1"); len(plan.Decisions) != 0 || plan.Refusals[0].Excluded.Class != 6 {
		t.Fatalf("n1 holds b's oldest jobs: want a refusal by class, got\n%s", plan.Explain())
	}
	plan, v := h.preempt("n2")
	if len(plan.Decisions) != 1 {
		t.Fatalf("want one decision, got\n%s", plan.Explain())
	}
	d := plan.Decisions[0]
	newest := slices.MaxFunc(v.Jobs, func(a, b Job) int { return int(a.Seq) - int(b.Seq) })
	if d.Operation != "a" || d.Start != unit || len(d.Victims) != 1 || d.Victims[0].Job != newest.ID {
		t.Fatalf("want b's newest job on n1 (%s) preempted for a, got\n%s", newest.ID, plan.Explain())
	}
	if r := d.Victims[0].Reason; r.Class != scheduler.Preemptible || r.VictimFloor != 1 || r.For != "a" {
		t.Errorf("reason %+v", r)
	}
	// The pools: prod guaranteed half the cluster, batch nothing.
	if len(v.Pools) != 2 || v.Pools[1].ID != "prod" || v.Pools[1].Guarantee[scheduler.CPU] != 0.5 {
		t.Errorf("pools %+v", v.Pools)
	}
}

// The non-preemptible usage threshold reaches the decision through the
// classification: a job is protected while the usage of b's jobs started
// before it is strictly below the threshold. b's newest job (on n2) started
// at 11 slots: 11 does not protect it, 12 does; a pool setting overrides the
// tree's.
func TestAdapterNonPreemptibleUsageThreshold(t *testing.T) {
	slots := func(n float64) scheduler.PartialResources {
		return scheduler.PartialResources{}.With(scheduler.UserSlots, n)
	}
	cases := map[string]struct {
		tree, batch  *scheduler.PartialResources
		wantDecision bool
	}{
		"no threshold":                  {wantDecision: true},
		"tree 11 slots":                 {tree: new(slots(11)), wantDecision: true},
		"tree 12 slots":                 {tree: new(slots(12)), wantDecision: false},
		"tree 12, batch pool overrides": {tree: new(slots(12)), batch: new(scheduler.PartialResources{}), wantDecision: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tree := scheduler.DefaultTreeConfig()
			if tc.tree != nil {
				tree.NonPreemptibleResourceUsageThreshold = *tc.tree
			}
			h := starvingScenario(t, tree, 31*time.Second)
			if tc.batch != nil {
				h.pools[1].NonPreemptibleResourceUsageThreshold = tc.batch
			}
			plan, _ := h.preempt("n2")
			if got := len(plan.Decisions) == 1; got != tc.wantDecision {
				t.Fatalf("decision %v, want %v:\n%s", got, tc.wantDecision, plan.Explain())
			}
			if !tc.wantDecision && plan.Refusals[0].Excluded.Class != 6 {
				t.Errorf("want the six jobs excluded by class, got %+v", plan.Refusals[0])
			}
		})
	}
}

// The aggressive threshold reaches the decision too. With a preemption
// threshold of 2.1, b (usage = 2 × fair share) has no preemptible job, so a
// starving a gets nothing. n2 holds b's newest six jobs, started when b
// already used 6/12 .. 11/12 of the cluster: with an aggressive threshold of
// 0.2 (bound 0.1) or 1.8 (bound 0.9) the newest is aggressively preemptible
// and an aggressively starving a takes it; with 1.9 (bound 0.95) every job is
// non-preemptible.
func TestAdapterAggressiveThreshold(t *testing.T) {
	cases := map[string]struct {
		aggressive   float64
		starve       time.Duration
		wantStatus   scheduler.StarvationStatus
		wantDecision bool
	}{
		"starving, aggressive 0.2":              {aggressive: 0.2, starve: 31 * time.Second, wantStatus: scheduler.Starving},
		"aggressively starving, aggressive 0.2": {aggressive: 0.2, starve: 61 * time.Second, wantStatus: scheduler.AggressivelyStarving, wantDecision: true},
		"aggressively starving, aggressive 1.8": {aggressive: 1.8, starve: 61 * time.Second, wantStatus: scheduler.AggressivelyStarving, wantDecision: true},
		"aggressively starving, aggressive 1.9": {aggressive: 1.9, starve: 61 * time.Second, wantStatus: scheduler.AggressivelyStarving},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tree := scheduler.DefaultTreeConfig()
			tree.EnableAggressiveStarvation = true
			tree.FairShareAggressiveStarvationTimeout = time.Minute
			tree.PreemptionSatisfactionThreshold = 2.1
			tree.AggressivePreemptionSatisfactionThreshold = tc.aggressive
			h := starvingScenario(t, tree, tc.starve)
			if e, _ := h.res.Element("a"); e.StarvationStatus != tc.wantStatus {
				t.Fatalf("a is %s, want %s", e.StarvationStatus, tc.wantStatus)
			}
			plan, v := h.preempt("n2")
			if got := len(plan.Decisions) == 1; got != tc.wantDecision {
				t.Fatalf("decision %v, want %v:\n%s", got, tc.wantDecision, plan.Explain())
			}
			newest := slices.MaxFunc(v.Jobs, func(a, b Job) int { return int(a.Seq) - int(b.Seq) })
			if tc.wantDecision && plan.Decisions[0].Victims[0].Job != newest.ID {
				t.Errorf("want b's newest job %s taken, got\n%s", newest.ID, plan.Explain())
			}
			if tc.wantDecision && plan.Decisions[0].Victims[0].Reason.VictimFloor != tc.aggressive {
				t.Errorf("victim floor %g, want the aggressive threshold", plan.Decisions[0].Victims[0].Reason.VictimFloor)
			}
		})
	}
}

// A graceful operation scales down to its fair share when a heavy
// operation arrives in its pool; an interruption recorded on one node keeps
// the next node from interrupting the same excess again.
func TestAdapterGracefulAcrossNodes(t *testing.T) {
	h := newHarness(t, scheduler.DefaultTreeConfig(), []scheduler.PoolConfig{{Name: "shared"}})
	h.add("clique", "shared", 12, ModeGraceful)
	h.update(0)
	h.fill()
	h.add("heavy", "shared", 12, ModeNormal)
	h.update(time.Second)
	if e, _ := h.res.Element("clique"); e.FairShare.Total[scheduler.CPU] != 0.5 {
		t.Fatalf("clique fair share %v, want half", e.FairShare.Total)
	}
	src := h.source()
	v1, err := src.GracefulView(h.node("n1"), h.nodeJobs("n1"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := Graceful(v1)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 6 {
		t.Fatalf("n1: want its 6 clique jobs interrupted, got %d", len(first))
	}
	for _, g := range first {
		for _, nj := range h.nodeJobs("n1") {
			if nj.ID == g.Job {
				h.leaves[nj.Key] = nj.Resources
			}
		}
	}
	v2, err := src.GracefulView(h.node("n2"), h.nodeJobs("n2"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := Graceful(v2)
	if err != nil {
		t.Fatal(err)
	}
	if len(second) != 0 {
		t.Fatalf("n2: the excess is already leaving from n1, got %d more interruptions", len(second))
	}
	// The jobs leaving on n1 are marked interrupting there.
	v1, _ = src.GracefulView(h.node("n1"), h.nodeJobs("n1"))
	for _, j := range v1.Jobs {
		if !j.Interrupting {
			t.Errorf("job %s not marked interrupting", j.ID)
		}
	}
}

func TestAdapterRejectsIncompleteSources(t *testing.T) {
	ts, err := NewTreeSettings(scheduler.DefaultTreeConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Source{
		"no settings":  {Result: &scheduler.Result{}, Placement: placement.New()},
		"no result":    {Settings: ts, Placement: placement.New()},
		"no placement": {Settings: ts, Result: &scheduler.Result{}},
	} {
		if _, err := s.PreemptionView(Node{}, nil); !errors.Is(err, ErrInvalidSource) {
			t.Errorf("%s: PreemptionView: %v", name, err)
		}
		if _, err := s.GracefulView(Node{}, nil); !errors.Is(err, ErrInvalidSource) {
			t.Errorf("%s: GracefulView: %v", name, err)
		}
	}
	bad := scheduler.DefaultTreeConfig()
	bad.AggressivePreemptionSatisfactionThreshold = 2
	if _, err := NewTreeSettings(bad, nil); !errors.Is(err, ErrInvalidSource) || !errors.Is(err, scheduler.ErrInvalidConfig) {
		t.Errorf("invalid tree: %v", err)
	}
	if _, err := NewTreeSettings(scheduler.DefaultTreeConfig(), []scheduler.PoolConfig{{Name: "a", Parent: "b"}}); !errors.Is(err, ErrInvalidSource) {
		t.Errorf("unknown parent: %v", err)
	}
	if _, err := NewTreeSettings(scheduler.DefaultTreeConfig(), []scheduler.PoolConfig{{Name: "a", Parent: "b"}, {Name: "b", Parent: "a"}}); !errors.Is(err, ErrInvalidSource) {
		t.Errorf("cycle: %v", err)
	}
}

// A view built with a kept SumLeaving is the view built by summing
// Interrupting again: operations' and pools' usage without the leaving
// jobs, bit for bit.
func TestAdapterKeptLeavingGivesTheSameViews(t *testing.T) {
	h := starvingScenario(t, scheduler.DefaultTreeConfig(), 31*time.Second)
	h.modes["b"] = ModeGraceful
	// Some of b's jobs, on both nodes, are leaving.
	for _, node := range []scheduler.NodeID{"n1", "n2"} {
		for i, nj := range h.nodeJobs(node) {
			if i%2 == 0 {
				h.leaves[nj.Key] = nj.Resources.Scale(0.5 + float64(i)/10)
			}
		}
	}
	if len(h.leaves) == 0 {
		t.Fatal("no leaving jobs: the scenario tests nothing")
	}
	summed := h.source()
	kept := h.source()
	kept.Leaving = SumLeaving(h.leaves)
	none := h.source()
	none.Interrupting = nil
	for _, node := range []scheduler.NodeID{"n1", "n2"} {
		views := func(s *Source) (*View, *View) {
			pv, err := s.PreemptionView(h.node(node), h.nodeJobs(node))
			if err != nil {
				t.Fatal(err)
			}
			gv, err := s.GracefulView(h.node(node), h.nodeJobs(node))
			if err != nil {
				t.Fatal(err)
			}
			return pv, gv
		}
		wantP, wantG := views(summed)
		gotP, gotG := views(kept)
		if d := cmp.Diff(wantP, gotP); d != "" {
			t.Errorf("%s: preemption view with the kept sums differs (-summed +kept):\n%s", node, d)
		}
		if d := cmp.Diff(wantG, gotG); d != "" {
			t.Errorf("%s: graceful view with the kept sums differs (-summed +kept):\n%s", node, d)
		}
		if noneP, noneG := views(none); cmp.Equal(noneP, wantP) || cmp.Equal(noneG, wantG) {
			t.Errorf("%s: the leaving jobs change no view: the test compares nothing", node)
		}
	}
}
