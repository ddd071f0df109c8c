package placement

import "github.com/sharetree/sharetree/scheduler"

// Placement is the live scheduling state of one pool tree. The zero value
// is not usable; call New. It is not safe for concurrent use.
type Placement struct {
	root *element
	// pools by name; poolList in (depth, name) order.
	pools    map[scheduler.PoolID]*element
	poolList []*element
	// ops by id; opList sorted by (Order, id).
	ops    map[scheduler.OperationID]*element
	opList []*element

	// total is the cluster total in fixed point; inv holds 1/total per
	// resource (0 where the total is 0).
	total scheduler.Resources
	inv   [scheduler.NumResources]float64

	// seq numbers job starts.
	seq uint64
	// running counts the running jobs.
	running int
	// scratch holds one enumeration buffer per tree depth for Schedule.
	scratch [][]int32
	// gen counts the changes that make a resolved FairShares stale: of the
	// pools and operations that pools and ops index, and of their fair
	// shares and weights (see ResolveFairShares).
	gen uint64
	// resolved counts the ResolveFairShares calls; reheap lists the pools
	// whose heaps ApplyFairShares must rebuild.
	resolved uint64
	reheap   []*element

	// tracking is set while an OperationsCopy follows the operations'
	// changes: changedOps lists the operations changed since its last
	// collect (flagged changed), removedOps the ones removed. opSync
	// counts the collects.
	tracking   bool
	opSync     uint64
	changedOps []*element
	removedOps []opKey
}

// New returns an empty Placement: only the root pool, a zero cluster total
// and no fair shares.
func New() *Placement {
	root := &element{name: scheduler.RootID, pos: -1, limit: unlimitedVec, minPending: unlimitedVec, weight: 1, specWeight: 1}
	return &Placement{
		root:  root,
		pools: map[scheduler.PoolID]*element{},
		ops:   map[scheduler.OperationID]*element{},
	}
}

// SetTotal sets the cluster total that usage and demand shares are
// fractions of. Resources with a total of 0 count as share 0. O(n) when the
// total changes, O(1) otherwise.
func (p *Placement) SetTotal(total scheduler.Resources) {
	if total == p.total {
		return
	}
	p.total = total
	fixed := floorVec(total)
	for r, v := range fixed {
		p.inv[r] = 0
		if v > 0 {
			p.inv[r] = 1 / float64(v)
		}
	}
	p.rekeyAll()
}

// SetFairShares takes every element's FairShare.Total and effective Weight
// from an update's result: the root by scheduler.KindRoot, pools by name,
// operations by id. Elements the result does not mention get a fair share
// of 0 (satisfaction +Inf: served after everyone with a fair share, by
// usage) and their specified weight; elements of the result that the
// Placement does not know are ignored. O(n). It is ResolveFairShares then
// ApplyFairShares.
func (p *Placement) SetFairShares(res *scheduler.Result) {
	var fs FairShares
	p.ResolveFairShares(res, &fs)
	p.ApplyFairShares(&fs)
}

// rekeyAll recomputes every key and restores every heap. O(n).
func (p *Placement) rekeyAll() {
	for _, e := range p.opList {
		e.computeKey(&p.inv)
	}
	for _, e := range p.poolList {
		e.computeKey(&p.inv)
	}
	p.root.computeKey(&p.inv)
	for _, e := range p.poolList {
		e.heapify()
	}
	p.root.heapify()
}

// Stats counts pools, operations and jobs and sums usage and pending
// resources. O(1).
func (p *Placement) Stats() Stats {
	return Stats{
		Pools:       len(p.poolList),
		Operations:  len(p.opList),
		PendingJobs: p.root.pendingJobs,
		RunningJobs: p.running,
		Usage:       p.root.usage.resources(),
		Pending:     p.root.pending.resources(),
	}
}
