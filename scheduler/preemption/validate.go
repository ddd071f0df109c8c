package preemption

import (
	"fmt"
	"math"

	"github.com/sharetree/sharetree/scheduler"
)

// Validate checks the view's contract and names the first field that breaks
// it; the error wraps ErrInvalidView.
func (v *View) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidView, fmt.Sprintf(format, args...))
	}
	if err := finiteVec(v.Node.Total, false); err != nil {
		return bad("node %q total: %v", v.Node.ID, err)
	}
	if err := finiteVec(v.Node.Free, true); err != nil {
		return bad("node %q free: %v", v.Node.ID, err)
	}
	if err := finiteVec(v.Node.Reserved, false); err != nil {
		return bad("node %q reserved: %v", v.Node.ID, err)
	}
	if err := finiteVec(v.Total, false); err != nil {
		return bad("cluster total: %v", err)
	}
	th := v.Thresholds
	if !(th.Preemption > 0) || math.IsInf(th.Preemption, 0) {
		return bad("preemption_satisfaction_threshold must be a finite number > 0, got %g", th.Preemption)
	}
	if !(th.Aggressive >= 0 && th.Aggressive <= th.Preemption) {
		return bad("aggressive_preemption_satisfaction_threshold must be in [0, %g], got %g", th.Preemption, th.Aggressive)
	}
	if v.MaxStarts < 0 {
		return bad("max starts must be >= 0, got %d", v.MaxStarts)
	}
	if t := v.GracefulTolerance; !(t >= 0) || math.IsInf(t, 0) {
		return bad("graceful tolerance must be a finite number >= 0, got %g", t)
	}
	pools := make(map[scheduler.PoolID]bool, len(v.Pools))
	for i := range v.Pools {
		p := &v.Pools[i]
		if !newID(pools, p.ID) {
			return bad("pool %d: id %q is empty or repeated", i, p.ID)
		}
		if err := finiteShare(p.Guarantee); err != nil {
			return bad("pool %q guarantee: %v", p.ID, err)
		}
		if err := finiteVec(p.Usage, false); err != nil {
			return bad("pool %q usage: %v", p.ID, err)
		}
	}
	ops := make(map[scheduler.OperationID]bool, len(v.Operations))
	for i := range v.Operations {
		o := &v.Operations[i]
		if !newID(ops, o.ID) {
			return bad("operation %d: id %q is empty or repeated", i, o.ID)
		}
		for _, p := range o.Pools {
			if !pools[p] {
				return bad("operation %q: pool %q of its chain is not in the view", o.ID, p)
			}
		}
		if err := finiteShare(o.FairShare); err != nil {
			return bad("operation %q fair share: %v", o.ID, err)
		}
		if err := finiteShare(o.Demand); err != nil {
			return bad("operation %q demand: %v", o.ID, err)
		}
		if err := finiteVec(o.Usage, false); err != nil {
			return bad("operation %q usage: %v", o.ID, err)
		}
		if err := finiteVec(o.NextJob, false); err != nil {
			return bad("operation %q next job: %v", o.ID, err)
		}
		for r, x := range o.NonPreemptibleUsage {
			if math.IsNaN(x) || x < 0 {
				return bad("operation %q non-preemptible usage: %s must be >= 0, got %g", o.ID, scheduler.ResourceType(r), x)
			}
		}
		if o.PendingJobs < 0 {
			return bad("operation %q pending jobs must be >= 0, got %d", o.ID, o.PendingJobs)
		}
	}
	jobs := make(map[JobID]bool, len(v.Jobs))
	for i := range v.Jobs {
		j := &v.Jobs[i]
		if !newID(jobs, j.ID) {
			return bad("job %d: id %q is empty or repeated", i, j.ID)
		}
		if !ops[j.Operation] {
			return bad("job %q: operation %q is not in the view", j.ID, j.Operation)
		}
		if err := finiteVec(j.Resources, false); err != nil {
			return bad("job %q resources: %v", j.ID, err)
		}
		if j.Class < scheduler.NonPreemptible || j.Class > scheduler.Preemptible {
			return bad("job %q: unknown preemption class %d", j.ID, int(j.Class))
		}
	}
	return nil
}

// newID records id in seen; false, recording nothing, when id is empty or
// already seen.
func newID[ID ~string](seen map[ID]bool, id ID) bool {
	if id == "" || seen[id] {
		return false
	}
	seen[id] = true
	return true
}

// finiteVec checks that every amount is finite and, unless negative is
// allowed, >= 0.
func finiteVec(r scheduler.Resources, negative bool) error {
	for i, x := range r {
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			return fmt.Errorf("%s must be finite, got %g", scheduler.ResourceType(i), x)
		case !negative && x < 0:
			return fmt.Errorf("%s must be >= 0, got %g", scheduler.ResourceType(i), x)
		}
	}
	return nil
}

func finiteShare(s scheduler.Share) error { return finiteVec(scheduler.Resources(s), false) }
