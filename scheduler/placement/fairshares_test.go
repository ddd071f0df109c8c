package placement

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
)

// ResolveFairShares then ApplyFairShares sets the same fair shares and
// weights as SetFairShares, also when operations and pools were added or
// removed between the two (the lookups are made again), and the result is
// not kept.
func TestResolveThenApplyIsSetFairShares(t *testing.T) {
	total := res(100, 100, 1000)
	pools := []PoolSpec{{Name: "a"}, {Name: "b"}}
	build := func() *Placement {
		return mustBuild(t, total, pools, op("o1", "a", 1, 2, res(1, 1, 1)), op("o2", "b", 2, 2, res(1, 1, 1)))
	}
	result := fairResult(map[string]scheduler.Share{"a": uniform(0.5), "b": uniform(0.25), "c": uniform(0.125)},
		map[string]scheduler.Share{"o1": uniform(0.4), "o2": uniform(0.2), "o3": uniform(0.1)})
	result.Elements[len(result.Elements)-1].Weight = 3 // o3's effective weight

	state := func(p *Placement) map[string][2]any {
		out := map[string][2]any{"<Root>": {p.root.fair, p.root.weight}}
		for _, e := range p.poolList {
			out["pool "+e.name] = [2]any{e.fair, e.weight}
		}
		for _, e := range p.opList {
			out["op "+e.name] = [2]any{e.fair, e.weight}
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		between func(*Placement) // what changes between Resolve and Apply
	}{
		{"nothing in between", func(*Placement) {}},
		{"an operation added", func(p *Placement) {
			if err := p.AddOperation(op("o3", "a", 3, 1, res(1, 1, 1))); err != nil {
				t.Fatal(err)
			}
		}},
		{"an operation removed", func(p *Placement) { p.RemoveOperation("o2") }},
		{"the pools replaced", func(p *Placement) {
			if err := p.SetPools([]PoolSpec{{Name: "a"}, {Name: "b"}, {Name: "c"}}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			split, whole := build(), build()
			var fs FairShares
			split.ResolveFairShares(result, &fs)
			tc.between(split)
			split.ApplyFairShares(&fs)
			tc.between(whole)
			whole.SetFairShares(result)
			if diff := cmp.Diff(state(whole), state(split)); diff != "" {
				t.Errorf("fair shares and weights (-SetFairShares +Resolve, Apply):\n%s", diff)
			}
			if fs.res != nil {
				t.Error("FairShares still refers to the Result after ApplyFairShares")
			}
		})
	}
}
