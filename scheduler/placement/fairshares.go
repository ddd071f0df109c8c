package placement

import (
	"math"

	"github.com/sharetree/sharetree/scheduler"
)

// FairShares is an update's fair shares looked up among a Placement's
// elements, ready to apply: ResolveFairShares fills it, ApplyFairShares
// sets it. Splitting SetFairShares in two lets a caller that guards the
// Placement with a lock do the lookups (a map lookup per pool and
// operation: most of the work) before taking it. The zero value is
// ready; its buffer is reused from one update to the next.
type FairShares struct {
	gen  uint64
	res  *scheduler.Result
	ents []fairShare
}

// fairShare is one element's fair share and effective weight.
type fairShare struct {
	e      *element
	fair   scheduler.Share
	weight float64
}

// ResolveFairShares looks up the root, pools and operations res names into
// fs (replacing what it held). It only reads the Placement's index of pools
// and operations: it may run while others read the Placement, not while
// anything adds or removes pools or operations. O(n).
func (p *Placement) ResolveFairShares(res *scheduler.Result, fs *FairShares) {
	fs.gen, fs.res, fs.ents = p.gen, res, fs.ents[:0]
	if res == nil {
		return
	}
	for i := range res.Elements {
		er := &res.Elements[i]
		var e *element
		switch er.Kind {
		case scheduler.KindRoot:
			e = p.root
		case scheduler.KindPool:
			e = p.pools[scheduler.PoolID(er.Name)]
		case scheduler.KindOperation:
			e = p.ops[scheduler.OperationID(er.Name)]
		}
		if e != nil {
			fs.ents = append(fs.ents, fairShare{e: e, fair: er.FairShare.Total, weight: er.Weight})
		}
	}
}

// ApplyFairShares sets the fair shares fs resolved, exactly as
// SetFairShares sets res's. When pools or operations were added or removed
// since ResolveFairShares, it looks them up again first. fs forgets the
// Result. O(n) comparisons; only the elements whose fair share or weight
// changed are re-keyed, and only the heaps holding them are rebuilt, so
// that an update that changes little costs little more than the
// comparisons.
//
// The heaps end up exactly as rekeyAll would leave them, array for array:
// every key is fresh at all times (every change of usage or pending jobs
// refreshes the keys on its path), so rekeyAll would only change the keys
// of the elements whose fair share changed; and as keys and weights are
// never NaN, before is a strict total order, so that its heapify moves
// nothing in a valid heap none of whose keys or weights changed.
func (p *Placement) ApplyFairShares(fs *FairShares) {
	if fs.gen != p.gen {
		p.ResolveFairShares(fs.res, fs)
	}
	fs.res = nil
	p.applied++
	stamp := p.applied
	// The update's elements: the first entry of an element sets both its
	// fair share and its weight (the specified one when the update gives
	// none), a later one for the same element overrides them.
	covered := 0
	for i := range fs.ents {
		f := &fs.ents[i]
		e, w := f.e, f.weight
		if e.applied != stamp {
			e.applied = stamp
			covered++
			if !(w > 0) {
				w = e.specWeight
			}
		} else if !(w > 0) {
			w = e.weight
		}
		p.setFairShare(e, f.fair, w)
	}
	// The others get no fair share and their specified weight; usually the
	// update covers every element.
	if covered < 1+len(p.poolList)+len(p.opList) {
		for _, list := range [...][]*element{{p.root}, p.poolList, p.opList} {
			for _, e := range list {
				if e.applied != stamp {
					p.setFairShare(e, scheduler.Share{}, e.specWeight)
				}
			}
		}
	}
	for _, e := range p.reheap {
		e.heapify()
		e.needsHeapify = false
	}
	clear(p.reheap)
	p.reheap = p.reheap[:0]
}

// setFairShare sets e's fair share and weight. When either changes (bit
// for bit), e's key is recomputed and its parent's heap marked for
// rebuilding when e is in it.
func (p *Placement) setFairShare(e *element, fair scheduler.Share, weight float64) {
	if sameBits(e.fair, fair) && math.Float64bits(e.weight) == math.Float64bits(weight) {
		return
	}
	e.fair, e.weight = fair, weight
	e.computeKey(&p.inv)
	if par := e.parent; par != nil && e.pos >= 0 && !par.needsHeapify {
		par.needsHeapify = true
		p.reheap = append(p.reheap, par)
	}
}

// sameBits reports whether a and b are equal bit for bit (unlike ==, which
// takes 0 and -0 for equal and NaN for different from itself).
func sameBits(a, b scheduler.Share) bool {
	for r := range a {
		if math.Float64bits(a[r]) != math.Float64bits(b[r]) {
			return false
		}
	}
	return true
}
