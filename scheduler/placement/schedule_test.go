package placement

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sharetree/sharetree/scheduler"
)

// TestScheduleOrder covers which operation gets the next job: one step per
// Schedule call, with the expected operations of its assignments.
func TestScheduleOrder(t *testing.T) {
	unit := res(1, 1, 1)
	big := res(100, 100, 100)
	type step struct {
		free    scheduler.Resources
		maxJobs int
		want    []string
	}
	cases := []struct {
		name  string
		pools []PoolSpec
		ops   []OperationSpec
		adopt map[string]int
		fair  *scheduler.Result
		steps []step
	}{{
		name:  "lowest satisfaction first across pools",
		pools: []PoolSpec{{Name: "a"}, {Name: "b"}, {Name: "c"}},
		ops:   []OperationSpec{op("a1", "a", 1, 100, unit), op("b1", "b", 2, 100, unit), op("c1", "c", 3, 100, unit)},
		// Demands (1.0) exceed the fair shares, so satisfaction is
		// usage/fair: a 0.04/0.5 = 0.08, b 0.02/0.3 = 0.067, c 0.01/0.2 = 0.05.
		adopt: map[string]int{"a1": 4, "b1": 2, "c1": 1},
		fair:  fairResult(map[string]scheduler.Share{"a": uniform(0.5), "b": uniform(0.3), "c": uniform(0.2)}, nil),
		// c1 reaches 0.1, b1 0.1, then a1 (0.08) is the neediest.
		steps: []step{{big, 1, []string{"c1"}}, {big, 1, []string{"b1"}}, {big, 1, []string{"a1"}}},
	}, {
		name:  "the pool decides before the operation",
		pools: []PoolSpec{{Name: "x"}, {Name: "y"}},
		ops:   []OperationSpec{op("x1", "x", 1, 100, unit), op("x2", "x", 2, 100, unit), op("y1", "y", 3, 100, unit)},
		// x: 0.3/0.5 = 0.6 although x1 has satisfaction 0; y: 0.2/0.5 = 0.4.
		adopt: map[string]int{"x2": 30, "y1": 20},
		fair: fairResult(map[string]scheduler.Share{"x": uniform(0.5), "y": uniform(0.5)},
			map[string]scheduler.Share{"x1": uniform(0.4), "x2": uniform(0.1), "y1": uniform(0.5)}),
		steps: []step{{big, 1, []string{"y1"}}},
	}, {
		name:  "before fair shares: lowest dominant usage share",
		ops:   []OperationSpec{op("p", "", 1, 10, unit), op("q", "", 2, 10, res(1, 3, 1))},
		adopt: map[string]int{"p": 2, "q": 1}, // p 0.02, q 0.03 (cpu)
		steps: []step{{big, 1, []string{"p"}}, {big, 1, []string{"p"}}, {big, 1, []string{"q"}}},
	}, {
		name: "ties: higher weight, then lower order, then id",
		ops: []OperationSpec{
			{ID: "late", Order: 9, Weight: 1, Tasks: []TaskSpec{{JobCount: 1, JobResources: unit}}},
			{ID: "heavy", Order: 9, Weight: 2, Tasks: []TaskSpec{{JobCount: 1, JobResources: unit}}},
			{ID: "early", Order: 1, Tasks: []TaskSpec{{JobCount: 1, JobResources: unit}}},
			{ID: "a-late", Order: 9, Tasks: []TaskSpec{{JobCount: 1, JobResources: unit}}},
		},
		steps: []step{{big, 0, []string{"heavy", "early", "a-late", "late"}}},
	}, {
		name:  "the neediest does not fit: the next one is tried",
		pools: []PoolSpec{{Name: "a"}, {Name: "b"}},
		ops:   []OperationSpec{op("a1", "a", 1, 10, res(1, 8, 1)), op("b1", "b", 2, 10, unit)},
		adopt: map[string]int{"b1": 5},
		steps: []step{{res(10, 4, 10), 0, []string{"b1", "b1", "b1", "b1"}}, {res(1, 8, 1), 0, []string{"a1"}}},
	}, {
		name:  "fifo pool: submission order whatever the usage",
		pools: []PoolSpec{{Name: "f", Mode: scheduler.ModeFIFO}},
		ops:   []OperationSpec{op("third", "f", 3, 5, unit), op("first", "f", 1, 2, unit), op("second", "f", 2, 5, res(1, 5, 1))},
		adopt: map[string]int{"first": 1},
		// first has one job left; second's jobs need 5 cpu and do not fit
		// 3 cpu, so third comes next.
		steps: []step{{res(10, 3, 10), 0, []string{"first", "third", "third"}}, {res(10, 5, 10), 0, []string{"second"}}},
	}, {
		name:  "operation limits",
		ops:   []OperationSpec{withLimits(op("lim", "", 1, 10, unit), limits(map[scheduler.ResourceType]float64{scheduler.CPU: 2})), op("free", "", 2, 10, unit)},
		steps: []step{{res(5, 5, 5), 0, []string{"lim", "free", "lim", "free", "free"}}, {big, 2, []string{"free", "free"}}},
	}, {
		name: "pool limits",
		pools: []PoolSpec{
			{Name: "capped", ResourceLimits: limits(map[scheduler.ResourceType]float64{scheduler.UserSlots: 3})},
			{Name: "inner", Parent: "capped"},
		},
		ops:   []OperationSpec{op("c1", "inner", 1, 10, unit), op("c2", "capped", 2, 10, unit)},
		steps: []step{{big, 0, []string{"c1", "c2", "c1"}}, {big, 0, []string{}}},
	}, {
		name:  "nothing fits",
		ops:   []OperationSpec{op("a", "", 1, 3, res(1, 2, 1))},
		steps: []step{{res(1, 1.99, 1), 0, []string{}}, {scheduler.Resources{}, 0, []string{}}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := mustBuild(t, res(100, 100, 100), tc.pools, tc.ops...)
			for _, o := range tc.ops {
				adopt(t, p, string(o.ID), tc.adopt[string(o.ID)])
			}
			if tc.fair != nil {
				p.SetFairShares(tc.fair)
			}
			for i, s := range tc.steps {
				if diff := cmp.Diff(s.want, opsOf(p.Schedule("n", s.free, s.maxJobs))); diff != "" {
					t.Errorf("step %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

func withLimits(o OperationSpec, l scheduler.PartialResources) OperationSpec {
	o.ResourceLimits = l
	return o
}

// TestScheduleNothingFitsChangesNothing: a heartbeat that starts nothing
// leaves every observable unchanged.
func TestScheduleNothingFitsChangesNothing(t *testing.T) {
	p := mustBuild(t, res(10, 10, 10), []PoolSpec{{Name: "a"}}, op("a1", "a", 1, 3, res(1, 2, 1)), op("r", "", 2, 2, res(2, 1, 1)))
	adopt(t, p, "a1", 1)
	before, beforeOps, beforeJobs := p.Stats(), p.Operations(), p.RunningJobs("a1")
	if got := p.Schedule("n", res(1, 1, 5), 0); got != nil {
		t.Fatalf("Schedule = %v, want nil", got)
	}
	if diff := cmp.Diff(before, p.Stats()); diff != "" {
		t.Errorf("Stats changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(beforeOps, p.Operations()); diff != "" {
		t.Errorf("Operations changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(beforeJobs, p.RunningJobs("a1")); diff != "" {
		t.Errorf("RunningJobs changed (-before +after):\n%s", diff)
	}
}

// TestJobLifecycle covers JobFinished with and without requeue, Adopt and
// RunningJobs.
func TestJobLifecycle(t *testing.T) {
	job := res(1, 1, 1)
	p := mustBuild(t, res(10, 10, 10), nil, OperationSpec{ID: "o", Order: 1, Tasks: []TaskSpec{
		{Name: "map", JobCount: 3, JobResources: job}, {Name: "reduce", JobCount: 1, JobResources: res(1, 2, 1)},
	}})
	key := func(task, index int) JobKey { return JobKey{Operation: "o", Task: task, Index: index} }
	if !p.Adopt(key(0, 2), "n0") {
		t.Fatal("Adopt of a pending job refused")
	}
	if p.Adopt(key(0, 2), "n0") || p.Adopt(key(0, 3), "n0") || p.Adopt(key(2, 0), "n0") || p.Adopt(JobKey{Operation: "x"}, "n0") {
		t.Fatal("Adopt of a running, out-of-range or unknown job accepted")
	}
	got := p.Schedule("n1", res(10, 10, 10), 2)
	want := []Assignment{{Job: key(0, 0), Resources: job}, {Job: key(0, 1), Resources: job}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Schedule (-want +got):\n%s", diff)
	}
	wantRunning := []RunningJob{
		{Key: key(0, 2), Node: "n0", Resources: job, Seq: 1},
		{Key: key(0, 0), Node: "n1", Resources: job, Seq: 2},
		{Key: key(0, 1), Node: "n1", Resources: job, Seq: 3},
	}
	if diff := cmp.Diff(wantRunning, p.RunningJobs("o")); diff != "" {
		t.Fatalf("RunningJobs (-want +got):\n%s", diff)
	}
	// Done for good: not schedulable again.
	if !p.JobFinished(key(0, 2), false) || p.JobFinished(key(0, 2), false) {
		t.Fatal("JobFinished of a running job must succeed once")
	}
	// Requeued: a retry, started before the reduce task.
	if !p.JobFinished(key(0, 0), true) {
		t.Fatal("JobFinished refused")
	}
	if p.JobFinished(key(0, 0), true) {
		t.Fatal("JobFinished of a requeued (pending) job accepted")
	}
	got = p.Schedule("n2", res(10, 10, 10), 0)
	want = []Assignment{{Job: key(0, 0), Resources: job}, {Job: key(1, 0), Resources: res(1, 2, 1)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Schedule after requeue (-want +got):\n%s", diff)
	}
	wantStats := Stats{Operations: 1, RunningJobs: 3, Usage: res(3, 4, 3)}
	if diff := cmp.Diff(wantStats, p.Stats()); diff != "" {
		t.Fatalf("Stats (-want +got):\n%s", diff)
	}
	wantOps := []OperationUsage{{ID: "o", Order: 1, Usage: res(3, 4, 3), Demand: res(3, 4, 3), RunningJobCount: 3}}
	if diff := cmp.Diff(wantOps, p.Operations()); diff != "" {
		t.Fatalf("Operations (-want +got):\n%s", diff)
	}
}

// TestRemoveOperationReleasesUsage: the operation's usage and pending jobs
// leave its ancestors at once, and its jobs are forgotten.
func TestRemoveOperationReleasesUsage(t *testing.T) {
	p := mustBuild(t, res(10, 10, 10), []PoolSpec{{Name: "a", ResourceLimits: limits(map[scheduler.ResourceType]float64{scheduler.UserSlots: 2})}, {Name: "b", Parent: "a"}},
		op("big", "b", 1, 5, res(1, 1, 1)), op("small", "a", 2, 5, res(1, 1, 1)))
	if got := opsOf(p.Schedule("n", res(10, 10, 10), 0)); !cmp.Equal(got, []string{"big", "small"}) {
		t.Fatalf("Schedule = %v", got)
	}
	p.RemoveOperation("big")
	p.RemoveOperation("big") // unknown now: ignored
	if p.JobFinished(JobKey{Operation: "big"}, true) {
		t.Fatal("JobFinished of a removed operation accepted")
	}
	want := Stats{Pools: 2, Operations: 1, PendingJobs: 4, RunningJobs: 1, Usage: res(1, 1, 1), Pending: res(4, 4, 4)}
	if diff := cmp.Diff(want, p.Stats()); diff != "" {
		t.Fatalf("Stats (-want +got):\n%s", diff)
	}
	if got := p.pools["a"].usage; got != (vec{1, 100, 0, 1, 0}) {
		t.Fatalf("pool a usage %v", got)
	}
	if got := p.pools["b"].usage; got != (vec{}) {
		t.Fatalf("pool b usage %v", got)
	}
	// The room big held under a's limit is free again.
	if got := opsOf(p.Schedule("n", res(10, 10, 10), 0)); !cmp.Equal(got, []string{"small"}) {
		t.Fatalf("Schedule after remove = %v", got)
	}
}

// TestDeterminism: the same calls give the same assignments.
func TestDeterminism(t *testing.T) {
	run := func() [][]Assignment {
		p := benchPlacement(t, 50, 400, 3)
		var out [][]Assignment
		for i := range 300 {
			node := scheduler.NodeID(rune('a' + i%7))
			got := p.Schedule(node, res(8, 16, 64), 4)
			out = append(out, got)
			if i%3 == 0 && len(got) > 0 {
				p.JobFinished(got[0].Job, i%2 == 0)
			}
			if i == 100 {
				p.SetFairShares(benchResult(p))
			}
		}
		return out
	}
	first := run()
	for range 3 {
		if diff := cmp.Diff(first, run()); diff != "" {
			t.Fatalf("runs differ (-first +again):\n%s", diff)
		}
	}
}

// TestSetPools covers validation and restructuring with live operations.
func TestSetPools(t *testing.T) {
	p := mustBuild(t, res(10, 10, 10), []PoolSpec{{Name: "a"}, {Name: "b", Parent: "a"}}, op("o", "b", 1, 5, res(1, 1, 1)))
	p.Schedule("n", res(2, 2, 2), 0)
	bad := []struct {
		name  string
		pools []PoolSpec
		want  error
	}{
		{"unknown parent", []PoolSpec{{Name: "a"}, {Name: "b", Parent: "zz"}}, ErrInvalidPools},
		{"cycle", []PoolSpec{{Name: "a", Parent: "b"}, {Name: "b", Parent: "a"}}, ErrInvalidPools},
		{"self parent", []PoolSpec{{Name: "a", Parent: "a"}, {Name: "b"}}, ErrInvalidPools},
		{"duplicate", []PoolSpec{{Name: "a"}, {Name: "b"}, {Name: "a"}}, ErrInvalidPools},
		{"reserved", []PoolSpec{{Name: scheduler.RootID}, {Name: "b"}}, ErrInvalidPools},
		{"pool under fifo", []PoolSpec{{Name: "a", Mode: scheduler.ModeFIFO}, {Name: "b", Parent: "a"}}, ErrInvalidPools},
		{"negative limit", []PoolSpec{{Name: "a"}, {Name: "b", ResourceLimits: limits(map[scheduler.ResourceType]float64{scheduler.CPU: -1})}}, ErrInvalidPools},
		{"pool with operations dropped", []PoolSpec{{Name: "a"}}, ErrPoolInUse},
	}
	before := p.Stats()
	for _, tc := range bad {
		if err := p.SetPools(tc.pools); !errors.Is(err, tc.want) {
			t.Errorf("%s: SetPools = %v, want %v", tc.name, err, tc.want)
		}
	}
	if diff := cmp.Diff(before, p.Stats()); diff != "" {
		t.Fatalf("a refused SetPools changed state (-before +after):\n%s", diff)
	}
	// Move b to the root under a new limited pool c: usage follows.
	if err := p.SetPools([]PoolSpec{{Name: "c", ResourceLimits: limits(map[scheduler.ResourceType]float64{scheduler.UserSlots: 3})}, {Name: "b", Parent: "c"}}); err != nil {
		t.Fatal(err)
	}
	if got := p.pools["c"].usage; got != (vec{2, 200, 0, 2, 0}) {
		t.Fatalf("pool c usage %v", got)
	}
	if got := opsOf(p.Schedule("n", res(10, 10, 10), 0)); !cmp.Equal(got, []string{"o"}) {
		t.Fatalf("Schedule under c's limit = %v, want one job", got)
	}
}

// TestAddOperationErrors covers the validation of operations.
func TestAddOperationErrors(t *testing.T) {
	p := mustBuild(t, res(10, 10, 10), []PoolSpec{{Name: "a"}}, op("o", "a", 1, 1, res(1, 1, 1)))
	nan := res(1, 1, 1)
	nan[scheduler.GPU] = nan[scheduler.GPU] / 0 * 0
	cases := []struct {
		name string
		spec OperationSpec
		want error
	}{
		{"duplicate", op("o", "a", 2, 1, res(1, 1, 1)), ErrDuplicateOperation},
		{"unknown pool", op("x", "nope", 2, 1, res(1, 1, 1)), ErrUnknownPool},
		{"empty id", op("", "a", 2, 1, res(1, 1, 1)), ErrInvalidOperation},
		{"zero jobs", op("x", "a", 2, 0, res(1, 1, 1)), ErrInvalidOperation},
		{"negative resources", op("x", "a", 2, 1, res(1, -1, 1)), ErrInvalidOperation},
		{"NaN resources", op("x", "a", 2, 1, nan), ErrInvalidOperation},
		{"negative weight", OperationSpec{ID: "x", Weight: -1}, ErrInvalidOperation},
		{"NaN limit", withLimits(op("x", "a", 2, 1, res(1, 1, 1)), limits(map[scheduler.ResourceType]float64{scheduler.CPU: nan[scheduler.GPU]})), ErrInvalidOperation},
	}
	for _, tc := range cases {
		if err := p.AddOperation(tc.spec); !errors.Is(err, tc.want) {
			t.Errorf("%s: AddOperation = %v, want %v", tc.name, err, tc.want)
		}
	}
	if got := p.Stats().Operations; got != 1 {
		t.Fatalf("%d operations after refused adds", got)
	}
}
