package scheduler

import (
	"math"
	"time"
)

// starvationSettings are an element's effective starvation tolerance,
// timeout and aggressive-starvation flag.
type starvationSettings struct {
	tolerance  float64
	timeout    time.Duration
	aggressive bool
}

// inheritStarvationSettings returns element i's effective starvation
// settings, from its parent's (the root takes the tree's), so it runs
// top-down: the root's and the pools' are kept in their data for their
// children (poolData.starvation; operations' are used once, by the report,
// and kept nowhere). Pools inherit unset values; operations can only lower
// the tolerance and only raise the timeout.
func (t *tree) inheritStarvationSettings(i int) starvationSettings {
	e := &t.el[i]
	if i == 0 {
		s := starvationSettings{tolerance: t.cfg.FairShareStarvationTolerance,
			timeout: t.cfg.FairShareStarvationTimeout, aggressive: t.cfg.EnableAggressiveStarvation}
		t.data(e).starvation = s
		return s
	}
	s := t.data(&t.el[e.parent]).starvation
	switch e.kind {
	case KindPool:
		// The pool's own settings, as poolSettings copied them.
		pd := t.data(e)
		if pd.hasTolerance {
			s.tolerance = pd.tolerance
		}
		if pd.hasTimeout {
			s.timeout = pd.timeout
		}
		if pd.hasAggressive {
			s.aggressive = pd.aggressive
		}
		pd.starvation = s
	case KindOperation:
		if e.hasOpTolerance {
			s.tolerance = min(s.tolerance, e.opTolerance)
		}
		if e.hasOpTimeout && e.opTimeout > s.timeout {
			s.timeout = e.opTimeout
		}
	}
	return s
}

// starvation is an element's status and starvation status after one update.
type starvation struct {
	status     Status
	starvation StarvationStatus
	// since is when the element went below its fair share (zero when it is
	// not).
	since time.Time
}

// computeStatus decides below_fair_share for pool or operation i, whose
// starvation settings are set, and advances its starvation status with the
// timeouts, from the time the previous state says it went below its fair
// share. An operation whose fair share covers its demand gets tolerance 1
// (set in set, as reported).
func (t *tree) computeStatus(i int, now time.Time, set *starvationSettings) starvation {
	e := &t.el[i]
	since := t.prevSince[i]
	var out starvation
	tol := set.tolerance
	if e.kind == KindOperation {
		if !e.unschedulable {
			if e.fairShare.DominatesEps(e.demandShare, largeEpsilon) {
				tol = 1.0
			}
			set.tolerance = tol
			out.status = belowFairShare(&e.fairShare, &e.demandShare, &e.usageShare, tol)
		}
	} else {
		out.status = belowFairShare(&e.fairShare, &e.demandShare, &e.usageShare, tol)
	}
	if e.kind == KindPool && !t.cfg.EnablePoolStarvation {
		return starvation{status: out.status}
	}
	switch {
	case out.status == StatusNormal:
		return out // not below: no time, non-starving
	case since.IsZero():
		out.since, out.starvation = now, NonStarving
		return out
	}
	// Below its fair share since before this update: the timeouts
	// decide (an operation's are scaled by its pending jobs).
	timeout := set.timeout
	aggressive := t.cfg.FairShareAggressiveStarvationTimeout
	if e.kind == KindOperation {
		k := min(1, float64(e.pendingJobs)/t.cfg.AllocationCountPreemptionTimeoutCoefficient)
		timeout = time.Duration(float64(timeout) * k)
		aggressive = time.Duration(float64(aggressive) * k)
	}
	out.since = since
	switch {
	case set.aggressive && now.After(since.Add(aggressive)):
		out.starvation = AggressivelyStarving
	case now.After(since.Add(timeout)):
		out.starvation = Starving
	default:
		out.starvation = NonStarving
	}
	return out
}

// belowFairShare: usage is below min(fair share × tolerance, demand) on
// every resource whose demand is not fully granted.
// (strictlyDominatesNonBlocked with a = min(fair × tol, demand), inlined.)
func belowFairShare(fair, demand, usage *Share, tol float64) Status {
	allBlocked, below := true, true
	for r := range fair {
		if fair[r]+epsilon >= demand[r] {
			continue
		}
		allBlocked = false
		if !(min(fair[r]*tol, demand[r]) > usage[r]) {
			below = false
			break
		}
	}
	if allBlocked {
		below = false
		for r := range fair {
			if min(fair[r]*tol, demand[r]) > usage[r] {
				below = true
				break
			}
		}
	}
	if below {
		return StatusBelowFairShare
	}
	return StatusNormal
}

// LocalSatisfaction measures usage against fair share: +Inf when the fair
// share is (nearly) zero; above 1 when some resource is used beyond its fair
// share (the largest ratio); otherwise the largest ratio over resources whose
// demand is not fully granted (the smallest ratio when all are).
func LocalSatisfaction(usage, fair, demand Share) float64 {
	return localSatisfaction(&usage, &fair, &demand)
}

// localSatisfaction is LocalSatisfaction with the vectors by reference.
func localSatisfaction(usage, fair, demand *Share) float64 {
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
