package placement

import (
	"math"

	"github.com/sharetree/sharetree/scheduler"
)

// FairShares is an update's fair shares looked up among a Placement's
// elements and compared with theirs, ready to apply: ResolveFairShares
// fills it, ApplyFairShares sets it. Splitting SetFairShares in two lets a
// caller that guards the Placement with a lock do the lookups (a map
// lookup per pool and operation) and the comparisons (one per element)
// before taking it, and hold it only to set what changed. The zero value
// is ready; its buffers are reused from one update to the next.
type FairShares struct {
	gen uint64
	res *scheduler.Result
	// ents are the update's elements, each once with the fair share and
	// weight (<= 0: the specified one) its entries leave it.
	ents []fairShare
	// changes are the elements whose fair share or weight (the one to
	// set) differs from theirs, bit for bit.
	changes []fairShare
}

// fairShare is one element's fair share and effective weight.
type fairShare struct {
	e      *element
	fair   scheduler.Share
	weight float64
}

// ResolveFairShares looks up the root, pools and operations res names into
// fs (replacing what it held) and notes which of the Placement's elements
// the update changes. It reads the Placement's index of pools and
// operations and the elements' fair shares and weights, and writes only fs
// and marks that nothing else reads: it may run while others schedule or
// end jobs, not while anything adds or removes pools or operations or
// sets weights or fair shares (AddOperation, RemoveOperation, SetPools,
// UpdateOperation, SetFairShares, ApplyFairShares). O(n).
func (p *Placement) ResolveFairShares(res *scheduler.Result, fs *FairShares) {
	fs.gen, fs.res, fs.ents, fs.changes = p.gen, res, fs.ents[:0], fs.changes[:0]
	p.resolved++
	stamp := p.resolved
	if res != nil {
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
			switch {
			case e == nil:
			case e.resolved != stamp:
				e.resolved, e.ent = stamp, len(fs.ents)
				fs.ents = append(fs.ents, fairShare{e: e, fair: er.FairShare.Total, weight: er.Weight})
			default:
				// A later entry for the same element sets its fair share,
				// and its weight when it gives one.
				f := &fs.ents[e.ent]
				f.fair = er.FairShare.Total
				if er.Weight > 0 {
					f.weight = er.Weight
				}
			}
		}
	}
	for i := range fs.ents {
		f := &fs.ents[i]
		w := f.weight
		if !(w > 0) {
			w = f.e.specWeight
		}
		fs.compare(f.e, f.fair, w)
	}
	// The others get no fair share and their specified weight; usually the
	// update names every element.
	if len(fs.ents) < 1+len(p.poolList)+len(p.opList) {
		for _, list := range [...][]*element{{p.root}, p.poolList, p.opList} {
			for _, e := range list {
				if e.resolved != stamp {
					fs.compare(e, scheduler.Share{}, e.specWeight)
				}
			}
		}
	}
}

// compare notes e as changed unless it has fair and weight, bit for bit.
func (fs *FairShares) compare(e *element, fair scheduler.Share, weight float64) {
	if !sameBits(e.fair, fair) || math.Float64bits(e.weight) != math.Float64bits(weight) {
		fs.changes = append(fs.changes, fairShare{e: e, fair: fair, weight: weight})
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

// ApplyFairShares sets the fair shares fs resolved, exactly as
// SetFairShares sets res's. When pools or operations were added or
// removed, or weights or fair shares set, since ResolveFairShares, it
// resolves again first (O(n)). fs forgets the Result. Only the elements
// whose fair share or weight changed are re-keyed, and only the heaps
// holding them are rebuilt: O(changes + the sizes of those heaps).
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
	for i := range fs.changes {
		f := &fs.changes[i]
		e := f.e
		e.fair, e.weight = f.fair, f.weight
		e.computeKey(&p.inv)
		if par := e.parent; par != nil && e.pos >= 0 && !par.needsHeapify {
			par.needsHeapify = true
			p.reheap = append(p.reheap, par)
		}
	}
	for _, e := range p.reheap {
		e.heapify()
		e.needsHeapify = false
	}
	clear(p.reheap)
	p.reheap = p.reheap[:0]
	if len(fs.changes) > 0 {
		p.gen++ // other FairShares compared with the old values
	}
}
