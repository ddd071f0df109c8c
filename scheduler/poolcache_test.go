package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// engineUpdate updates en into res and checks the result against a fresh
// Update of the same snapshot and previous state, bit for bit (the
// fingerprint's canonical dump).
func engineUpdate(t *testing.T, en *Engine, res *Result, snap *Snapshot, prev *State, step string) {
	t.Helper()
	want, err := Update(snap, prev)
	if err != nil {
		t.Fatalf("%s: Update: %v", step, err)
	}
	if err := en.UpdateInto(res, snap, prev); err != nil {
		t.Fatalf("%s: UpdateInto: %v", step, err)
	}
	if fingerprint(want) != fingerprint(res) {
		if d := cmp.Diff(want.Elements, res.Elements); d != "" {
			t.Fatalf("%s: Elements differ (-fresh +engine):\n%s", step, d)
		}
		t.Fatalf("%s: results differ from a fresh update", step)
	}
}

// poolAncestors returns element i's ancestors (pools and the root).
func poolAncestors(tr *tree, i int) []int {
	var out []int
	for p := tr.el[i].parent; p >= 0; p = tr.el[p].parent {
		out = append(out, int(p))
	}
	return out
}

// keptSumsSound reports what is wrong, if anything, with the children's
// sums of tr's pools after an update: each must read its children at
// their element indexes, and the points it holds of a child must be the
// first points of the child's function as it is now (a sum kept from an
// earlier build must not hold slices of memory built over since).
func keptSumsSound(tr *tree) string {
	for _, i := range tr.pools {
		e := &tr.el[i]
		lz := &tr.lz[e.ord]
		if !lz.sumStarted || e.fifo || len(lz.sum.ch) == 0 {
			continue
		}
		k := 0
		for _, c := range tr.children(e) {
			if tr.el[c].scale <= 0 {
				continue
			}
			ch := &lz.sum.ch[k]
			k++
			if int(ch.kid) != c {
				return fmt.Sprintf("%s: sloped child %d is element %d, the sum reads %d", tr.names[i], k-1, c, ch.kid)
			}
			cur := tr.fnS[c]
			if ce := &tr.el[c]; ce.kind != KindOperation && !ce.sDone {
				cur = cur[:tr.lz[ce.ord].sFinal]
			}
			if len(ch.fn) > len(cur) || !slices.Equal(ch.fn, cur[:len(ch.fn)]) {
				return fmt.Sprintf("%s: the sum holds %d points of %s that are not its function's first points", tr.names[i], len(ch.fn), tr.names[c])
			}
		}
	}
	return ""
}

// deepestOperation returns the element index and the snapshot index of an
// operation at the greatest depth.
func deepestOperation(tr *tree) (idx, src int) {
	idx = -1
	for i := range tr.el {
		if e := &tr.el[i]; e.kind == KindOperation && (idx < 0 || e.depth > tr.el[idx].depth) {
			idx = i
		}
	}
	return idx, int(tr.el[idx].src)
}

// An update of an unchanged snapshot (the same previous state) prepares
// every pool with the functions the last one built: none is started
// afresh, not even the integral pools, which every update prepares twice
// (with a temporary integral share or limits, then with their final
// ones), each time finding the functions of the same preparation of the
// last update.
func TestUnchangedUpdateKeepsEveryPoolsFunctions(t *testing.T) {
	snap, prev := genSnapshot(benchParams(100, 1000))
	prev.LastUpdate = snap.Now.Add(-time.Second)
	var en Engine
	var res Result
	engineUpdate(t, &en, &res, snap, prev, "first")
	first := en.t.poolStats
	if first.fresh < len(en.t.pools) {
		t.Fatalf("first update: %+v, want every one of the %d pools started afresh", first, len(en.t.pools))
	}
	integral, _ := en.t.integralLists()
	if len(integral) == 0 {
		t.Fatal("the tree has no burst pool: the test needs one")
	}
	for k := range 3 {
		engineUpdate(t, &en, &res, snap, prev, "again")
		st := en.t.poolStats
		if st.fresh != 0 || st.restored != first.fresh+first.restored || st.swapped == 0 {
			t.Fatalf("update %d: %+v, want the %d preparations of the first update all restored, some from the second slots",
				k+2, st, first.fresh+first.restored)
		}
	}
	if n := len(en.t.lzAlt); n == 0 || n > len(en.t.pools) {
		t.Errorf("%d second slots for %d pools", n, len(en.t.pools))
	}
}

// A change to one deep operation starts afresh only the functions of its
// ancestors (in a tree without integral pools, whose guarantees would
// move with it); the other pools keep theirs.
func TestOneOperationChangeRebuildsItsAncestors(t *testing.T) {
	p := benchParams(100, 1000)
	p.IntegralFrac = 0
	snap, prev := genSnapshot(p)
	var en Engine
	var res Result
	engineUpdate(t, &en, &res, snap, prev, "first")
	engineUpdate(t, &en, &res, snap, prev, "unchanged")
	if st := en.t.poolStats; st.fresh != 0 {
		t.Fatalf("unchanged update: %+v, want nothing started afresh", st)
	}
	for k := range 4 {
		idx, oi := deepestOperation(&en.t)
		anc := poolAncestors(&en.t, idx)
		if len(anc) < 3 {
			t.Fatalf("deepest operation has %d ancestors", len(anc))
		}
		s := cloneSnapshot(snap)
		o := &s.Operations[oi]
		o.Usage[CPU] += 1 + float64(k)
		o.Demand[CPU] = max(o.Demand[CPU], o.Usage[CPU]) + 1
		snap = s
		engineUpdate(t, &en, &res, snap, prev, "changed")
		if st := en.t.poolStats; st.fresh != len(anc) || st.restored != len(en.t.pools)-len(anc) {
			t.Fatalf("change %d: %+v, want the %d ancestors started afresh and the %d other pools restored",
				k, st, len(anc), len(en.t.pools)-len(anc))
		}
	}
}

// A pool whose weight changes keeps its functions (its inputs are the
// same); its parent, which reads its suggestion scale, and the parent's
// ancestors start afresh, keeping their children's sum when only their
// guarantee or limits changed (not here: the sum reads the scale).
func TestPoolWeightChangeRebuildsItsParent(t *testing.T) {
	p := benchParams(100, 1000)
	p.IntegralFrac = 0
	snap, prev := genSnapshot(p)
	var en Engine
	var res Result
	engineUpdate(t, &en, &res, snap, prev, "first")
	// A pool at depth 3 and its element.
	pi := -1
	var idx int
	for _, i := range en.t.pools[1:] {
		if e := &en.t.el[i]; e.depth == 3 {
			pi, idx = int(e.src), i
			break
		}
	}
	if pi < 0 {
		t.Fatal("no pool at depth 3")
	}
	anc := poolAncestors(&en.t, idx)
	for k, w := range []float64{7, 0.25, 3} {
		s := cloneSnapshot(snap)
		s.Pools = slices.Clone(s.Pools)
		s.Pools[pi].Weight = &w
		snap = s
		engineUpdate(t, &en, &res, snap, prev, "weight")
		if st := en.t.poolStats; st.fresh != len(anc) || st.sumKept != 0 {
			t.Fatalf("change %d: %+v, want the pool's %d ancestors started afresh, without their sums", k, st, len(anc))
		}
	}
}

// An integral pool whose volume changes gets another integral share: it
// and its ancestors start afresh, keeping their children's sums where
// only the guarantee changed; the results are those of a fresh update.
func TestIntegralVolumeChangeKeepsChildrensSums(t *testing.T) {
	snap, prev := genSnapshot(benchParams(100, 1000))
	prev.LastUpdate = snap.Now.Add(-time.Second)
	var en Engine
	var res Result
	engineUpdate(t, &en, &res, snap, prev, "first")
	burst, _ := en.t.integralLists()
	if len(burst) == 0 {
		t.Fatal("no burst pool")
	}
	name := PoolID(en.t.names[burst[0]])
	kept := 0
	for k, v := range []float64{0, 50, 5000, 123.5} {
		pv := *prev
		pv.Pools = maps.Clone(prev.Pools)
		ps := pv.Pools[name]
		ps.AccumulatedVolume[CPU] = v
		pv.Pools[name] = ps
		engineUpdate(t, &en, &res, snap, &pv, "volume")
		st := en.t.poolStats
		if st.fresh == 0 {
			t.Fatalf("volume %d: %+v, want some pools started afresh", k, st)
		}
		kept += st.sumKept
	}
	if kept == 0 {
		t.Error("no pool kept its children's sum")
	}
}

// When operations start and finish, reshape lays the tree out again and
// the pools' kept functions move with it: a kept children's sum asks its
// children for more points by their new element indexes. Here the first
// pool's largest operations finish one by one, moving every later element
// and freeing a share that the other pools, kept, take by asking their
// functions for more than the last update built.
func TestReshapeRenumbersKeptSums(t *testing.T) {
	p := benchParams(100, 1000)
	p.Load = 3
	snap, prev := genSnapshot(p)
	var en Engine
	var res Result
	engineUpdate(t, &en, &res, snap, prev, "first")
	renumbered := 0
	for k := range 6 {
		first := en.t.pools[1]
		kids := en.t.children(&en.t.el[first])
		// The operation of the first pool's subtree (the first elements
		// after it) with the largest demand.
		best := -1
		for i := first + 1; i < len(en.t.el) && en.t.el[i].depth > en.t.el[first].depth; i++ {
			if e := &en.t.el[i]; e.kind == KindOperation && (best < 0 || e.demandShare.MaxComponent() > en.t.el[best].demandShare.MaxComponent()) {
				best = i
			}
		}
		if best < 0 || len(kids) == 0 {
			t.Fatal("the first pool has no operation")
		}
		s := cloneSnapshot(snap)
		s.Operations = slices.Delete(slices.Clone(s.Operations), int(en.t.el[best].src), int(en.t.el[best].src)+1)
		snap = s
		// As if the store had drifted far from pre-order: patch, which
		// moves nothing, leaves the update to reshape (which compacts).
		en.t.drift = len(en.t.el)
		engineUpdate(t, &en, &res, snap, prev, "finished")
		if en.t.built != builtReshape || en.t.drift != 0 {
			t.Fatalf("step %d: built %d, drift %d; want reshape's compacted store", k, en.t.built, en.t.drift)
		}
		if bad := keptSumsSound(&en.t); bad != "" {
			t.Fatalf("step %d: %s", k, bad)
		}
		st := en.t.poolStats
		if st.restored == 0 {
			t.Fatalf("step %d: %+v, want pools kept", k, st)
		}
		renumbered += st.renumbered
	}
	if renumbered == 0 {
		t.Error("no kept sum was renumbered")
	}
}

// Through any sequence of updates of one Engine, every pool's functions,
// kept or built, are the first points of the whole functions of its
// current inputs (see TestPropertyOnDemandFunctionsArePrefixes).
func TestPropertyKeptPoolFunctionsArePrefixes(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		p := drawGenParams(rt)
		snap, prev := genSnapshot(p)
		var en Engine
		var bufs [2]Result
		next := 0
		last := snap
		for k := range rapid.IntRange(1, 6).Draw(rt, "updates") {
			if k > 0 {
				snap = varyInputs(rt, last)
			}
			res := &bufs[next]
			if err := en.UpdateInto(res, snap, prev); err != nil {
				continue // an invalid snapshot: the next varies the last valid one
			}
			last, prev, next = snap, &res.State, 1-next
			tr := &en.t
			if bad := keptSumsSound(tr); bad != "" {
				rt.Fatalf("update %d: %s", k, bad)
			}
			if bad := functionsArePrefixes(tr); bad != "" {
				rt.Fatalf("update %d: %s", k, bad)
			}
		}
	})
}

// The pools' slots stay bounded over a long run of updates whose inputs
// change in a cycle: at most one second slot per pool, and the slots'
// buffers no larger after many cycles than after the first few.
func TestPoolSlotsStayBounded(t *testing.T) {
	p := benchParams(100, 1000)
	snap, prev := genSnapshot(p)
	prev.LastUpdate = snap.Now.Add(-time.Second)
	var en Engine
	var res Result
	capacity := func() int {
		n := 0
		for _, slots := range [][]poolFn{en.t.lz, en.t.lzAlt} {
			for k := range slots {
				lz := &slots[k]
				n += cap(lz.m) + cap(lz.s) + cap(lz.sum.out) + cap(lz.sum.ch) + cap(lz.sum.heap) + cap(lz.kids)
			}
		}
		return n
	}
	var early int
	for k := range 140 {
		s := cloneSnapshot(snap)
		for i := range s.Operations {
			if (i+k)%7 == 0 {
				s.Operations[i].Usage[CPU] = float64((i * k) % 5)
			}
		}
		pv := *prev
		pv.LastUpdate = prev.LastUpdate.Add(-time.Duration(k%3) * time.Second)
		if err := en.UpdateInto(&res, s, &pv); err != nil {
			t.Fatal(err)
		}
		if n := len(en.t.lzAlt); n > len(en.t.pools) {
			t.Fatalf("update %d: %d second slots for %d pools", k, n, len(en.t.pools))
		}
		switch {
		case k == 41: // two full cycles of 21 updates
			early = capacity()
		case k > 41:
			if n := capacity(); n > early {
				t.Fatalf("update %d: the slots hold %d points, %d after 42 updates", k, n, early)
			}
		}
	}
}

// A pool whose limits change starts afresh, keeping its children's sum
// (the sum does not read the limits); its ancestors, whose child changed,
// start afresh without theirs.
func TestPoolLimitChangeKeepsItsSum(t *testing.T) {
	p := benchParams(100, 1000)
	p.IntegralFrac = 0
	snap, prev := genSnapshot(p)
	var en Engine
	var res Result
	engineUpdate(t, &en, &res, snap, prev, "first")
	// The pool at depth 2 with the most children.
	pi, idx := -1, 0
	for _, i := range en.t.pools[1:] {
		e := &en.t.el[i]
		if e.depth == 2 && (pi < 0 || e.kidHi-e.kidLo > en.t.el[idx].kidHi-en.t.el[idx].kidLo) {
			pi, idx = int(e.src), i
		}
	}
	if pi < 0 {
		t.Fatal("no pool at depth 2")
	}
	anc := poolAncestors(&en.t, idx)
	for k, l := range []float64{1, 40, 0.5, 1e6} {
		s := cloneSnapshot(snap)
		s.Pools = slices.Clone(s.Pools)
		s.Pools[pi].ResourceLimits = PartialResources{}.With(CPU, l)
		snap = s
		engineUpdate(t, &en, &res, snap, prev, "limits")
		if st := en.t.poolStats; st.fresh != len(anc)+1 || st.sumKept != 1 {
			t.Fatalf("change %d: %+v, want the pool and its %d ancestors started afresh, the pool keeping its sum", k, st, len(anc))
		}
	}
}

// When the arena of operations' functions is reset (see keepFunctions),
// every operation's function is built again elsewhere in it, and the
// kept children's sums of the pools, which hold slices of the old ones,
// must not be kept: the operations' functions get new identities. Here
// the reset is forced at every other update, in which a change frees a
// share that the other pools take by asking for more of their functions
// (the structure kept, then changed).
func TestArenaResetDropsPoolsSums(t *testing.T) {
	for _, reshape := range []bool{false, true} {
		p := benchParams(100, 1000)
		p.Load = 3
		snap, prev := genSnapshot(p)
		var en Engine
		var res Result
		engineUpdate(t, &en, &res, snap, prev, "first")
		for k := range 6 {
			tr := &en.t
			// The operation with the largest demand.
			best := -1
			for i := range tr.el {
				if e := &tr.el[i]; e.kind == KindOperation && (best < 0 || e.demandShare.MaxComponent() > tr.el[best].demandShare.MaxComponent()) {
					best = i
				}
			}
			s := cloneSnapshot(snap)
			oi := int(tr.el[best].src)
			if reshape {
				s.Operations = slices.Delete(slices.Clone(s.Operations), oi, oi+1)
			} else {
				s.Operations[oi].Demand = Resources{}
				s.Operations[oi].Usage = Resources{}
			}
			snap = s
			reset := k%2 == 0
			if reset {
				tr.fnBase = 0 // the arena counts as grown: the update resets it
			}
			engineUpdate(t, &en, &res, snap, prev, "changed")
			if reset && tr.fnBase != -1 {
				t.Fatalf("step %d: the arena was not reset", k)
			}
			if bad := keptSumsSound(tr); bad != "" {
				t.Fatalf("step %d (reshape %v): %s", k, reshape, bad)
			}
		}
	}
}

// An update of an unchanged snapshot distributes no pool's fair share
// again: every pool's children get the fair shares of the last update's
// distribution back (see keepDistribution), bit for bit those a fresh
// update computes.
func TestUnchangedUpdateKeepsEveryDistribution(t *testing.T) {
	snap, prev := genSnapshot(benchParams(100, 1000))
	prev.LastUpdate = snap.Now.Add(-time.Second)
	var en Engine
	var res Result
	engineUpdate(t, &en, &res, snap, prev, "first")
	if n := en.t.poolStats.distKept; n != 0 {
		t.Fatalf("first update: %d distributions kept, want none", n)
	}
	for k := range 2 {
		engineUpdate(t, &en, &res, snap, prev, "again")
		if n := en.t.poolStats.distKept; n != len(en.t.pools) {
			t.Fatalf("update %d: %d distributions kept, want all %d pools'", k+2, n, len(en.t.pools))
		}
	}
}

// A pool's record of its distribution is taken back only in the update
// right after the one that made it: the elements below the pool hold that
// distribution's fair shares only until the next one writes them. Here
// an update is skipped in the engine's count (as if one had run in
// between) and the operations' fair shares are written over: the next
// update must distribute everything again.
func TestDistributionRecordsOfAnEarlierUpdateAreNotKept(t *testing.T) {
	snap, prev := genSnapshot(benchParams(100, 1000))
	prev.LastUpdate = snap.Now.Add(-time.Second)
	var en Engine
	var res Result
	engineUpdate(t, &en, &res, snap, prev, "first")
	en.t.gen++
	for i := range en.t.el {
		if e := &en.t.el[i]; e.kind == KindOperation {
			e.fairShare = Share{}
		}
	}
	engineUpdate(t, &en, &res, snap, prev, "after a skipped update")
	if n := en.t.poolStats.distKept; n != 0 {
		t.Fatalf("%d distributions kept from an update before the last", n)
	}
}
