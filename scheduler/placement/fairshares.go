package placement

import "github.com/sharetree/sharetree/scheduler"

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
// Result. O(n).
func (p *Placement) ApplyFairShares(fs *FairShares) {
	if fs.gen != p.gen {
		p.ResolveFairShares(fs.res, fs)
	}
	fs.res = nil
	p.root.fair, p.root.weight = scheduler.Share{}, p.root.specWeight
	for _, e := range p.poolList {
		e.fair, e.weight = scheduler.Share{}, e.specWeight
	}
	for _, e := range p.opList {
		e.fair, e.weight = scheduler.Share{}, e.specWeight
	}
	for i := range fs.ents {
		f := &fs.ents[i]
		f.e.fair = f.fair
		if f.weight > 0 {
			f.e.weight = f.weight
		}
	}
	p.rekeyAll()
}
