package placement

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/sharetree/sharetree/scheduler"
)

// ResolveFairShares then ApplyFairShares sets the same fair shares and
// weights as SetFairShares, also when operations and pools were added or
// removed, a weight updated or another update applied between the two
// (the lookups and comparisons are made again), and the result is not
// kept.
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
		{"a weight updated", func(p *Placement) {
			if err := p.UpdateOperation("o1", 2, scheduler.PartialResources{}); err != nil {
				t.Fatal(err)
			}
		}},
		{"another update applied", func(p *Placement) {
			p.SetFairShares(fairResult(map[string]scheduler.Share{"b": uniform(0.5)}, map[string]scheduler.Share{"o2": uniform(0.9)}))
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

// applyFairSharesFull is SetFairShares as it was before it became
// incremental, with its own lookups: every element's fair share and
// weight reset, the update's entries set in order, then every key
// recomputed and every heap rebuilt. The incremental SetFairShares (and
// ResolveFairShares then ApplyFairShares, which looked up again when the
// operations changed in between) must leave a Placement exactly as this
// leaves its twin.
func applyFairSharesFull(p *Placement, res *scheduler.Result) {
	p.root.fair, p.root.weight = scheduler.Share{}, p.root.specWeight
	for _, e := range p.poolList {
		e.fair, e.weight = scheduler.Share{}, e.specWeight
	}
	for _, e := range p.opList {
		e.fair, e.weight = scheduler.Share{}, e.specWeight
	}
	for _, er := range res.Elements {
		var e *element
		switch er.Kind {
		case scheduler.KindRoot:
			e = p.root
		case scheduler.KindPool:
			e = p.pools[scheduler.PoolID(er.Name)]
		case scheduler.KindOperation:
			e = p.ops[scheduler.OperationID(er.Name)]
		}
		if e == nil {
			continue
		}
		e.fair = er.FairShare.Total
		if er.Weight > 0 {
			e.weight = er.Weight
		}
	}
	p.rekeyAll()
}

// elementState is what places an element in the scheduling order, floats
// bit for bit, and for pools the candidate heap in array order.
type elementState struct {
	Name             string
	Fair             [scheduler.NumResources]uint64
	Weight, Sat, Dom uint64
	Pos              int
	Heap             []string
	MinPending       vec
}

// placementState lists the root's, the pools' and the operations' states.
func placementState(p *Placement) []elementState {
	var out []elementState
	for _, e := range slices.Concat([]*element{p.root}, p.poolList, p.opList) {
		s := elementState{Name: e.name, Weight: math.Float64bits(e.weight), Sat: math.Float64bits(e.sat), Dom: math.Float64bits(e.dom),
			Pos: e.pos, MinPending: e.minPending}
		for r, v := range e.fair {
			s.Fair[r] = math.Float64bits(v)
		}
		for _, c := range e.heap {
			s.Heap = append(s.Heap, c.name)
		}
		out = append(out, s)
	}
	return out
}

// twins runs the same calls on two Placements: inc takes fair shares with
// ApplyFairShares, full with applyFairSharesFull.
type twins struct{ inc, full *Placement }

func (w twins) do(f func(p *Placement)) {
	f(w.inc)
	f(w.full)
}

// apply resolves res in inc, runs between (on both), then applies res.
func (w twins) apply(res *scheduler.Result, between func(p *Placement)) {
	var fs FairShares
	w.inc.ResolveFairShares(res, &fs)
	w.do(between)
	w.inc.ApplyFairShares(&fs)
	applyFairSharesFull(w.full, res)
}

// fatalf is what testing.T and rapid.T have in common for the twins.
type fatalf interface {
	Helper()
	Fatalf(format string, args ...any)
}

// check fails when the twins' fair shares, keys or heaps differ.
func (w twins) check(t fatalf, when string) {
	t.Helper()
	if d := cmp.Diff(placementState(w.full), placementState(w.inc)); d != "" {
		t.Fatalf("%s: state (-full recompute +incremental):\n%s", when, d)
	}
}

// schedule runs one Schedule in both and fails when they start different
// jobs.
func (w twins) schedule(t fatalf, node scheduler.NodeID, free scheduler.Resources, maxJobs int) {
	t.Helper()
	inc, full := w.inc.Schedule(node, free, maxJobs), w.full.Schedule(node, free, maxJobs)
	if d := cmp.Diff(full, inc); d != "" {
		t.Fatalf("Schedule(%s, %v, %d) (-full recompute +incremental):\n%s", node, free, maxJobs, d)
	}
}

// An update applied incrementally leaves the fair shares, weights, keys
// and heaps exactly as the full recompute does, and the jobs start in the
// same order, for updates that change nothing, a few elements, only
// weights, leave elements out, or name one twice.
func TestApplyFairSharesMatchesFullRecompute(t *testing.T) {
	pools := []PoolSpec{{Name: "a"}, {Name: "b"}, {Name: "a1", Parent: "a"}, {Name: "f", Mode: scheduler.ModeFIFO}}
	var ops []OperationSpec
	for i, pool := range []string{"a", "a", "a1", "a1", "b", "b", "", "f", "f"} {
		ops = append(ops, op(fmt.Sprintf("o%d", i), pool, uint64(i), 6, res(1, 1, 2)))
	}
	first := fairResult(map[string]scheduler.Share{"a": uniform(0.5), "b": uniform(0.3), "a1": uniform(0.3), "f": uniform(0.1)},
		map[string]scheduler.Share{"o0": uniform(0.1), "o1": uniform(0.1), "o2": uniform(0.15), "o3": uniform(0.15),
			"o4": uniform(0.2), "o5": uniform(0.1), "o6": uniform(0.1), "o7": uniform(0.05), "o8": {}})
	// edit returns a copy of first changed by f.
	edit := func(f func(r *scheduler.Result)) *scheduler.Result {
		r := &scheduler.Result{Elements: slices.Clone(first.Elements)}
		f(r)
		return r
	}
	find := func(r *scheduler.Result, name string) *scheduler.ElementResult {
		for i := range r.Elements {
			if r.Elements[i].Name == name {
				return &r.Elements[i]
			}
		}
		t.Fatalf("no element %s", name)
		return nil
	}
	for _, tc := range []struct {
		name   string
		second *scheduler.Result
	}{
		{"the same update again", first},
		{"one operation's fair share", edit(func(r *scheduler.Result) { find(r, "o2").FairShare.Total = uniform(0.01) })},
		{"one pool's fair share", edit(func(r *scheduler.Result) { find(r, "a1").FairShare.Total = uniform(0.9) })},
		{"the root's fair share", edit(func(r *scheduler.Result) { r.Elements[0].FairShare.Total = uniform(0.5) })},
		{"only a weight", edit(func(r *scheduler.Result) { find(r, "o4").Weight = 5 })},
		{"a weight back to the specified one", edit(func(r *scheduler.Result) { find(r, "o4").Weight = -1 })},
		{"0 becomes -0", edit(func(r *scheduler.Result) { find(r, "o8").FairShare.Total = scheduler.Share{math.Copysign(0, -1)} })},
		{"elements left out", edit(func(r *scheduler.Result) {
			r.Elements = slices.DeleteFunc(r.Elements, func(e scheduler.ElementResult) bool { return e.Name == "o0" || e.Name == "b" })
		})},
		{"an element twice", edit(func(r *scheduler.Result) {
			r.Elements = append(r.Elements, *find(r, "o6"))
			r.Elements[len(r.Elements)-1].FairShare.Total = uniform(0.6)
		})},
		{"every fair share", edit(func(r *scheduler.Result) {
			for i := range r.Elements {
				r.Elements[i].FairShare.Total = r.Elements[i].FairShare.Total.Scale(1.5)
			}
		})},
		{"nothing", &scheduler.Result{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := twins{mustBuild(t, res(20, 20, 40), pools, ops...), mustBuild(t, res(20, 20, 40), pools, ops...)}
			w.schedule(t, "n0", res(6, 6, 12), 0)
			w.apply(first, func(*Placement) {})
			w.check(t, "first update")
			w.schedule(t, "n1", res(5, 5, 10), 0)
			w.apply(tc.second, func(*Placement) {})
			w.check(t, "second update")
			for i := range 4 {
				w.schedule(t, scheduler.NodeID(fmt.Sprintf("n%d", i+2)), res(2, 2, 4), 0)
			}
		})
	}
}

// Random sequences of job starts and ends, operations added, removed,
// updated and moved, pool and total changes and fair-share updates (with
// some elements changed, left out or named twice) leave a Placement that
// takes its fair shares incrementally exactly like its twin that
// recomputes every key and heap, and both start the same jobs.
func TestApplyFairSharesIncrementalProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pools := genPools(t, 6)
		w := twins{New(), New()}
		w.do(func(p *Placement) {
			p.SetTotal(res(20, 40, 100))
			if err := p.SetPools(pools); err != nil {
				t.Fatal(err)
			}
		})
		var live []scheduler.OperationID
		next := 0
		// newOp draws an operation and returns its addition.
		newOp := func() func(*Placement) {
			spec := OperationSpec{ID: scheduler.OperationID(fmt.Sprintf("op%d", next)), Order: uint64(rapid.IntRange(0, 5).Draw(t, "order")),
				Weight: float64(rapid.IntRange(0, 3).Draw(t, "weight"))}
			next++
			if len(pools) > 0 && rapid.IntRange(0, 4).Draw(t, "inRoot") > 0 {
				spec.Pool = pools[rapid.IntRange(0, len(pools)-1).Draw(t, "opPool")].Name
			}
			for range rapid.IntRange(1, 2).Draw(t, "tasks") {
				spec.Tasks = append(spec.Tasks, TaskSpec{JobCount: rapid.IntRange(1, 4).Draw(t, "jobs"), JobResources: genJob(t, "job")})
			}
			live = append(live, spec.ID)
			return func(p *Placement) {
				if err := p.AddOperation(spec); err != nil {
					t.Fatal(err)
				}
			}
		}
		pickOp := func(label string) (scheduler.OperationID, bool) {
			if len(live) == 0 {
				return "", false
			}
			return live[rapid.IntRange(0, len(live)-1).Draw(t, label)], true
		}
		removeOp := func(id scheduler.OperationID) func(*Placement) {
			live = slices.DeleteFunc(live, func(x scheduler.OperationID) bool { return x == id })
			return func(p *Placement) { p.RemoveOperation(id) }
		}
		// last is the fair share each element got last, so that updates
		// keep many of them.
		last := map[string]scheduler.Share{}
		fairOf := func(name string) scheduler.Share {
			switch rapid.IntRange(0, 5).Draw(t, "fairKind") {
			case 0:
				return scheduler.Share{}
			case 1:
				return scheduler.Share{math.Copysign(0, -1)}
			case 2, 3:
				if s, ok := last[name]; ok {
					return s
				}
			}
			return uniform(float64(rapid.IntRange(0, 10).Draw(t, "fair")) / 10)
		}
		// genResult draws an update: every element maybe left out, maybe
		// twice, with a fair share often kept from the last update, and
		// maybe an unknown operation.
		genResult := func() *scheduler.Result {
			r := &scheduler.Result{}
			add := func(kind scheduler.ElementKind, name string) {
				if rapid.IntRange(0, 5).Draw(t, "leaveOut") == 0 {
					return
				}
				times := 1
				if rapid.IntRange(0, 9).Draw(t, "twice") == 0 {
					times = 2
				}
				for range times {
					fair := fairOf(name)
					last[name] = fair
					weight := []float64{0, -1, 1, 2, 0.5}[rapid.IntRange(0, 4).Draw(t, "weightKind")]
					r.Elements = append(r.Elements, scheduler.ElementResult{Kind: kind, Name: name, Weight: weight, FairShare: scheduler.DetailedShare{Total: fair}})
				}
			}
			add(scheduler.KindRoot, scheduler.RootID)
			for _, s := range pools {
				add(scheduler.KindPool, string(s.Name))
			}
			for _, id := range live {
				add(scheduler.KindOperation, string(id))
			}
			if rapid.IntRange(0, 4).Draw(t, "unknown") == 0 {
				add(scheduler.KindOperation, "unknown")
			}
			return r
		}
		for range rapid.IntRange(0, 5).Draw(t, "initialOps") {
			w.do(newOp())
		}
		for step := range rapid.IntRange(1, 40).Draw(t, "steps") {
			switch rapid.IntRange(0, 9).Draw(t, "action") {
			case 0, 1, 2:
				node := scheduler.NodeID(fmt.Sprintf("n%d", rapid.IntRange(0, 2).Draw(t, "node")))
				free := res(float64(rapid.IntRange(0, 6).Draw(t, "freeSlots")), float64(rapid.IntRange(0, 800).Draw(t, "freeCPU"))/100,
					float64(rapid.IntRange(0, 64).Draw(t, "freeMem")))
				w.schedule(t, node, free, rapid.IntRange(0, 4).Draw(t, "maxJobs"))
			case 3:
				id, ok := pickOp("finishOp")
				if !ok {
					continue
				}
				running := w.inc.RunningJobs(id)
				if len(running) == 0 {
					continue
				}
				key := running[rapid.IntRange(0, len(running)-1).Draw(t, "finishJob")].Key
				requeue := rapid.Bool().Draw(t, "requeue")
				w.do(func(p *Placement) { p.JobFinished(key, requeue) })
			case 4:
				if id, ok := pickOp("removeOp"); ok && rapid.Bool().Draw(t, "remove") {
					w.do(removeOp(id))
				} else {
					w.do(newOp())
				}
			case 5, 6, 7:
				r := genResult()
				// Sometimes operations come or go, a weight is updated or
				// another update applied between the lookups and the apply
				// (which then resolves again).
				between := func(*Placement) {}
				switch rapid.IntRange(0, 7).Draw(t, "between") {
				case 0:
					between = newOp()
				case 1:
					if id, ok := pickOp("removeBetween"); ok {
						between = removeOp(id)
					}
				case 2:
					if id, ok := pickOp("updateBetween"); ok {
						weight := float64(rapid.IntRange(0, 3).Draw(t, "weightBetween"))
						between = func(p *Placement) {
							if err := p.UpdateOperation(id, weight, scheduler.PartialResources{}); err != nil {
								t.Fatal(err)
							}
						}
					}
				case 3:
					other := genResult()
					between = func(p *Placement) {
						if p == w.full {
							applyFairSharesFull(p, other)
						} else {
							p.SetFairShares(other)
						}
					}
				}
				w.apply(r, between)
			case 8:
				id, ok := pickOp("updateOp")
				if !ok {
					continue
				}
				weight, lim := float64(rapid.IntRange(0, 3).Draw(t, "newWeight")), genLimits(t, "newOpLimits")
				w.do(func(p *Placement) {
					if err := p.UpdateOperation(id, weight, lim); err != nil {
						t.Fatal(err)
					}
				})
				if len(pools) > 0 && rapid.Bool().Draw(t, "move") {
					to := pools[rapid.IntRange(0, len(pools)-1).Draw(t, "movePool")].Name
					w.do(func(p *Placement) {
						if err := p.MoveOperation(id, to); err != nil {
							t.Fatal(err)
						}
					})
				}
			case 9:
				for i := range pools {
					if rapid.Bool().Draw(t, "newLimits") {
						pools[i].ResourceLimits = genLimits(t, "poolLimits")
					}
				}
				slots := float64(rapid.IntRange(1, 30).Draw(t, "totSlots"))
				newTotal := rapid.Bool().Draw(t, "newTotal")
				w.do(func(p *Placement) {
					if err := p.SetPools(slices.Clone(pools)); err != nil {
						t.Fatal(err)
					}
					if newTotal {
						p.SetTotal(res(slots, 40, 100))
					}
				})
			}
			w.check(t, fmt.Sprintf("step %d", step))
		}
	})
}
