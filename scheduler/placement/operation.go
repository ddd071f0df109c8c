package placement

import (
	"slices"

	"github.com/sharetree/sharetree/scheduler"
)

// operation is the job state of one operation element.
type operation struct {
	pool  scheduler.PoolID
	tasks []task
	// active lists the indices of the tasks with pending jobs, ascending.
	active []int
	// running maps a (task, index) to its running job.
	running map[jobID]*runningJob
	// oldest and newest are the ends of the running jobs in start order.
	oldest, newest *runningJob
	// removed is set by RemoveOperation.
	removed bool
	// held: its pending jobs do not start (OperationSpec.Held).
	held bool
	// claims arbitrates jobs with other trees (nil: none).
	claims JobClaims
}

// jobID names a job within its operation.
type jobID struct{ task, index int }

// runningJob is one running job, linked in start order.
type runningJob struct {
	id         jobID
	node       scheduler.NodeID
	seq        uint64
	prev, next *runningJob
}

// link appends j as the newest running job.
func (o *operation) link(j *runningJob) {
	o.running[j.id] = j
	j.prev = o.newest
	if o.newest != nil {
		o.newest.next = j
	} else {
		o.oldest = j
	}
	o.newest = j
}

// unlink removes j from the running jobs.
func (o *operation) unlink(j *runningJob) {
	delete(o.running, j.id)
	if j.prev != nil {
		j.prev.next = j.next
	} else {
		o.oldest = j.next
	}
	if j.next != nil {
		j.next.prev = j.prev
	} else {
		o.newest = j.prev
	}
	j.prev, j.next = nil, nil
}

// minActive is the componentwise minimum of the active tasks' resources.
func (o *operation) minActive() vec {
	m := unlimitedVec
	for _, ti := range o.active {
		m = m.min(o.tasks[ti].res)
	}
	return m
}

// activate records that task ti has pending jobs again.
func (o *operation) activate(ti int) {
	i, found := slices.BinarySearch(o.active, ti)
	if !found {
		o.active = slices.Insert(o.active, i, ti)
	}
}

// deactivate records that task ti has no pending jobs left.
func (o *operation) deactivate(ti int) {
	if i, found := slices.BinarySearch(o.active, ti); found {
		o.active = slices.Delete(o.active, i, i+1)
	}
}

// firstFit is the first active task whose job fits free, -1 if none.
func (o *operation) firstFit(free vec) int {
	for _, ti := range o.active {
		if free.fits(o.tasks[ti].res) {
			return ti
		}
	}
	return -1
}
