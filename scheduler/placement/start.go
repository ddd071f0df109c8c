package placement

import "github.com/sharetree/sharetree/scheduler"

// StartNextWithin starts the next pending job of operation id on node, a
// job that fits free, the node's free resources: the job starts in a place
// kept for the operation (a node whose preempted jobs have left, see
// actors' reservations, and scheduler/preemption), and nobody else's order
// decides. The operation and its ancestors stay within their
// ResourceLimits: the job is the first of the operation's tasks with
// pending jobs that fits both free and what the limits leave. It returns
// false, changing nothing, for an unknown operation, a held one, one with
// nothing pending, or one whose limits and free resources leave room for
// none of its pending jobs. O(depth·log n + tasks).
func (p *Placement) StartNextWithin(id scheduler.OperationID, node scheduler.NodeID, free scheduler.Resources) (Assignment, bool) {
	e := p.ops[id]
	if e == nil || e.op.held || len(e.op.active) == 0 {
		return Assignment{}, false
	}
	room := floorVec(free)
	for a := e; a != nil; a = a.parent {
		if a.limited {
			room = room.min(a.room())
		}
	}
	ti, idx := -1, -1
	for idx < 0 {
		if ti = e.op.firstFit(room); ti < 0 {
			return Assignment{}, false
		}
		idx = p.takeClaimed(e, ti)
	}
	t := &e.op.tasks[ti]
	p.run(e, ti, idx, node)
	return Assignment{Job: JobKey{Operation: id, Task: ti, Index: idx}, Resources: t.spec}, true
}
