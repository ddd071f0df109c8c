package preemption

import (
	"cmp"
	"slices"

	"github.com/sharetree/sharetree/scheduler"
)

// Preempt decides which jobs on the view's node to preempt so that starving
// operations can start jobs there. See the package documentation for the
// rules. The view is not modified; an invalid view returns an error that
// wraps ErrInvalidView.
func Preempt(v *View) (Plan, error) {
	if err := v.Validate(); err != nil {
		return Plan{}, err
	}
	s := newState(v)
	maxStarts := v.MaxStarts
	if maxStarts == 0 {
		maxStarts = 1
	}
	var plan Plan
	for _, o := range s.starving() {
		if len(plan.Decisions) >= maxStarts {
			plan.Refusals = append(plan.Refusals, Refusal{Operation: o.ID, Starvation: o.Starvation, Code: RefusalStartLimit,
				Need: o.NextJob, Releasable: s.releasable})
			continue
		}
		d, r := s.attempt(o)
		if d == nil {
			plan.Refusals = append(plan.Refusals, r)
			continue
		}
		s.apply(o, d)
		plan.Decisions = append(plan.Decisions, *d)
	}
	return plan, nil
}

// starving lists the starving operations neediest first: aggressively
// starving before starving, then by ascending local satisfaction, then by
// id.
func (s *state) starving() []*opState {
	type keyed struct {
		o   *opState
		sat float64
	}
	var out []keyed
	for _, o := range s.ops {
		if o.Starvation == scheduler.Starving || o.Starvation == scheduler.AggressivelyStarving {
			out = append(out, keyed{o, scheduler.LocalSatisfaction(o.usage.ShareOf(s.total), o.FairShare, o.Demand)})
		}
	}
	slices.SortFunc(out, func(a, b keyed) int {
		return cmp.Or(cmp.Compare(b.o.Starvation, a.o.Starvation), cmp.Compare(a.sat, b.sat), cmp.Compare(a.o.ID, b.o.ID))
	})
	ops := make([]*opState, len(out))
	for i, k := range out {
		ops[i] = k.o
	}
	return ops
}

// attempt tries to find victims for starving operation o.
func (s *state) attempt(o *opState) (*Decision, Refusal) {
	ref := Refusal{Operation: o.ID, Starvation: o.Starvation, Need: o.NextJob, Releasable: s.releasable}
	th := s.v.Thresholds
	switch {
	case o.PendingJobs == 0:
		ref.Code, ref.Need = RefusalNothingPending, scheduler.Resources{}
		return nil, ref
	case o.wouldBePreemptible(o.NextJob, s.total, th.Preemption):
		ref.Code = RefusalWouldBePreemptible
		return nil, ref
	case !fits(s.v.Node.Total, o.NextJob):
		ref.Code = RefusalNeverFits
		return nil, ref
	case fits(s.releasable, o.NextJob):
		ref.Code = RefusalFitsWithoutPreemption
		return nil, ref
	}
	aggressive := o.Starvation == scheduler.AggressivelyStarving
	q := &search{
		s:           s,
		deficit:     o.NextJob.Sub(s.releasable).Max(scheduler.Resources{}),
		floor:       th.Preemption,
		aggressive:  aggressive,
		outside:     make([]bool, len(s.pools)),
		removedOp:   make([]scheduler.Resources, len(s.ops)),
		removedPool: make([]scheduler.Resources, len(s.pools)),
	}
	if aggressive {
		q.floor = th.Aggressive
	}
	for i := range q.outside {
		q.outside[i] = true
	}
	for _, p := range o.chain {
		q.outside[p.idx] = false
	}
	for _, j := range s.jobs {
		if s.exclude(j, o, q, &ref.Excluded) {
			continue
		}
		q.cands = append(q.cands, j)
		ref.Candidates = ref.Candidates.Add(j.Resources)
	}
	// Candidate order: preemptible before aggressively preemptible, each
	// newest first (s.jobs is newest first; the sort is stable).
	slices.SortStableFunc(q.cands, func(a, b *jobState) int { return cmp.Compare(b.Class, a.Class) })
	picked, exact, found := q.run()
	if !found {
		ref.Code = RefusalNotEnoughPreemptible
		return nil, ref
	}
	d := &Decision{Operation: o.ID, Starvation: o.Starvation, Start: o.NextJob, Exact: exact}
	for _, i := range picked {
		c := q.cands[i]
		d.Victims = append(d.Victims, Victim{Job: c.ID, Operation: c.Operation, Resources: c.Resources, Seq: c.Seq,
			Reason: Reason{For: o.ID, ForStarvation: o.Starvation, Class: c.Class, VictimFloor: q.floor, Thresholds: th}})
	}
	return d, Refusal{}
}

// exclude reports whether job j can never be a victim for starving
// operation o, counting the first rule it breaks.
func (s *state) exclude(j *jobState, o *opState, q *search, ex *Exclusions) bool {
	v := j.op
	switch {
	case j.gone:
		ex.Interrupting++
	case v == o:
		ex.OwnOperation++
	case v.Mode == ModeGraceful:
		ex.GracefulOperation++
	case v.Starvation != scheduler.NonStarving:
		ex.StarvingOperation++
	case !MayTake(o.Starvation, j.Class):
		ex.Class++
	case s.starvingPoolOutside(v, q):
		ex.PoolProtection++
	default:
		if v.belowFloor(v.usage.Sub(j.Resources), s.total, q.floor, q.infinite(v)) {
			ex.OperationFloor++
			return true
		}
		if !q.valid(j) {
			ex.PoolProtection++
			return true
		}
		return false
	}
	return true
}

// starvingPoolOutside reports whether one of v's pools outside the starving
// operation's chain is itself starving.
func (s *state) starvingPoolOutside(v *opState, q *search) bool {
	for _, p := range v.chain {
		if q.outside[p.idx] && p.Starvation != scheduler.NonStarving {
			return true
		}
	}
	return false
}

// apply moves usage as decision d says: the victims leave (their
// resources become releasable), the started job takes its resources.
func (s *state) apply(o *opState, d *Decision) {
	for _, vic := range d.Victims {
		for _, j := range s.jobs {
			if j.ID != vic.Job {
				continue
			}
			j.gone = true
			j.op.usage = j.op.usage.Sub(j.Resources)
			for _, p := range j.op.chain {
				p.usage = p.usage.Sub(j.Resources)
			}
			s.releasable = s.releasable.Add(j.Resources)
		}
	}
	o.usage = o.usage.Add(d.Start)
	for _, p := range o.chain {
		p.usage = p.usage.Add(d.Start)
	}
	s.releasable = s.releasable.Sub(d.Start)
}
