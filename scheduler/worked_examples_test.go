package scheduler

import (
	"math"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

func res(slots, cpu, mem float64) Resources {
	return Resources{UserSlots: slots, CPU: cpu, Memory: mem}
}

func guarantee(cpu float64) PartialResources { return PartialResources{}.With(CPU, cpu) }

func approxShare(t *testing.T, what string, got Share, want Share, tol float64) {
	t.Helper()
	for r := range got {
		if math.Abs(got[r]-want[r]) > tol {
			t.Errorf("%s = %v, want %v", what, got, want)
			return
		}
	}
}

func mustUpdate(t *testing.T, snap *Snapshot, prev *State) *Result {
	t.Helper()
	r, err := Update(snap, prev)
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	return r
}

func fs(t *testing.T, r *Result, name string) Share {
	t.Helper()
	e, ok := r.Element(name)
	if !ok {
		t.Fatalf("no element %q", name)
	}
	return e.FairShare.Total
}

// The reference's worked examples on 100 cpu / 100 slots / 1000 MB.
func TestWorkedExamples(t *testing.T) {
	total := res(100, 100, 1000)
	t.Run("one op saturating memory", func(t *testing.T) {
		snap := &Snapshot{Cluster: Cluster{Total: total}, Tree: DefaultTreeConfig(),
			Operations: []Operation{{ID: "op", Demand: res(200, 200, 4000)}}}
		r := mustUpdate(t, snap, nil)
		approxShare(t, "op", fs(t, r, "op"), Share{0.5, 0.5, 0, 1, 0}, 1e-9)
	})
	t.Run("two complementary ops", func(t *testing.T) {
		snap := &Snapshot{Cluster: Cluster{Total: total}, Tree: DefaultTreeConfig(),
			Pools: []PoolConfig{{Name: "P"}},
			Operations: []Operation{
				{ID: "a", Pool: "P", Demand: res(100, 100, 2000)},
				{ID: "b", Pool: "P", Demand: res(100, 200, 1000)},
			}}
		r := mustUpdate(t, snap, nil)
		approxShare(t, "a", fs(t, r, "a"), Share{1. / 3, 1. / 3, 0, 2. / 3, 0}, 1e-9)
		approxShare(t, "b", fs(t, r, "b"), Share{1. / 3, 2. / 3, 0, 1. / 3, 0}, 1e-9)
	})
	t.Run("guarantees add", func(t *testing.T) {
		big := res(100, 100, 1000)
		snap := &Snapshot{Cluster: Cluster{Total: total}, Tree: DefaultTreeConfig(),
			Pools: []PoolConfig{
				{Name: "A", StrongGuaranteeResources: guarantee(30)},
				{Name: "A1", Parent: "A", StrongGuaranteeResources: guarantee(10)},
				{Name: "A2", Parent: "A"},
				{Name: "A3", Parent: "A"},
				{Name: "B", StrongGuaranteeResources: guarantee(30)},
			},
			Operations: []Operation{
				{ID: "a1", Pool: "A1", Demand: big},
				{ID: "a2", Pool: "A2", Demand: big},
				{ID: "a3", Pool: "A3", Demand: res(2, 2, 20)},
				{ID: "b", Pool: "B", Demand: big},
			}}
		r := mustUpdate(t, snap, nil)
		approxShare(t, "A", fs(t, r, "A"), Share{0.5, 0.5, 0, 0.5, 0}, 1e-9)
		approxShare(t, "B", fs(t, r, "B"), Share{0.5, 0.5, 0, 0.5, 0}, 1e-9)
		approxShare(t, "A1", fs(t, r, "A1"), Share{0.29, 0.29, 0, 0.29, 0}, 1e-9)
		approxShare(t, "A2", fs(t, r, "A2"), Share{0.19, 0.19, 0, 0.19, 0}, 1e-9)
		approxShare(t, "A3", fs(t, r, "A3"), Share{0.02, 0.02, 0, 0.02, 0}, 1e-9)
	})
	_ = time.Second
	_ = ptr[int]
}

// A resource whose whole demand is exactly the cluster stops the whole
// tree where it runs out, as a short one does: the root's F is flat at the
// cluster's level from there on, and the reference takes the left end of
// that piece (§5.5; subtlety 3, left-continuity at saturated resources).
// Two gpu operations of 4 gpus each on 8 gpus run out at suggestion 0.5, so
// the cpu operation gets 0.5 of the cpu, not its 0.6, although the cluster
// has room for it; with 0.001 gpu less demand the gpu never runs out and it
// gets its 0.6; with 0.001 more the gpu is short and it gets 0.5 again.
func TestSaturatedResourceStopsTheRoot(t *testing.T) {
	for _, tc := range []struct {
		name    string
		secondG float64
		wantCPU float64
	}{
		{"gpu demand exactly the cluster", 4, 0.5},
		{"gpu demand just below the cluster", 3.999, 0.6},
		{"gpu demand just above the cluster", 4.001, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := &Snapshot{
				Cluster: Cluster{Total: Resources{UserSlots: 100, CPU: 100, GPU: 8, Memory: 100}},
				Tree:    DefaultTreeConfig(),
				Operations: []Operation{
					{ID: "g1", Demand: Resources{UserSlots: 1, CPU: 1, GPU: 4}},
					{ID: "g2", Demand: Resources{UserSlots: 1, CPU: 1, GPU: tc.secondG}},
					{ID: "c", Demand: Resources{UserSlots: 1, CPU: 60}},
				},
			}
			r := mustUpdate(t, snap, nil)
			got := fs(t, r, "c")
			approxShare(t, "c", got, Share{tc.wantCPU / 60, tc.wantCPU, 0, 0, 0}, 1e-12)
		})
	}
}
