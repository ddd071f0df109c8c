package preemption

import "github.com/sharetree/sharetree/scheduler"

// searchBudget caps the candidate sets the exact search examines per
// starving operation; past it the greedy choice is used. A count, not a
// time, so that results stay deterministic. A variable only so that tests
// can lower it.
var searchBudget = 1 << 16

// search finds the fewest victims among cands (in candidate order) whose
// removal covers deficit without breaking a floor or a pool's protection.
type search struct {
	s       *state
	cands   []*jobState
	deficit scheduler.Resources
	// floor is the victim floor threshold; aggressive is set for an
	// AggressivelyStarving preemptor (see infinite).
	floor      float64
	aggressive bool
	// outside[p] is true when the pool is not on the starving operation's
	// chain, so its protection applies.
	outside []bool
	// removed usage per operation and pool index while a set is built.
	removedOp, removedPool []scheduler.Resources
	// suffixMax[i] is the componentwise maximum of cands[i:].
	suffixMax []scheduler.Resources
	visited   int
	picked    []int
}

// infinite reports whether operation v's floor is infinite: for a Starving
// preemptor, when v's fair share covers its demand.
func (q *search) infinite(v *opState) bool { return !q.aggressive && v.coversDemand }

// valid reports whether adding candidate c to the current set keeps every
// operation at or above its floor and every protected pool at or above its
// guarantee.
func (q *search) valid(c *jobState) bool {
	o := c.op
	u := o.usage.Sub(q.removedOp[o.idx]).Sub(c.Resources)
	if o.belowFloor(u, q.s.total, q.floor, q.infinite(o)) {
		return false
	}
	for _, p := range o.chain {
		if !q.outside[p.idx] {
			continue
		}
		pu := p.usage.Sub(q.removedPool[p.idx]).Sub(c.Resources)
		if belowGuarantee(pu.ShareOf(q.s.total), p.Guarantee) {
			return false
		}
	}
	return true
}

func (q *search) add(c *jobState, sign float64) {
	d := c.Resources.Scale(sign)
	q.removedOp[c.op.idx] = q.removedOp[c.op.idx].Add(d)
	for _, p := range c.op.chain {
		q.removedPool[p.idx] = q.removedPool[p.idx].Add(d)
	}
}

// covered reports whether acc covers the deficit.
func (q *search) covered(acc scheduler.Resources) bool { return fits(acc, q.deficit) }

// run returns the victims' indices in cands, whether the count is proven
// minimal, and whether any set was found.
func (q *search) run() (picked []int, exact, found bool) {
	n := len(q.cands)
	q.suffixMax = make([]scheduler.Resources, n+1)
	for i := n - 1; i >= 0; i-- {
		q.suffixMax[i] = q.suffixMax[i+1].Max(q.cands[i].Resources)
	}
	var all scheduler.Resources
	for _, c := range q.cands {
		all = all.Add(c.Resources)
	}
	if !q.covered(all) {
		return nil, true, false
	}
	for k := 1; k <= n; k++ {
		q.picked = q.picked[:0]
		if q.dfs(0, k, scheduler.Resources{}) {
			return q.picked, true, true
		}
		if q.visited > searchBudget {
			picked, found = q.greedy()
			return picked, false, found
		}
	}
	return nil, true, false
}

// dfs picks m more candidates from cands[from:], in index order, so that
// the first set found is the lexicographically first of its size.
func (q *search) dfs(from, m int, acc scheduler.Resources) bool {
	if m == 0 {
		return q.covered(acc)
	}
	for i := from; i <= len(q.cands)-m; i++ {
		q.visited++
		if q.visited > searchBudget {
			return false
		}
		// Even m copies of the largest remaining amount cannot cover it.
		if !q.covered(acc.Add(q.suffixMax[i].Scale(float64(m)))) {
			return false
		}
		c := q.cands[i]
		if !q.valid(c) {
			continue
		}
		q.add(c, 1)
		q.picked = append(q.picked, i)
		if q.dfs(i+1, m-1, acc.Add(c.Resources)) {
			return true
		}
		q.picked = q.picked[:len(q.picked)-1]
		q.add(c, -1)
	}
	return false
}

// greedy takes every valid candidate in order until the deficit is
// covered, then drops, from the last taken to the first, every victim the
// others cover without.
func (q *search) greedy() ([]int, bool) {
	clear(q.removedOp)
	clear(q.removedPool)
	var picked []int
	var acc scheduler.Resources
	for i, c := range q.cands {
		if q.covered(acc) {
			break
		}
		if q.valid(c) {
			q.add(c, 1)
			picked = append(picked, i)
			acc = acc.Add(c.Resources)
		}
	}
	if !q.covered(acc) {
		return nil, false
	}
	for k := len(picked) - 1; k >= 0; k-- {
		c := q.cands[picked[k]]
		if q.covered(acc.Sub(c.Resources)) {
			acc = acc.Sub(c.Resources)
			picked = append(picked[:k], picked[k+1:]...)
		}
	}
	return picked, true
}
