package preemption

import (
	"cmp"
	"slices"

	"github.com/sharetree/sharetree/scheduler"
)

// epsilon absorbs float noise in share comparisons.
const epsilon = 1e-9

// state is a working copy of a view: usage moves as decisions are made,
// the view itself is never written.
type state struct {
	v     *View
	total scheduler.Resources
	// ops sorted by id; pools sorted by id; jobs newest first.
	ops   []*opState
	pools []*poolState
	jobs  []*jobState
	// releasable is the node's free resources plus those of jobs being
	// interrupted or taken by earlier decisions, minus earlier starts and
	// what earlier preemptions reserved (Node.Reserved).
	releasable scheduler.Resources
}

type opState struct {
	*Operation
	idx   int
	usage scheduler.Resources
	chain []*poolState
	// coversDemand: the fair share covers a non-zero demand, so nothing of
	// the operation is preemptible for a Starving operation (the
	// classification's infinite second bound).
	coversDemand bool
}

type poolState struct {
	*Pool
	idx   int
	usage scheduler.Resources
}

type jobState struct {
	*Job
	op *opState
	// gone: interrupting in the view, or taken by an earlier decision.
	gone bool
}

// newState indexes a validated view.
func newState(v *View) *state {
	s := &state{v: v, total: v.Total, releasable: v.Node.Free}
	poolByID := make(map[scheduler.PoolID]*poolState, len(v.Pools))
	for i := range v.Pools {
		p := &poolState{Pool: &v.Pools[i], usage: v.Pools[i].Usage}
		s.pools = append(s.pools, p)
		poolByID[p.ID] = p
	}
	slices.SortFunc(s.pools, func(a, b *poolState) int { return cmp.Compare(a.ID, b.ID) })
	for i, p := range s.pools {
		p.idx = i
	}
	opByID := make(map[scheduler.OperationID]*opState, len(v.Operations))
	for i := range v.Operations {
		o := &opState{Operation: &v.Operations[i], usage: v.Operations[i].Usage}
		o.coversDemand = scheduler.FairShareCoversDemand(o.FairShare, o.Demand)
		for _, id := range o.Pools {
			o.chain = append(o.chain, poolByID[id])
		}
		s.ops = append(s.ops, o)
		opByID[o.ID] = o
	}
	slices.SortFunc(s.ops, func(a, b *opState) int { return cmp.Compare(a.ID, b.ID) })
	for i, o := range s.ops {
		o.idx = i
	}
	for i := range v.Jobs {
		j := &jobState{Job: &v.Jobs[i], op: opByID[v.Jobs[i].Operation], gone: v.Jobs[i].Interrupting}
		if j.gone {
			s.releasable = s.releasable.Add(j.Resources)
		}
		s.jobs = append(s.jobs, j)
	}
	s.releasable = s.releasable.Sub(v.Node.Reserved)
	slices.SortFunc(s.jobs, func(a, b *jobState) int { return newestFirst(a.Job, b.Job) })
	return s
}

// newestFirst orders jobs by descending Seq, then ascending id.
func newestFirst(a, b *Job) int {
	return cmp.Or(cmp.Compare(b.Seq, a.Seq), cmp.Compare(a.ID, b.ID))
}

// belowFloor reports whether usage u of operation o is below k × its fair
// share in the classification's sense (scheduler.BelowBound): strictly
// below its non-preemptible usage in every resource, or (unless infinite
// says the bound is infinite, when it always is) strictly below k × fair
// share on every resource whose demand the fair share does not cover.
// Float noise of epsilon counts as equal.
func (o *opState) belowFloor(u, total scheduler.Resources, k float64, infinite bool) bool {
	if infinite {
		return true
	}
	return scheduler.BelowBound(u, o.NonPreemptibleUsage, o.FairShare.Scale(k), total, o.FairShare, o.Demand, epsilon)
}

// belowGuarantee reports whether a pool using share u is below its
// guarantee g: u_r < g_r on every resource the guarantee covers (g_r > 0).
// A pool without a guarantee is never below it.
func belowGuarantee(u, g scheduler.Share) bool {
	covered := false
	for r := range g {
		if g[r] <= epsilon {
			continue
		}
		covered = true
		if u[r]+epsilon >= g[r] {
			return false
		}
	}
	return covered
}

// wouldBePreemptible reports whether operation o starting a job of next
// would make it preemptible at once: the job itself would be classified
// Preemptible (o's usage before it is not below Preemption × fair share),
// or o's usage after it would exceed Preemption × fair share on a resource
// whose demand the fair share does not cover. Neither can happen while the
// usage after the start stays strictly below the non-preemptible usage, or
// when the fair share covers the demand.
func (o *opState) wouldBePreemptible(next, total scheduler.Resources, th float64) bool {
	after := o.usage.Add(next)
	if scheduler.BelowUsageThreshold(after, o.NonPreemptibleUsage) || o.coversDemand {
		return false
	}
	if !o.belowFloor(o.usage, total, th, false) {
		return true
	}
	share, bound := after.ShareOf(total), o.FairShare.Scale(th)
	for r := range share {
		if scheduler.ResourceBlocked(o.FairShare, o.Demand, scheduler.ResourceType(r)) {
			continue
		}
		if share[r] > bound[r]+epsilon {
			return true
		}
	}
	return false
}

// fits reports whether need fits in avail, up to float noise.
func fits(avail, need scheduler.Resources) bool {
	for r := range need {
		if avail[r]+float64(epsilon*max(1, need[r])) < need[r] {
			return false
		}
	}
	return true
}
