package placement

import (
	"fmt"

	"github.com/sharetree/sharetree/scheduler"
)

// UpdateOperation changes a registered operation's weight (0 means 1) and
// resource limits (absent resources unlimited) at run time. The weight is
// the tie-break weight until the next SetFairShares brings the engine's.
// Running jobs are kept even when the new limits are below the usage; no
// new job starts until the usage is back under them. Errors wrap
// ErrUnknownOperation or ErrInvalidOperation, and change nothing.
// O(depth·log n).
func (p *Placement) UpdateOperation(id scheduler.OperationID, weight float64, limits scheduler.PartialResources) error {
	e := p.ops[id]
	if e == nil {
		return fmt.Errorf("%w: %q", ErrUnknownOperation, id)
	}
	weight, err := checkWeightLimits(id, weight, limits)
	if err != nil {
		return err
	}
	e.specWeight, e.weight = weight, weight
	e.limit, e.limited = limitVec(limits), !limits.IsEmpty()
	p.gen++ // a resolved FairShares compared the old weight
	p.refresh(e)
	return nil
}

// MoveOperation moves a registered operation, with its running jobs, usage
// and pending jobs, into pool ("" is the root). Errors wrap
// ErrUnknownOperation or ErrUnknownPool, and change nothing.
// O(depth·log n).
func (p *Placement) MoveOperation(id scheduler.OperationID, pool scheduler.PoolID) error {
	e := p.ops[id]
	if e == nil {
		return fmt.Errorf("%w: %q", ErrUnknownOperation, id)
	}
	parent := p.root
	if pool != "" {
		if parent = p.pools[pool]; parent == nil {
			return fmt.Errorf("%w: operation %q cannot move to pool %q", ErrUnknownPool, id, pool)
		}
	}
	if parent == e.parent {
		return nil
	}
	// Leave the old chain, then join the new one.
	p.detach(e)
	e.op.removed = false
	e.parent, e.depth, e.op.pool = parent, parent.depth+1, pool
	for a := parent; a != nil; a = a.parent {
		a.usage = a.usage.add(e.usage)
		a.pending = a.pending.add(e.pending)
		a.pendingJobs += e.pendingJobs
	}
	p.refresh(e)
	return nil
}
