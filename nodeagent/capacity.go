package nodeagent

import (
	"maps"
	"slices"

	"github.com/sharetree/sharetree/scheduler"
)

// capacityTolerance is the relative slack of the capacity check: amounts
// are float64, and a sum of many jobs' shares of a resource may round
// past the node's total by an ulp or two.
const capacityTolerance = 1e-9

// checkCapacityLocked runs when j has just joined the running jobs (and
// a.allocated): it counts and logs j if the running jobs now hold more
// than the node's resources, and tells Config.OnJobStart. a.allocated is
// kept by adding and subtracting jobs as they come and go, so that a start
// costs O(1); since those roundings accumulate, a sum that looks over
// capacity is summed again from the running jobs (in job id order, so that
// map order decides nothing) before it counts.
func (a *Agent) checkCapacityLocked(j *job) {
	over := a.overCapacity(a.allocated)
	if over {
		var exact scheduler.Resources
		for _, id := range slices.Sorted(maps.Keys(a.running)) {
			exact = exact.Add(a.running[id].res)
		}
		a.allocated = exact
		over = a.overCapacity(exact)
	}
	if over {
		a.counters.overCapacity.Add(1)
		a.log.Warn("a job started beyond the node's capacity", "job", j.id, "operation", j.opID,
			"allocated", a.allocated, "capacity", a.cfg.Resources)
	}
	if a.cfg.OnJobStart != nil {
		a.cfg.OnJobStart(JobStart{ID: j.id, OperationID: j.opID, Resources: j.res, Allocated: a.allocated, OverCapacity: over})
	}
}

// overCapacity reports whether alloc exceeds the node's resources in some
// resource, beyond capacityTolerance.
func (a *Agent) overCapacity(alloc scheduler.Resources) bool {
	for r, v := range alloc {
		limit := a.cfg.Resources[r]
		if v > limit+float64(capacityTolerance*max(limit, 1)) {
			return true
		}
	}
	return false
}
