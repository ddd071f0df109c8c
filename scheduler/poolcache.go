package scheduler

import "math"

// Between two updates of a large cluster most pools' functions do not
// change: a pool's FairShareByFitFactor, MaxFitFactorBySuggestion and
// FairShareBySuggestion (see lazy.go) are a pure function of its
// guarantee and limits shares when prepared, of the resources its
// functions may vary in, of its mode, and of its children's functions and
// suggestion scales, in order. So an Engine keeps every pool's functions,
// as far as they were built, with what they were built from, and when it
// prepares the pool again with bitwise the same inputs it takes them up
// where they stopped instead of starting over (restorePool). Only the
// pools whose inputs changed are built again, and with them their
// ancestors, whose inputs include them. Equality is exact (floats by
// their bits), never a hash.
//
// How far a pool's functions get built in an update depends on what the
// update asks of them, and kept functions may have been built further
// than the update would build them. That changes no result: the points
// built are final (each is the one building the whole function gives,
// see lazy.go), every evaluation reads final points only, and the one
// result that used to depend on whether a function happened to be
// complete, a pool's limited demand, no longer does (see limitedDemands).
//
// A child's functions are identified by a number, element.ver: an
// operation's is given by fill whenever its element is filled or its
// function dropped (see opcache.go), a pool's whenever its functions are
// started afresh (startPool); a kept pool keeps its number. Numbers are
// never given twice (tree.verNext only grows), so equal numbers mean the
// same functions, in the same memory: a pool's kept functions hold slices
// of their children's (the children's sum reads them as it goes), and a
// child's memory is only written over (its slices reset, or the arena of
// operations' functions reset) when it is started afresh, under a new
// number, which no kept parent can match.
//
// Invariants:
//   - t.lz[k] (k the pool's index in t.pools) holds the pool's current
//     functions; ver != 0 says they were built from g, lim, varies, fifo
//     and kids (the children's ver and scale, in order) and may be kept.
//     A full build, which may number the pools differently, clears every
//     ver (dropPools); rebuild and reshape keep the pools' numbering
//     (the pools are the same, in the same order).
//   - When the pool is prepared and its inputs are those recorded, its
//     element gets back what the build had set in it (sDone, sEnd, fLo,
//     ver) and its fnS and fnM, and its limited demand is the one
//     limitedDemands computed with these functions, if it did (ldSet;
//     starting the functions afresh clears it): it is a function of the
//     same inputs (the children's limited demands follow from their
//     functions' identities). The children's sum (childSum) asks
//     the tree for more of a child's points by the child's element index,
//     which reshape may change: the indexes are renumbered when the
//     layout (layoutGen) is not the one the sum was started in.
//   - A pool whose functions must be started afresh keeps its children's
//     sum when the children are the same (only its guarantee, limits or
//     varies changed): the sum does not read them, and a further sweep
//     continues from where it stopped (see childSum.run). Its functions
//     get a new number all the same.
//   - Within one update a pool may be prepared several times with
//     different inputs: grantBurst prepares an integral pool's subtree
//     with a temporary integral share, grantRelaxed with temporary
//     limits, and reset discards a pool and its ancestors to be prepared
//     again with their final inputs. A pool prepared twice in one update
//     gets a second slot (lzAlt), and from then on the slot used least
//     recently is the one built over (ties: the alternate), so that each
//     build of the next update finds the matching functions of the last
//     one, swapped into t.lz.
//   - Memory stays bounded: a pool's slots reuse their own buffers (a
//     build over a slot starts its slices from length 0), and a pool has
//     at most two slots.
//
// The package-level Update's engine keeps nothing (see tree.pooled): it
// starts every pool afresh and records nothing.

// kidKey is what a pool's functions read of one child: the identity of its
// functions and its suggestion scale.
type kidKey struct {
	ver   uint64
	scale float64
}

// poolStats counts how the pools (and the root) were prepared in an update.
type poolStats struct {
	// restored: functions kept whole (swapped: from the second slot);
	// fresh: started afresh, sumKept of them keeping the children's sum;
	// renumbered: kept sums whose children were renumbered; distKept:
	// pools whose children got the fair shares of the last update's
	// distribution back (see keepDistribution); bisected: pools whose
	// children's fair shares exceeded theirs by rounding, so that the fit
	// factor was bisected (see distributeChildren).
	restored, swapped, fresh, sumKept, renumbered, distKept, bisected int
}

// newVer returns a function identity never given before.
func (t *tree) newVer() uint64 {
	t.verNext++
	return t.verNext
}

// growPools readies the pools' slots for the tree's pools (a full build
// has cleared them, see dropPools).
func (t *tree) growPools() {
	t.lz = grow(t.lz, len(t.pools))
	t.altIdx = grow(t.altIdx, len(t.pools))
}

// dropPools forgets every pool's functions (a full build: the pools may be
// numbered differently). The slots keep their buffers.
func (t *tree) dropPools() {
	lz := t.lz[:cap(t.lz)]
	for k := range lz {
		lz[k].ver = 0
	}
	clear(t.altIdx[:cap(t.altIdx)])
	t.lzAlt = t.lzAlt[:0]
	t.layoutGen++
}

// initPool prepares pool (or root) i: its functions will be built on
// demand from its children's, with its current guarantee and limits, or
// are kept from an earlier build with the same inputs.
func (t *tree) initPool(i int) {
	e := &t.el[i]
	pd := t.data(e)
	g := pd.sgs.Add(pd.pis)
	lz := &t.lz[e.ord]
	if t.pooled {
		t.startPool(i, lz, &g, false)
		return
	}
	same := t.sameKids(lz, e)
	if same && lz.sameInputs(&g, &e.limitsShare, e.varies) {
		t.poolStats.restored++
		t.restorePool(i, lz)
		return
	}
	var alt *poolFn
	if k := t.altIdx[e.ord]; k > 0 {
		alt = &t.lzAlt[k-1]
		if t.sameKids(alt, e) && alt.sameInputs(&g, &e.limitsShare, e.varies) {
			*lz, *alt = *alt, *lz
			t.poolStats.restored++
			t.poolStats.swapped++
			t.restorePool(i, lz)
			return
		}
	} else if lz.ver != 0 && lz.used == t.gen {
		// Prepared a second time in this update: the pool gets a second
		// slot, which the build below takes over (the first keeps the
		// functions of the first build, for the next update's).
		t.lzAlt = append(t.lzAlt, poolFn{})
		t.altIdx[e.ord] = int32(len(t.lzAlt))
		alt = &t.lzAlt[len(t.lzAlt)-1]
	}
	if alt != nil && lz.ver != 0 && (alt.ver == 0 || alt.used <= lz.used) {
		// The current functions were used more recently: they move to
		// the second slot, and the build takes over the other.
		*lz, *alt = *alt, *lz
		same = t.sameKids(lz, e)
	}
	t.startPool(i, lz, &g, same)
}

// sameKids reports whether lz's functions were built for e's children as
// they are now (their functions' identities and scales, in order).
func (t *tree) sameKids(lz *poolFn, e *element) bool {
	kids := t.children(e)
	if lz.ver == 0 || lz.fifo != e.fifo || len(lz.kids) != len(kids) {
		return false
	}
	for k, c := range kids {
		ce, kk := &t.el[c], &lz.kids[k]
		if kk.ver != ce.ver || math.Float64bits(kk.scale) != math.Float64bits(ce.scale) {
			return false
		}
	}
	return true
}

// sameInputs reports whether lz's functions were built with guarantee g,
// limits lim and varies, bitwise.
func (lz *poolFn) sameInputs(g, lim *Share, varies resourceSet) bool {
	return lz.varies == varies && sameShareBits(&lz.g, g) && sameShareBits(&lz.lim, lim)
}

// sameShareBits is sameBits for shares.
func sameShareBits(a, b *Share) bool {
	return sameBits((*Resources)(a), (*Resources)(b))
}

// restorePool prepares pool i with the functions lz holds (built from its
// current inputs): its element gets back what their build set in it.
func (t *tree) restorePool(i int, lz *poolFn) {
	e := &t.el[i]
	lz.used = t.gen
	e.ver = lz.ver
	e.sDone, e.sEnd, e.fLo = lz.done, lz.sEnd, lz.fLo
	t.fnS[i], t.fnM[i] = nil, nil
	if lz.fSeen > 0 {
		// extend has set them (and set fSeen) at least once.
		t.fnS[i], t.fnM[i] = lz.s, lz.m
	}
	t.renumberSum(e, lz)
}

// startPool prepares pool i to be built afresh in lz from guarantee g and
// its current limits, keeping the children's sum when keepSum (lz's
// functions were built for the same children).
func (t *tree) startPool(i int, lz *poolFn, g *Share, keepSum bool) {
	e := &t.el[i]
	t.poolStats.fresh++
	lz.g, lz.lim, lz.varies, lz.fifo = *g, e.limitsShare, e.varies, e.fifo
	lz.ver, lz.used = 0, t.gen
	if !t.pooled {
		lz.ver = t.newVer()
		if keepSum && lz.sumStarted {
			t.poolStats.sumKept++
			t.renumberSum(e, lz)
		} else {
			lz.sumStarted = false
			kids := t.children(e)
			lz.kids = grow(lz.kids, len(kids))
			for k, c := range kids {
				ce := &t.el[c]
				lz.kids[k] = kidKey{ver: ce.ver, scale: ce.scale}
			}
		}
	} else {
		lz.sumStarted = false
	}
	e.ver = lz.ver
	lz.target, lz.mFinal, lz.sFinal, lz.fSeen = 0, 0, 0, 0
	lz.m, lz.s = lz.m[:0], lz.s[:0]
	lz.done, lz.ldSet, lz.distAt = false, false, 0
	t.fnS[i], t.fnM[i] = nil, nil
	e.sDone = false
}

// renumberSum points the children's sum of pool e, kept from another
// layout of the tree, at its children's element indexes in this one (the
// sum's children are e's children with a positive scale, in order).
func (t *tree) renumberSum(e *element, lz *poolFn) {
	lz.sum.t = t // (the tree's own address, were the Engine copied)
	if !lz.sumStarted || lz.layout == t.layoutGen {
		return
	}
	lz.layout = t.layoutGen
	ch := lz.sum.ch
	if e.fifo || len(ch) == 0 {
		return // the sum of a fifo pool, or of no sloped child, is whole
	}
	t.poolStats.renumbered++
	k := 0
	for _, c := range t.children(e) {
		if t.el[c].scale > 0 {
			ch[k].kid = int32(c)
			k++
		}
	}
}
