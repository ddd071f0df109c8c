package scheduler

import (
	"math"
	"time"
)

// inheritStarvationSettings computes every element's effective starvation
// tolerance, timeout and aggressive-starvation flag, top-down. Pools inherit
// unset values from their parent (the root takes the tree's); operations can
// only lower the tolerance and only raise the timeout.
func (t *tree) inheritStarvationSettings() {
	for i, e := range t.elements {
		if i == 0 {
			e.tolerance = t.cfg.FairShareStarvationTolerance
			e.starvationTimeout = t.cfg.FairShareStarvationTimeout
			e.aggressiveEnabled = t.cfg.EnableAggressiveStarvation
			continue
		}
		p := t.elements[e.parent]
		e.tolerance, e.starvationTimeout, e.aggressiveEnabled = p.tolerance, p.starvationTimeout, p.aggressiveEnabled
		switch e.kind {
		case KindPool:
			if v := e.pool.FairShareStarvationTolerance; v != nil {
				e.tolerance = *v
			}
			if v := e.pool.FairShareStarvationTimeout; v != nil {
				e.starvationTimeout = *v
			}
			if v := e.pool.EnableAggressiveStarvation; v != nil {
				e.aggressiveEnabled = *v
			}
		case KindOperation:
			if v := e.op.FairShareStarvationTolerance; v != nil {
				e.tolerance = min(e.tolerance, *v)
			}
			if v := e.op.FairShareStarvationTimeout; v != nil && *v > e.starvationTimeout {
				e.starvationTimeout = *v
			}
		}
	}
}

// computeStatuses decides below_fair_share for every pool and operation and
// advances their starvation status with the timeouts.
func (t *tree) computeStatuses(now time.Time, prev *State) {
	for i, e := range t.elements {
		if i == 0 {
			continue
		}
		tol := e.tolerance
		if e.kind == KindOperation {
			if e.op.Unschedulable {
				e.status = StatusNormal
			} else {
				if e.fairShare.AddScalar(largeEpsilon).Dominates(e.demandShare) {
					tol = 1.0
				}
				e.tolerance = tol
				e.status = belowFairShare(e.fairShare, e.demandShare, e.usageShare, tol)
			}
		} else {
			e.status = belowFairShare(e.fairShare, e.demandShare, e.usageShare, tol)
		}

		var since time.Time
		if e.kind == KindPool {
			since = prev.Pools[PoolID(e.name)].BelowFairShareSince
			if !t.cfg.EnablePoolStarvation {
				e.starvation, e.belowFairShareTime = NonStarving, time.Time{}
				continue
			}
		} else {
			since = prev.Operations[OperationID(e.name)].BelowFairShareSince
		}
		timeout := e.starvationTimeout
		aggressive := t.cfg.FairShareAggressiveStarvationTimeout
		if e.kind == KindOperation {
			k := min(1, float64(e.op.PendingJobCount)/t.cfg.AllocationCountPreemptionTimeoutCoefficient)
			timeout = time.Duration(float64(timeout) * k)
			aggressive = time.Duration(float64(aggressive) * k)
		}
		switch {
		case e.status == StatusNormal:
			e.belowFairShareTime, e.starvation = time.Time{}, NonStarving
		case since.IsZero():
			e.belowFairShareTime, e.starvation = now, NonStarving
		case e.aggressiveEnabled && now.After(since.Add(aggressive)):
			e.belowFairShareTime, e.starvation = since, AggressivelyStarving
		case now.After(since.Add(timeout)):
			e.belowFairShareTime, e.starvation = since, Starving
		default:
			e.belowFairShareTime, e.starvation = since, NonStarving
		}
	}
}

// belowFairShare: usage is below min(fair share × tolerance, demand) on
// every resource whose demand is not fully granted.
func belowFairShare(fair, demand, usage Share, tol float64) Status {
	if strictlyDominatesNonBlocked(fair.Scale(tol).Min(demand), usage, fair, demand) {
		return StatusBelowFairShare
	}
	return StatusNormal
}

// LocalSatisfaction measures usage against fair share: +Inf when the fair
// share is (nearly) zero; above 1 when some resource is used beyond its fair
// share (the largest ratio); otherwise the largest ratio over resources whose
// demand is not fully granted (the smallest ratio when all are).
func LocalSatisfaction(usage, fair, demand Share) float64 {
	if fair.MaxComponent() <= epsilon {
		return math.Inf(1)
	}
	over := 0.0
	for r := range usage {
		if usage[r] > fair[r] && fair[r] > 0 {
			over = max(over, usage[r]/fair[r])
		} else if usage[r] > fair[r] {
			over = math.Inf(1)
		}
	}
	if over > 0 {
		return over
	}
	allBlocked := true
	best := 0.0
	for r := range usage {
		if fair[r]+epsilon >= demand[r] {
			continue
		}
		allBlocked = false
		if fair[r] > 0 {
			best = max(best, usage[r]/fair[r])
		}
	}
	if !allBlocked {
		return best
	}
	m := math.Inf(1)
	for r := range usage {
		if fair[r] > 0 {
			m = min(m, usage[r]/fair[r])
		} else if usage[r] == 0 {
			m = min(m, 1)
		}
	}
	if math.IsInf(m, 1) {
		return 1
	}
	return m
}
