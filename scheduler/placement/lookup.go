package placement

import "github.com/sharetree/sharetree/scheduler"

// Operation reports one operation's live state, as Operations does for all
// of them; false for an unknown (or removed) operation. O(1).
func (p *Placement) Operation(id scheduler.OperationID) (OperationUsage, bool) {
	e := p.ops[id]
	if e == nil {
		return OperationUsage{}, false
	}
	return e.usageReport(), true
}

// usageReport is an operation element's OperationUsage.
func (e *element) usageReport() OperationUsage {
	u := OperationUsage{
		ID: scheduler.OperationID(e.name), Pool: e.op.pool, Order: e.order,
		Usage:           e.usage.resources(),
		Demand:          e.usage.add(e.pending).resources(),
		PendingJobCount: e.pendingJobs, RunningJobCount: len(e.op.running),
	}
	if len(e.op.active) > 0 {
		u.JobResources = e.op.tasks[e.op.active[0]].spec
	}
	return u
}

// PoolUsage reports the sum of the resources of the running jobs in a
// pool's subtree; false for an unknown pool. O(1).
func (p *Placement) PoolUsage(id scheduler.PoolID) (scheduler.Resources, bool) {
	e := p.pools[id]
	if e == nil {
		return scheduler.Resources{}, false
	}
	return e.usage.resources(), true
}

// Job reports one running job; false when the job is not running (unknown
// or removed operation, a job not started or already finished). O(1).
func (p *Placement) Job(key JobKey) (RunningJob, bool) {
	e := p.ops[key.Operation]
	if e == nil {
		return RunningJob{}, false
	}
	j := e.op.running[jobID{key.Task, key.Index}]
	if j == nil {
		return RunningJob{}, false
	}
	return RunningJob{Key: key, Node: j.node, Resources: e.op.tasks[key.Task].spec, Seq: j.seq}, true
}
