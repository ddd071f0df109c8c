package scheduler

import "math"

// Pools' functions are built on demand. Building a pool's
// FairShareBySuggestion S = F∘M over [0, 1] needs its children's S over all
// of [0, 1], and so on down the tree, but the update reads little of them:
// the distribution evaluates each function at one suggestion, and a parent
// reads its children's functions only up to where its own stops mattering
// (past the first fit factor at which it exceeds its limits, say, which for
// the root of a cluster with more demand than resources comes early). So a
// pool's functions are built from the first points of F, as many as what
// reads them needs, and continued from where they stopped when that is not
// enough (to twice as many of F's points each time): its children's sum
// asks the children for their points as it goes (childSum.has), and the
// evaluations ask for the points around their suggestion (sAt, mAt). An
// operation's functions (a few points) are built whole, when first read.
//
// The points built are exactly those building the whole function would
// give: the children's sum emits its points in order, each final once
// emitted; MaxFitFactorBySuggestion and the composition only read F up to
// the fit factor they have reached; and F's end value, which the whole
// computation clamps the limits and guarantees to, is taken as +Inf in the
// resources F may rise in (see maxFitFactorTo), the same whether or not F
// is complete. A pool's guarantee and limits are those it had when it was
// prepared, as if its functions had been built then.
//
// So how far an update happens to build a pool's functions changes no
// result, and an Engine keeps them, as far as they were built, for the
// next update that prepares the pool with the same inputs (see
// poolcache.go), which continues them from there.

// poolFn is a pool's functions, built on demand, and what they were built
// from (see poolcache.go: an Engine keeps them across updates).
type poolFn struct {
	// g and lim are the guarantee (strong plus integral) and limits shares
	// of the pool when it was prepared.
	g, lim Share
	// flo is F(0).
	flo Share
	// target is the number of F's points the last build read (0: none yet).
	target int
	m      sfunc
	s      vfunc
	// sum builds F, ff M and cp S, each continuing from where the last
	// build stopped; fSeen is the number of F's points ff has read.
	sum   childSum
	ff    fitFactor
	cp    composer
	fSeen int
	// mFinal and sFinal are the numbers of leading points of m and s that
	// building from more of F keeps (all of them once the element's sDone).
	mFinal, sFinal int
	// distAt is the update (tree.gen) that last distributed the pool's
	// fair share with these functions (0: none did), at suggestion distS
	// (see keepDistribution). They sit next to sFinal, which evaluating
	// the pool's functions reads, to share its cache line.
	distAt uint64
	distS  float64
	// sumStarted: sum was started (by startF) from the children recorded
	// in kids, and startF continues it instead of starting again.
	sumStarted bool
	// done, sEnd and fLo are what the build set in the pool's element:
	// sDone, sEnd and fLo (restored with the functions, see restorePool).
	done bool
	sEnd int32
	fLo  float64
	// ld is the pool's limited demand, computed by limitedDemands from
	// these functions' inputs (ldSet: it was; see limitedDemands).
	ld    Share
	ldSet bool

	// ver identifies the functions (0: none to keep); used is the update
	// (tree.gen) that last prepared the pool with them; varies, fifo and
	// kids are, with g and lim, what they are built from; layout is the
	// tree layout (tree.layoutGen) whose element indexes sum's children
	// hold. See poolcache.go.
	ver, used uint64
	varies    resourceSet
	fifo      bool
	kids      []kidKey
	layout    uint64
}

// finalS returns the final points of element c's FairShareBySuggestion and
// whether they are all of it (an operation's are built first if need be).
func (t *tree) finalS(c int) (vfunc, bool) {
	if e := &t.el[c]; !e.sDone {
		if e.kind == KindOperation {
			t.buildOperation(c)
			return t.fnS[c], true
		}
		return t.fnS[c][:t.lz[e.ord].sFinal], false
	}
	return t.fnS[c], true
}

// pull makes point j of element c's FairShareBySuggestion final (or its
// function complete) and returns finalS.
func (t *tree) pull(c, j int) (vfunc, bool) {
	e := &t.el[c]
	for !e.sDone && e.kind != KindOperation && t.lz[e.ord].sFinal <= j {
		t.extend(c, j)
	}
	return t.finalS(c)
}

// sAt is element i's FairShareBySuggestion at s.
func (t *tree) sAt(i int, s float64) Share {
	var v Share
	t.sAtTo(&v, i, s)
	return v
}

// sAtTo is sAt writing into dst.
func (t *tree) sAtTo(dst *Share, i int, s float64) {
	e := &t.el[i]
	if !e.sDone && e.kind == KindOperation {
		t.buildOperation(i)
	}
	for !e.sDone {
		f := t.fnS[i][:t.lz[e.ord].sFinal]
		if k := f.search(s); k < len(f) {
			f.atIndexTo(dst, s, k)
			return
		}
		t.extend(i, len(f))
	}
	f := t.fnS[i]
	f.atIndexTo(dst, s, f.search(s))
}

// mAt is pool i's MaxFitFactorBySuggestion at s.
func (t *tree) mAt(i int, s float64) float64 {
	e := &t.el[i]
	for !e.sDone {
		lz := &t.lz[e.ord]
		if m := lz.m[:lz.mFinal]; len(m) > 0 && m[len(m)-1].x >= s {
			return m.at(s)
		}
		t.extend(i, lz.sFinal)
	}
	return t.fnM[i].at(s)
}

// extend continues pool i's functions from more of F: twice as many points
// as the last build read, and enough to make point need of S final if F's
// points map to S's one to one.
func (t *tree) extend(i, need int) {
	e := &t.el[i]
	lz := &t.lz[e.ord]
	if lz.target == 0 {
		t.startF(i)
	}
	lz.target = max(2*lz.target, need+3, 4)
	if e.varies == 0 {
		// F is constant: M comes from its whole domain.
		lz.target = 1 << 40
	}
	f, final, fDone := lz.sum.run(lz.target)
	if final == 0 {
		return
	}
	f = f[:final]
	w := &t.ws
	var m sfunc
	var mDone bool
	if lz.fSeen == 0 {
		lz.flo = f[0].l
		var hi Share
		for r := range hi {
			if e.varies&(1<<r) != 0 {
				hi[r] = math.Inf(1)
			} else {
				hi[r] = lz.flo[r]
			}
		}
		lz.cp = composer{out: lz.s[:0]}
		if !lz.ff.init(lz.m[:0], &lz.flo, &hi, &lz.g, &lz.lim) {
			// F is constant, and whole (see the target above).
			hi := f.hi()
			lz.ff.m = append(lz.ff.m, spoint{x: 0, l: hi, r: hi}, spoint{x: 1, l: hi, r: hi})
			lz.ff.stopped = true
		}
	}
	lz.ff.feed(w, f[lz.fSeen:])
	lz.fSeen = len(f)
	cut := lz.ff.m[len(lz.ff.m)-1].x > 1
	m, mDone = lz.ff.finish(fDone)
	if cut {
		// M was cut at 1, which may change a point S was built from.
		lz.cp = composer{out: lz.s[:0]}
	}
	lz.cp.feed(f, m, mDone)
	s := lz.cp.out
	lz.m, lz.s = m, s
	t.fnM[i], t.fnS[i] = m, s
	e.fLo = f[0].x
	lz.fLo = e.fLo
	if mDone {
		lz.mFinal, lz.sFinal = len(m), len(s)
		e.sDone, lz.done = true, true
		e.sEnd = int32(activeEnd(s))
		lz.sEnd = e.sEnd
		return
	}
	lz.mFinal, lz.sFinal = len(m)-1, max(len(s)-1, 0)
}

// startF starts building pool i's FairShareByFitFactor.
func (t *tree) startF(i int) {
	e := &t.el[i]
	lz := &t.lz[e.ord]
	if lz.sumStarted {
		return // kept, see poolcache.go
	}
	lz.sumStarted, lz.layout = true, t.layoutGen
	kids := t.children(e)
	s := &lz.sum
	s.reset(t)
	if e.fifo || len(kids) == 0 {
		var f vfunc
		if e.fifo {
			for _, c := range kids {
				t.pull(c, 0) // operations: complete once built
			}
			w := &t.ws
			w.fifo = w.fifo[:0]
			for _, c := range kids {
				w.fifo = append(w.fifo, t.fnS[c])
			}
			f = concatFIFO(s.out, w.fifo)
		} else {
			f = append(s.out[:0], vpoint{x: 0}, vpoint{x: 1})
		}
		s.out, s.fDone = f, true
		return
	}
	var base Share
	for _, c := range kids {
		fn, done := t.pull(c, 0)
		sc := t.el[c].scale
		if sc <= 0 {
			base = base.Add(fn[0].l)
			continue
		}
		s.add(c, fn, done, int(t.el[c].sEnd), sc)
	}
	s.start(s.out, base)
}

// limitMargin is how far below its limit (in a share) the sum of a pool's
// children's limited demands must stay for limitedDemands to take the sum
// without completing the pool's functions.
const limitMargin = 1e-6

// limitedDemands sets every pool's S(1) (operations' were set with their
// functions), bottom-up, the same however far the update happened to build
// the pool's functions (so that keeping them across updates changes
// nothing): S(1) = F(M(1)) is the end of F, Σ_c S_c(min(1, scale_c)), and
// the pool takes that sum of its children's limited demands, unless F
// exceeds the limits on the way (whether it does can turn on rounding when
// the sum ends at a limit): when the sum comes within limitMargin of the
// limits, the functions are completed (up to where they exceed the limits)
// and S(1) is taken from S exactly. The sum may differ from F's last point,
// a running sum, by rounding, and so from a complete S's S(1): a pool whose
// S happens to be complete still takes the sum.
//
// A pool's limited demand is a function of what its functions are built
// from (its children's limited demands, which are functions of their own
// functions' identities, by induction from the operations', and its
// children's scales, limits, F(0) and varies), so the pool's functions
// keep it (ld), and a pool prepared again with them (see poolcache.go)
// takes it back without summing its children again.
func (t *tree) limitedDemands() {
	for k := len(t.pools) - 1; k >= 0; k-- {
		i := t.pools[k]
		e := &t.el[i]
		lz := &t.lz[e.ord]
		if lz.target == 0 {
			t.extend(i, 0)
		}
		if lz.ldSet {
			e.limitedDemand = lz.ld
			continue
		}
		// (Building the pool's F read every child's first point, which
		// built the operations' functions.)
		var sum Share
		for _, c := range t.children(e) {
			if ce := &t.el[c]; ce.scale <= 0 {
				addTo(&sum, &t.fnS[c][0].l)
			} else {
				addTo(&sum, &ce.limitedDemand)
			}
		}
		near := false
		for r := range sum {
			if e.varies&(1<<r) != 0 && sum[r] > max(lz.lim[r], lz.flo[r])-limitMargin {
				near = true
			}
		}
		if near {
			for !e.sDone {
				t.extend(i, lz.sFinal+1)
			}
			sum = limitedDemand(t.fnS[i])
		}
		e.limitedDemand = sum
		lz.ld, lz.ldSet = sum, !t.pooled
	}
}
