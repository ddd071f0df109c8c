package placement

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/sharetree/sharetree/scheduler"
)

// collect brings c up to date and fails unless it equals Operations at the
// collect. between runs after the collect and before the merge (a
// caller's lock released): it must not change the copy.
func collect(t fatalf, p *Placement, c *OperationsCopy, between func()) {
	t.Helper()
	want := p.Operations()
	p.CollectOperations(c)
	between()
	if d := cmp.Diff(want, c.Operations(), cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("copy (-Operations +OperationsCopy):\n%s", d)
	}
}

// The copy follows job starts and ends, requeues, adoptions, forgotten
// jobs, operations added, removed (also re-added under the same id and
// order), moved and updated, pool changes, and several copies in turn.
func TestOperationsCopy(t *testing.T) {
	pools := []PoolSpec{{Name: "a"}, {Name: "b"}}
	build := func(t *testing.T) *Placement {
		return mustBuild(t, res(10, 10, 10), pools,
			op("o1", "a", 1, 3, res(1, 1, 1)), op("o2", "b", 2, 3, res(1, 2, 1)), op("o3", "", 3, 2, res(1, 1, 2)))
	}
	nothing := func(*testing.T, *Placement) {}
	for _, tc := range []struct {
		name   string
		change func(*testing.T, *Placement)
	}{
		{"nothing", nothing},
		{"jobs start", func(_ *testing.T, p *Placement) { p.Schedule("n", res(4, 4, 4), 0) }},
		{"jobs end", func(_ *testing.T, p *Placement) {
			p.JobFinished(JobKey{Operation: "o1", Index: 0}, false)
			p.JobFinished(JobKey{Operation: "o2", Index: 0}, true)
		}},
		{"an adoption and a forgotten job", func(_ *testing.T, p *Placement) {
			p.Adopt(JobKey{Operation: "o3", Index: 1}, "m")
			p.Forget(JobKey{Operation: "o1", Index: 2})
		}},
		{"an operation added", func(t *testing.T, p *Placement) {
			if err := p.AddOperation(op("o0", "b", 0, 1, res(1, 1, 1))); err != nil {
				t.Fatal(err)
			}
		}},
		{"an operation removed", func(_ *testing.T, p *Placement) { p.RemoveOperation("o2") }},
		{"an operation removed and re-added", func(t *testing.T, p *Placement) {
			p.RemoveOperation("o2")
			if err := p.AddOperation(op("o2", "a", 2, 5, res(2, 1, 1))); err != nil {
				t.Fatal(err)
			}
		}},
		{"an operation added and removed", func(t *testing.T, p *Placement) {
			if err := p.AddOperation(op("o4", "a", 4, 1, res(1, 1, 1))); err != nil {
				t.Fatal(err)
			}
			p.RemoveOperation("o4")
		}},
		{"an operation moved and updated", func(t *testing.T, p *Placement) {
			if err := p.MoveOperation("o1", "b"); err != nil {
				t.Fatal(err)
			}
			if err := p.UpdateOperation("o3", 2, scheduler.PartialResources{}); err != nil {
				t.Fatal(err)
			}
		}},
		{"the pools replaced", func(t *testing.T, p *Placement) {
			if err := p.SetPools([]PoolSpec{{Name: "a"}, {Name: "b", Parent: "a"}}); err != nil {
				t.Fatal(err)
			}
		}},
		{"more changes than the copy follows", func(t *testing.T, p *Placement) {
			for i := range 600 {
				if err := p.AddOperation(op(fmt.Sprintf("x%d", i), "a", 10, 1, res(1, 1, 1))); err != nil {
					t.Fatal(err)
				}
			}
			p.Schedule("n", res(4, 4, 4), 0)
			p.RemoveOperation("x7")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := build(t)
			var c OperationsCopy
			p.Schedule("n0", res(2, 2, 2), 0)
			collect(t, p, &c, func() {})
			// The change between the collect and the merge (the copy
			// keeps the state at the collect), then in the next collect.
			collect(t, p, &c, func() { tc.change(t, p) })
			collect(t, p, &c, func() {})
			// Another copy takes over, then the first one again.
			var other OperationsCopy
			collect(t, p, &other, func() {})
			p.Schedule("n1", res(2, 2, 2), 0)
			collect(t, p, &c, func() {})
			p.Schedule("n2", res(2, 2, 2), 0)
			collect(t, p, &other, func() {})
			collect(t, p, &c, func() {})
		})
	}
}

// Random sequences of job starts, ends, adoptions and claims, operations
// added, removed (and re-added under the same id), moved and updated, and
// pool changes, collected at random points into one copy or another,
// always give the copy Operations gives.
func TestOperationsCopyProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pools := []PoolSpec{{Name: "a"}, {Name: "b"}, {Name: "a1", Parent: "a"}}
		p := New()
		p.SetTotal(res(20, 40, 100))
		if err := p.SetPools(pools); err != nil {
			t.Fatal(err)
		}
		claims := newTestClaims()
		var copies [2]OperationsCopy
		specs := map[scheduler.OperationID]OperationSpec{}
		var live []scheduler.OperationID
		addOp := func(spec OperationSpec) {
			if err := p.AddOperation(spec); err != nil {
				t.Fatal(err)
			}
			specs[spec.ID] = spec
			live = append(live, spec.ID)
		}
		next := 0
		newOp := func() {
			spec := OperationSpec{ID: scheduler.OperationID(fmt.Sprintf("op%d", next)), Order: uint64(rapid.IntRange(0, 5).Draw(t, "order"))}
			next++
			if pick := rapid.IntRange(0, len(pools)).Draw(t, "pool"); pick < len(pools) {
				spec.Pool = pools[pick].Name
			}
			for range rapid.IntRange(1, 2).Draw(t, "tasks") {
				spec.Tasks = append(spec.Tasks, TaskSpec{JobCount: rapid.IntRange(1, 4).Draw(t, "jobs"), JobResources: genJob(t, "job")})
			}
			if rapid.IntRange(0, 3).Draw(t, "claimed") == 0 {
				spec.Claims = claimView{claims, 0}
			}
			addOp(spec)
		}
		pickOp := func(label string) (scheduler.OperationID, bool) {
			if len(live) == 0 {
				return "", false
			}
			return live[rapid.IntRange(0, len(live)-1).Draw(t, label)], true
		}
		// step is one random change.
		var step func()
		step = func() {
			switch rapid.IntRange(0, 8).Draw(t, "action") {
			case 0, 1:
				free := res(float64(rapid.IntRange(0, 6).Draw(t, "freeSlots")), float64(rapid.IntRange(0, 800).Draw(t, "freeCPU"))/100,
					float64(rapid.IntRange(0, 64).Draw(t, "freeMem")))
				p.Schedule("n", free, rapid.IntRange(0, 4).Draw(t, "maxJobs"))
			case 2:
				if id, ok := pickOp("finishOp"); ok {
					if running := p.RunningJobs(id); len(running) > 0 {
						key := running[rapid.IntRange(0, len(running)-1).Draw(t, "finishJob")].Key
						p.JobFinished(key, rapid.Bool().Draw(t, "requeue"))
					}
				}
			case 3:
				if id, ok := pickOp("jobOp"); ok {
					key := JobKey{Operation: id, Task: rapid.IntRange(0, 1).Draw(t, "task"), Index: rapid.IntRange(0, 4).Draw(t, "index")}
					if rapid.Bool().Draw(t, "adopt") {
						p.Adopt(key, "adopted")
					} else {
						p.Forget(key)
					}
				}
			case 4:
				newOp()
			case 5:
				if id, ok := pickOp("removeOp"); ok {
					p.RemoveOperation(id)
					live = slices.DeleteFunc(live, func(x scheduler.OperationID) bool { return x == id })
					if rapid.Bool().Draw(t, "readd") {
						// The same id and order, fresh jobs.
						addOp(specs[id])
					}
				}
			case 6:
				if id, ok := pickOp("moveOp"); ok {
					to := pools[rapid.IntRange(0, len(pools)-1).Draw(t, "movePool")].Name
					if err := p.MoveOperation(id, to); err != nil {
						t.Fatal(err)
					}
					if err := p.UpdateOperation(id, float64(rapid.IntRange(0, 3).Draw(t, "weight")), genLimits(t, "limits")); err != nil {
						t.Fatal(err)
					}
				}
			case 7:
				pools[1].ResourceLimits = genLimits(t, "poolLimits")
				if err := p.SetPools(slices.Clone(pools)); err != nil {
					t.Fatal(err)
				}
			case 8:
				c := &copies[rapid.IntRange(0, 4).Draw(t, "copy")/4]
				between := func() {}
				if rapid.Bool().Draw(t, "changeBetween") {
					between = step
				}
				collect(t, p, c, between)
			}
		}
		for range rapid.IntRange(0, 4).Draw(t, "initialOps") {
			newOp()
		}
		for range rapid.IntRange(1, 60).Draw(t, "steps") {
			step()
		}
		collect(t, p, &copies[0], func() {})
	})
}
