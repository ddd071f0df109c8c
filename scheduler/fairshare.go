package scheduler

import (
	"math"
	"slices"
)

// computeWeights sets every pool's effective weight: explicit, or inferred
// from guarantee shares when the tree sets the multiplier, or 1 (operations
// got theirs, explicit or 1, when the tree was built).
func (t *tree) computeWeights() {
	m := t.cfg.InferWeightFromGuaranteesShareMultiplier
	for k, i := range t.pools {
		e := &t.el[i]
		if i == 0 {
			e.weight = 1
			continue
		}
		switch pd := &t.pd[k]; {
		case pd.hasWeight:
			e.weight = pd.weight
		case m != nil:
			pp := &t.pd[t.ordNode[k].parent]
			own := pd.sgs.MaxComponent() + pd.totalFlowRatio
			parent := pp.sgs.MaxComponent() + pp.totalFlowRatio
			if own < epsilon || parent < epsilon {
				e.weight = 1
			} else {
				e.weight = own * *m / parent
			}
		default:
			e.weight = 1
		}
	}
}

// computeScales sets every child's suggestion scale w_c / w_min, where
// w_min is the smallest weight above epsilon among its siblings; a child with
// a weight at or below epsilon gets 0. Weights are fixed for the update, so
// this runs once, after computeWeights.
func (t *tree) computeScales() {
	for _, i := range t.pools {
		kids := t.children(&t.el[i])
		wmin := math.Inf(1)
		for _, c := range kids {
			if w := t.el[c].weight; w > epsilon {
				wmin = min(wmin, w)
			}
		}
		for _, c := range kids {
			ce := &t.el[c]
			ce.scale = 0
			if ce.weight > epsilon {
				ce.scale = ce.weight / wmin
			}
		}
	}
}

// prepare builds the fit-factor functions of the root or pool i and of
// every descendant pool that has none yet (functions already built are
// reused), on demand (see lazy.go); operations need no preparing (see
// initOperation).
func (t *tree) prepare(i int) {
	if i == 0 {
		// The whole tree: pools come after their parent, so one pass
		// from the end prepares every child pool before its parent.
		for k := len(t.pools) - 1; k >= 0; k-- {
			if p := t.pools[k]; !t.el[p].prepared {
				t.prepareOne(p)
			}
		}
		return
	}
	e := &t.el[i]
	if e.prepared {
		return
	}
	for _, c := range t.poolChildren(e) {
		t.prepare(c)
	}
	t.prepareOne(i)
}

// prepareOne is prepare for a pool (or the root) whose child pools are
// prepared.
func (t *tree) prepareOne(i int) {
	e := &t.el[i]
	e.varies = e.opVaries
	for _, c := range t.poolChildren(e) {
		e.varies |= t.el[c].varies
	}
	e.prepared = true
	t.initPool(i)
}

// buildOperation builds operation i's functions (prepare leaves them to the
// first step that reads them, see pull).
func (t *tree) buildOperation(i int) {
	e := &t.el[i]
	e.sDone = true
	w := &t.ws
	if e.idle && !e.gang {
		if s, ok := idleOperationS(w, e.demandShare, e.limitsShare); ok {
			e.fLo = 0
			t.fnS[i] = s
			e.sEnd = int32(activeEnd(s))
			e.limitedDemand = limitedDemand(s)
			return
		}
	}
	if !e.idle && !e.gang {
		if s, ok := busyOperationS(w, e.usageShare, e.demandShare, e.limitsShare); ok {
			e.fLo = 0
			t.fnS[i] = s
			e.sEnd = int32(activeEnd(s))
			e.limitedDemand = limitedDemand(s)
			return
		}
	}
	w.f = operationFunc(w.f, e.usageShare, e.demandShare, e.gang)
	e.fLo = w.f.lo()
	s := operationS(w, w.f, e.limitsShare)
	t.fnS[i] = s
	e.sEnd = int32(activeEnd(s))
	e.limitedDemand = limitedDemand(s)
}

// limitedDemand is S(1): the element's demand within its limits.
func limitedDemand(s vfunc) Share {
	if n := len(s); s[n-1].x == 1 {
		return s[n-1].l // at(1), without the search
	}
	return s.at(1)
}

// reset discards element i's functions and those of its ancestors, which
// were built from them; descendants keep theirs and are reused. (The
// reference discards only the element's own functions: an ancestor prepared
// while serving an outer integral pool would then keep a stale sum, and the
// final pass would never rebuild the reset element below it.)
func (t *tree) reset(i int) {
	for ; i >= 0; i = int(t.el[i].parent) {
		t.fnM[i], t.fnS[i] = nil, nil
		t.el[i].prepared, t.el[i].sDone = false, false
	}
}

// childSuggestions maps a pool's fit factor to its children's suggestions.
func (t *tree) childSuggestions(e *element, f float64, out []float64) {
	kids := t.children(e)
	if e.fifo {
		whole := math.Floor(f)
		for k := range kids {
			switch {
			case float64(k) < whole:
				out[k] = 1
			case float64(k) == whole:
				out[k] = f - whole
			default:
				out[k] = 0
			}
		}
		return
	}
	for k, c := range kids {
		out[k] = min(1, f*t.el[c].scale)
	}
}

// distribute hands element i its fair share for suggestion s and recurses:
// the element's fit factor M(s) becomes its children's suggestions. If
// rounding makes the children's shares exceed the element's, the largest fit
// factor at which they fit is used instead.
func (t *tree) distribute(i int, s float64) {
	t.sAtTo(&t.el[i].fairShare, i, s)
	t.distributeChildren(i, s)
}

// distributeChildren is distribute for an element whose fair share is set.
// The children's shares computed to check the bound are their fair shares.
func (t *tree) distributeChildren(i int, s float64) {
	e := &t.el[i]
	if e.kind == KindOperation {
		return
	}
	if t.keepDistribution(i, s) {
		return
	}
	if !t.pooled {
		lz := &t.lz[e.ord]
		lz.distAt, lz.distS = t.gen, s
	}
	kids := t.children(e)
	if len(kids) == 0 {
		return
	}
	f := t.mAt(i, s)
	w := &t.ws
	base, n := len(w.sugg), len(kids)
	w.sugg = slices.Grow(w.sugg, n)[:base+n]
	sugg := w.sugg[base : base+n]
	sumAt := func(f float64) Share {
		t.childSuggestions(e, f, sugg)
		var sum Share
		for k, c := range kids {
			ce := &t.el[c]
			t.sAtTo(&ce.fairShare, c, sugg[k])
			addTo(&sum, &ce.fairShare)
		}
		return sum
	}
	if sum := sumAt(f); !e.fairShare.DominatesEps(sum, epsilon) {
		lo, hi := e.fLo, f
		t.poolStats.bisected++
		for range 64 {
			mid := (lo + hi) / 2
			if sum := sumAt(mid); e.fairShare.DominatesEps(sum, epsilon) {
				lo = mid
			} else {
				hi = mid
			}
		}
		sumAt(lo)
	}
	// Only child pools have children (they come first).
	for k, c := range kids[:e.poolKids] {
		t.distributeChildren(c, sugg[k])
	}
	w.sugg = w.sugg[:base]
}

// keepDistribution distributes pool i's fair share at suggestion s as the
// last update did, without evaluating its children's functions, when it
// can, and reports whether it did. The distribution below a pool is a
// function of its functions and of the children's (their identities, see
// poolcache.go), of its suggestion, and of its fair share, which is its
// S at that suggestion: so when the pool's functions are those the last
// update distributed it with (kept, see poolcache.go, and distributed in
// the last update: distAt), at bitwise the same suggestion, its children
// get bitwise the same fair shares and suggestions. An operation's
// element keeps the fair share the last update wrote (kept elements are
// kept whole, or moved whole by reshape, see opcache.go), but a pool's
// element is written afresh by every build: a child pool's fair share is
// evaluated again at the suggestion its functions recorded in the last
// update (distS, a few points read), and its children are distributed in
// turn. Every pool's record is refreshed for the next update. (The
// package-level Update's engine records nothing, see tree.pooled.)
func (t *tree) keepDistribution(i int, s float64) bool {
	e := &t.el[i]
	lz := &t.lz[e.ord]
	if lz.distAt == 0 || lz.distAt != t.gen-1 || math.Float64bits(lz.distS) != math.Float64bits(s) {
		return false
	}
	kids := t.children(e)[:e.poolKids]
	for _, c := range kids {
		// (The children's functions are those the pool's were built
		// from, so their records are of the same distribution.)
		if cl := &t.lz[t.el[c].ord]; cl.distAt != t.gen-1 {
			return false
		}
	}
	lz.distAt = t.gen
	t.poolStats.distKept++
	for _, c := range kids {
		cs := t.lz[t.el[c].ord].distS
		t.sAtTo(&t.el[c].fairShare, c, cs)
		t.distributeChildren(c, cs)
	}
	return true
}

// splitShareInto splits a fair share into d: its strong guarantee, integral
// guarantee and weight-proportional parts.
func splitShareInto(d *DetailedShare, total, sgs, pis *Share) {
	for k := range total {
		t := total[k]
		sg := max(min(t, sgs[k]), 0)
		ig := max(min(t-sg, pis[k]), 0)
		d.StrongGuarantee[k] = sg
		d.IntegralGuarantee[k] = ig
		d.WeightProportional[k] = max(t-sg-ig, 0)
		d.Total[k] = t
	}
}
