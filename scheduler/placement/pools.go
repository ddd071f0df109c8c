package placement

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/sharetree/sharetree/scheduler"
)

// SetPools replaces the pool structure. Operations keep their jobs and
// usage; pools keep their fair share and weight by name until the next
// SetFairShares. Nothing changes when an error is returned: an invalid tree
// wraps ErrInvalidPools, a missing pool that still holds operations wraps
// ErrPoolInUse. O(n·depth).
func (p *Placement) SetPools(pools []PoolSpec) error {
	specs, depth, err := validatePools(pools)
	if err != nil {
		return err
	}
	for _, op := range p.opList {
		if pool := op.op.pool; pool != "" {
			if _, ok := specs[pool]; !ok {
				return fmt.Errorf("%w: pool %q is missing but holds operation %q", ErrPoolInUse, pool, op.name)
			}
		}
	}

	root := p.root
	root.heap, root.usage, root.pending, root.pendingJobs = root.heap[:0], vec{}, vec{}, 0
	newPools := make(map[scheduler.PoolID]*element, len(pools))
	list := make([]*element, 0, len(pools))
	for _, s := range pools {
		e := &element{
			name: string(s.Name), mode: s.Mode, pos: -1, depth: depth[s.Name],
			limit: limitVec(s.ResourceLimits), limited: !s.ResourceLimits.IsEmpty(),
			minPending: unlimitedVec, specWeight: 1, weight: 1,
		}
		if old, ok := p.pools[s.Name]; ok {
			e.fair, e.weight = old.fair, old.weight
		}
		newPools[s.Name] = e
		list = append(list, e)
	}
	for _, s := range pools {
		e := newPools[s.Name]
		e.parent = root
		if s.Parent != "" {
			e.parent = newPools[s.Parent]
		}
	}
	slices.SortFunc(list, func(a, b *element) int {
		return cmp.Or(cmp.Compare(a.depth, b.depth), cmp.Compare(a.name, b.name))
	})
	p.pools, p.poolList = newPools, list
	p.gen++

	for _, op := range p.opList {
		op.parent = root
		if pool := op.op.pool; pool != "" {
			op.parent = newPools[pool]
		}
		op.depth = op.parent.depth + 1
		for a := op.parent; a != nil; a = a.parent {
			a.usage = a.usage.add(op.usage)
			a.pending = a.pending.add(op.pending)
			a.pendingJobs += op.pendingJobs
		}
	}
	p.rebuildHeaps()
	return nil
}

// rebuildHeaps rebuilds every candidate heap and minPending bottom-up. O(n).
func (p *Placement) rebuildHeaps() {
	for _, op := range p.opList {
		op.computeKey(&p.inv)
		op.pos = -1
		if op.candidate() {
			op.contrib = op.minPending
			op.pos = len(op.parent.heap)
			op.parent.heap = append(op.parent.heap, op)
		}
	}
	for i := len(p.poolList) - 1; i >= 0; i-- {
		e := p.poolList[i]
		e.recomputeMin()
		e.heapify()
		e.computeKey(&p.inv)
		e.pos = -1
		if e.candidate() {
			e.contrib = e.minPending
			e.pos = len(e.parent.heap)
			e.parent.heap = append(e.parent.heap, e)
		}
	}
	p.root.recomputeMin()
	p.root.heapify()
	p.root.computeKey(&p.inv)
}

// validatePools checks the specs and returns them by name with each pool's
// depth (1 under the root).
func validatePools(pools []PoolSpec) (map[scheduler.PoolID]*PoolSpec, map[scheduler.PoolID]int, error) {
	specs := make(map[scheduler.PoolID]*PoolSpec, len(pools))
	for i := range pools {
		s := &pools[i]
		switch {
		case s.Name == "" || s.Name == scheduler.RootID:
			return nil, nil, fmt.Errorf("%w: pool %d has the reserved name %q", ErrInvalidPools, i, s.Name)
		case specs[s.Name] != nil:
			return nil, nil, fmt.Errorf("%w: pool %q is defined twice", ErrInvalidPools, s.Name)
		case s.Mode != scheduler.ModeFairShare && s.Mode != scheduler.ModeFIFO:
			return nil, nil, fmt.Errorf("%w: pool %q has unknown mode %d", ErrInvalidPools, s.Name, int(s.Mode))
		}
		if r, ok := validLimits(s.ResourceLimits); !ok {
			return nil, nil, fmt.Errorf("%w: pool %q resource_limits.%s must be >= 0, got %g", ErrInvalidPools, s.Name, r, s.ResourceLimits.Values[r])
		}
		specs[s.Name] = s
	}
	for i := range pools {
		s := &pools[i]
		if s.Parent == "" {
			continue
		}
		par := specs[s.Parent]
		if par == nil {
			return nil, nil, fmt.Errorf("%w: pool %q has unknown parent %q", ErrInvalidPools, s.Name, s.Parent)
		}
		if par.Mode == scheduler.ModeFIFO {
			return nil, nil, fmt.Errorf("%w: pool %q is under fifo pool %q (fifo pools hold operations only)", ErrInvalidPools, s.Name, s.Parent)
		}
	}
	depth := make(map[scheduler.PoolID]int, len(pools))
	var chain []scheduler.PoolID
	for i := range pools {
		name := pools[i].Name
		chain = chain[:0]
		d := 0
		for cur := name; cur != ""; cur = specs[cur].Parent {
			if known, ok := depth[cur]; ok {
				d = known
				break
			}
			if len(chain) > len(pools) {
				return nil, nil, fmt.Errorf("%w: pool %q is on a parent cycle", ErrInvalidPools, name)
			}
			chain = append(chain, cur)
		}
		for j := len(chain) - 1; j >= 0; j-- {
			d++
			depth[chain[j]] = d
		}
	}
	return specs, depth, nil
}
