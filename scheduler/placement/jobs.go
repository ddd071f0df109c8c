package placement

import "github.com/sharetree/sharetree/scheduler"

// run marks job idx of task ti (already taken from the pending jobs) as
// running on node and moves its resources from pending to usage along the
// ancestor path.
func (p *Placement) run(e *element, ti, idx int, node scheduler.NodeID) {
	t := e.taken(ti)
	p.seq++
	e.op.link(&runningJob{id: jobID{ti, idx}, node: node, seq: p.seq})
	p.running++
	for a := e; a != nil; a = a.parent {
		a.usage = a.usage.add(t.res)
		a.pending = a.pending.sub(t.res)
		a.pendingJobs--
	}
	p.refresh(e)
}

// taken updates operation e after a job of task ti left the task's
// pending jobs: a task with none left is no longer active. It returns the
// task.
func (e *element) taken(ti int) *task {
	op := e.op
	t := &op.tasks[ti]
	if t.pending == 0 {
		op.deactivate(ti)
		e.minPending = op.minActive()
	}
	return t
}

// JobFinished ends a running job and releases its usage. With requeue the
// job becomes pending again (a retry, started before the task's fresh
// jobs); without it the job is done for good. It returns false, changing
// nothing, when the job is not running (unknown operation, removed
// operation, or a job not started or already finished). O(depth·log n).
func (p *Placement) JobFinished(job JobKey, requeue bool) bool {
	e := p.ops[job.Operation]
	if e == nil {
		return false
	}
	op := e.op
	j := op.running[jobID{job.Task, job.Index}]
	if j == nil {
		return false
	}
	op.unlink(j)
	p.running--
	t := &op.tasks[job.Task]
	for a := e; a != nil; a = a.parent {
		a.usage = a.usage.sub(t.res)
	}
	if requeue {
		t.requeue(job.Index)
		if t.pending == 1 {
			op.activate(job.Task)
			e.minPending = e.minPending.min(t.res)
		}
		for a := e; a != nil; a = a.parent {
			a.pending = a.pending.add(t.res)
			a.pendingJobs++
		}
	}
	p.refresh(e)
	return true
}

// Adopt marks a pending job as running on node, for jobs a node reports
// that the Placement did not start (after a scheduler restart). Neither the
// node's free resources nor limits are checked: the job already runs. It
// returns false, changing nothing, when the operation is unknown or the job
// is not pending (out of range, running, or finished for good).
// O(depth·log n + retries).
func (p *Placement) Adopt(job JobKey, node scheduler.NodeID) bool {
	e := p.ops[job.Operation]
	if e == nil || job.Task < 0 || job.Task >= len(e.op.tasks) {
		return false
	}
	if !e.op.tasks[job.Task].takeIndex(job.Index) {
		return false
	}
	if e.op.claims != nil {
		// The job runs here whatever the claim says; the claim keeps other
		// trees from starting it too.
		e.op.claims.Claim(job.Task, job.Index)
	}
	p.run(e, job.Task, job.Index, node)
	return true
}
