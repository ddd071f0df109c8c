package placement

import "github.com/sharetree/sharetree/scheduler"

// Schedule starts jobs on node, which has free resources free, and returns
// them in start order; nil when nothing fits. It repeatedly picks the
// neediest operation (see the package documentation) whose pending job fits
// the remaining free resources and keeps the operation and every ancestor
// within their limits, starts that job and subtracts its resources from the
// free ones; it stops when nothing fits or maxJobs jobs have started
// (maxJobs <= 0: no cap). Each start costs O(depth·log n) plus the search,
// which skips every subtree whose smallest pending job does not fit.
func (p *Placement) Schedule(node scheduler.NodeID, free scheduler.Resources, maxJobs int) []Assignment {
	return p.ScheduleAppend(nil, node, free, maxJobs)
}

// ScheduleAppend is Schedule appending to dst, so that a caller can reuse
// one buffer across heartbeats.
func (p *Placement) ScheduleAppend(dst []Assignment, node scheduler.NodeID, free scheduler.Resources, maxJobs int) []Assignment {
	f := floorVec(free)
	for started := 0; maxJobs <= 0 || started < maxJobs; {
		e, ti := p.find(f)
		if e == nil {
			break
		}
		idx := p.takeClaimed(e, ti)
		if idx < 0 {
			// Every pending job of the task ran in another tree: search
			// again (each such round drops at least one pending job).
			continue
		}
		started++
		t := &e.op.tasks[ti]
		dst = append(dst, Assignment{
			Job:       JobKey{Operation: scheduler.OperationID(e.name), Task: ti, Index: idx},
			Resources: t.spec,
		})
		f = f.sub(t.res)
		p.run(e, ti, idx, node)
	}
	return dst
}

// find returns the neediest operation with a job that fits free, and the
// task of that job; nil when nothing fits.
func (p *Placement) find(free vec) (*element, int) {
	if len(p.root.heap) == 0 || !free.fits(p.root.minPending) {
		return nil, -1
	}
	return p.search(p.root, free, 0)
}

// search enumerates pool's candidates in order (best-first over the heap
// array, without changing it) and returns the first that has a job fitting
// free within its limits. free is already capped by the pool's and its
// ancestors' rooms.
func (p *Placement) search(pool *element, free vec, depth int) (*element, int) {
	h := pool.heap
	// Fast path: the neediest candidate.
	if e, ti := p.try(h[0], free, depth); e != nil {
		return e, ti
	}
	if len(h) == 1 {
		return nil, -1
	}
	for len(p.scratch) <= depth {
		p.scratch = append(p.scratch, nil)
	}
	// aux is a min-heap of heap indices, seeded with the root's children.
	aux := p.scratch[depth][:0]
	aux = pushIndex(pool, aux, 1)
	if len(h) > 2 {
		aux = pushIndex(pool, aux, 2)
	}
	var (
		found *element
		task  = -1
	)
	for len(aux) > 0 {
		var i int32
		i, aux = popIndex(pool, aux)
		if found, task = p.try(h[i], free, depth); found != nil {
			break
		}
		if l := 2*int(i) + 1; l < len(h) {
			aux = pushIndex(pool, aux, int32(l))
			if l+1 < len(h) {
				aux = pushIndex(pool, aux, int32(l+1))
			}
		}
	}
	p.scratch[depth] = aux[:0]
	return found, task
}

// try checks one candidate: it is skipped when its room or free does not
// cover its smallest pending job; an operation answers with its first task
// that fits, a pool is searched.
func (p *Placement) try(c *element, free vec, depth int) (*element, int) {
	if c.limited {
		free = free.min(c.room())
	}
	if !free.fits(c.minPending) {
		return nil, -1
	}
	if c.op != nil {
		if ti := c.op.firstFit(free); ti >= 0 {
			return c, ti
		}
		return nil, -1
	}
	return p.search(c, free, depth+1)
}

// pushIndex and popIndex keep aux, a binary min-heap of indices into
// pool.heap ordered like pool.heap itself.
func pushIndex(pool *element, aux []int32, i int32) []int32 {
	aux = append(aux, i)
	k := len(aux) - 1
	for k > 0 {
		parent := (k - 1) / 2
		if !pool.less(int(aux[k]), int(aux[parent])) {
			break
		}
		aux[k], aux[parent] = aux[parent], aux[k]
		k = parent
	}
	return aux
}

func popIndex(pool *element, aux []int32) (int32, []int32) {
	top := aux[0]
	last := len(aux) - 1
	aux[0] = aux[last]
	aux = aux[:last]
	k, n := 0, len(aux)
	for {
		l := 2*k + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && pool.less(int(aux[r]), int(aux[l])) {
			m = r
		}
		if !pool.less(int(aux[m]), int(aux[k])) {
			break
		}
		aux[k], aux[m] = aux[m], aux[k]
		k = m
	}
	return top, aux
}
