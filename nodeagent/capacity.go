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

// checkCapacityLocked runs when j has just joined the running jobs: it
// sums what they hold (in job id order, so the sum does not depend on map
// order), counts and logs j if the sum exceeds the node's resources, and
// tells Config.OnJobStart.
func (a *Agent) checkCapacityLocked(j *job) {
	var alloc scheduler.Resources
	for _, id := range slices.Sorted(maps.Keys(a.running)) {
		for r, v := range a.running[id].res {
			alloc[r] += v
		}
	}
	over := false
	for r, v := range alloc {
		limit := a.cfg.Resources[r]
		if v > limit+float64(capacityTolerance*max(limit, 1)) {
			over = true
		}
	}
	if over {
		a.counters.overCapacity.Add(1)
		a.log.Warn("a job started beyond the node's capacity", "job", j.id, "operation", j.opID,
			"allocated", alloc, "capacity", a.cfg.Resources)
	}
	if a.cfg.OnJobStart != nil {
		a.cfg.OnJobStart(JobStart{ID: j.id, OperationID: j.opID, Resources: j.res, Allocated: alloc, OverCapacity: over})
	}
}
