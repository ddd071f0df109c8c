package placement

// JobClaims arbitrates the jobs of an operation that runs in several trees,
// each tree with its own Placement: a job runs in the tree that claims it
// first, exactly once. A Placement asks Claim before it starts a fresh job
// (a job it requeued after running it is already its own); when the claim
// fails the job is dropped from its pending jobs, as Forget does.
// Implementations must be safe for concurrent use by the trees' Placements.
type JobClaims interface {
	// Claim reports whether job index of task is now this tree's: false
	// when another tree claimed it first, or when this tree may take no
	// more of the operation's jobs.
	Claim(task, index int) bool
}

// takeClaimed takes the next pending job of task ti that this Placement
// may run, dropping the jobs another tree claimed; -1 when none is left.
func (p *Placement) takeClaimed(e *element, ti int) int {
	t := &e.op.tasks[ti]
	for t.pending > 0 {
		retry := len(t.retry) > 0
		idx := t.take()
		if retry || e.op.claims == nil || e.op.claims.Claim(ti, idx) {
			return idx
		}
		p.dropTaken(e, ti)
	}
	return -1
}

// dropTaken removes the resources of a job of task ti, already taken from
// the task's pending jobs, from the pending totals: the job runs elsewhere.
func (p *Placement) dropTaken(e *element, ti int) {
	t := e.taken(ti)
	for a := e; a != nil; a = a.parent {
		a.pending = a.pending.sub(t.res)
		a.pendingJobs--
	}
	p.refresh(e)
}

// Forget removes a pending job without running it: another tree runs it.
// It returns false, changing nothing, when the operation is unknown or the
// job is not pending here. O(depth·log n + retries).
func (p *Placement) Forget(job JobKey) bool {
	e := p.ops[job.Operation]
	if e == nil || job.Task < 0 || job.Task >= len(e.op.tasks) {
		return false
	}
	if !e.op.tasks[job.Task].takeIndex(job.Index) {
		return false
	}
	p.dropTaken(e, job.Task)
	return true
}
