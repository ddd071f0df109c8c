package placement

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/sharetree/sharetree/scheduler"
)

// AddOperation registers an operation with every job pending. Errors wrap
// ErrInvalidOperation (empty id, weight not finite or negative, a limit NaN
// or negative, a task with JobCount < 1 or resources NaN, infinite,
// negative or absurdly large), ErrDuplicateOperation or ErrUnknownPool.
// O(depth·log n + tasks).
func (p *Placement) AddOperation(spec OperationSpec) error {
	if spec.ID == "" {
		return fmt.Errorf("%w: operation id is empty", ErrInvalidOperation)
	}
	if _, dup := p.ops[spec.ID]; dup {
		return fmt.Errorf("%w: %q", ErrDuplicateOperation, spec.ID)
	}
	parent := p.root
	if spec.Pool != "" {
		parent = p.pools[spec.Pool]
		if parent == nil {
			return fmt.Errorf("%w: operation %q names pool %q", ErrUnknownPool, spec.ID, spec.Pool)
		}
	}
	weight, err := checkWeightLimits(spec.ID, spec.Weight, spec.ResourceLimits)
	if err != nil {
		return err
	}
	op := &operation{pool: spec.Pool, tasks: make([]task, len(spec.Tasks)), running: map[jobID]*runningJob{}, claims: spec.Claims, held: spec.Held}
	var pending vec
	pendingJobs := 0
	for i, ts := range spec.Tasks {
		if ts.JobCount < 1 {
			return fmt.Errorf("%w: operation %q task %d (%q) job count must be >= 1, got %d", ErrInvalidOperation, spec.ID, i, ts.Name, ts.JobCount)
		}
		res, bad, ok := jobVec(ts.JobResources)
		if !ok {
			return fmt.Errorf("%w: operation %q task %d (%q) job_resources.%s must be a finite number >= 0 and at most %g, got %g",
				ErrInvalidOperation, spec.ID, i, ts.Name, bad, maxJobAmount/scale[bad], ts.JobResources[bad])
		}
		for r, v := range res {
			if v > 0 && int64(ts.JobCount) > unlimited/v/4 {
				return fmt.Errorf("%w: operation %q task %d (%q) needs too much %s in total", ErrInvalidOperation, spec.ID, i, ts.Name, scheduler.ResourceType(r))
			}
		}
		op.tasks[i] = task{spec: ts.JobResources, res: res, count: ts.JobCount, next: 0, pending: ts.JobCount}
		op.active = append(op.active, i)
		pending = pending.add(res.mul(int64(ts.JobCount)))
		pendingJobs += ts.JobCount
	}
	e := &element{
		parent: parent, name: string(spec.ID), isOp: true, order: spec.Order,
		specWeight: weight, weight: weight, depth: parent.depth + 1,
		pending: pending, pendingJobs: pendingJobs,
		limit: limitVec(spec.ResourceLimits), limited: !spec.ResourceLimits.IsEmpty(),
		pos: -1, minPending: op.minActive(), op: op,
	}
	for a := parent; a != nil; a = a.parent {
		a.pending = a.pending.add(pending)
		a.pendingJobs += pendingJobs
	}
	p.ops[spec.ID] = e
	p.gen++
	i, _ := slices.BinarySearchFunc(p.opList, e, compareOps)
	p.opList = slices.Insert(p.opList, i, e)
	p.refresh(e)
	return nil
}

// checkWeightLimits validates an operation's weight (finite, >= 0) and
// resource limits (>= 0), and returns the weight to use: 0 means 1. Errors
// wrap ErrInvalidOperation.
func checkWeightLimits(id scheduler.OperationID, weight float64, limits scheduler.PartialResources) (float64, error) {
	if math.IsNaN(weight) || math.IsInf(weight, 0) || weight < 0 {
		return 0, fmt.Errorf("%w: operation %q weight must be a finite number >= 0, got %g", ErrInvalidOperation, id, weight)
	}
	if r, ok := validLimits(limits); !ok {
		return 0, fmt.Errorf("%w: operation %q resource_limits.%s must be >= 0, got %g", ErrInvalidOperation, id, r, limits.Values[r])
	}
	if weight == 0 {
		weight = 1
	}
	return weight, nil
}

// compareOps orders operations by (Order, id).
func compareOps(a, b *element) int {
	return cmp.Or(cmp.Compare(a.order, b.order), cmp.Compare(a.name, b.name))
}

// RemoveOperation forgets an operation: its usage and pending jobs leave its
// ancestors at once, and later calls naming its jobs are no-ops. Unknown
// ids are ignored. O(depth·log n + log ops) plus moving the sorted list.
func (p *Placement) RemoveOperation(id scheduler.OperationID) {
	e := p.ops[id]
	if e == nil {
		return
	}
	p.detach(e)
	p.noteRemoved(e)
	p.running -= len(e.op.running)
	delete(p.ops, id)
	p.gen++
	if i, found := slices.BinarySearchFunc(p.opList, e, compareOps); found {
		p.opList = slices.Delete(p.opList, i, i+1)
	}
	e.parent = nil
}

// detach takes operation e out of its chain: the ancestors' sums lose its
// usage and pending jobs, and e leaves its parent's heap. e stays marked
// removed, a candidate nowhere, until the caller attaches it elsewhere
// (MoveOperation) or forgets it (RemoveOperation).
func (p *Placement) detach(e *element) {
	for a := e.parent; a != nil; a = a.parent {
		a.usage = a.usage.sub(e.usage)
		a.pending = a.pending.sub(e.pending)
		a.pendingJobs -= e.pendingJobs
	}
	e.op.removed = true
	p.refresh(e)
}

// Operations reports every operation sorted by (Order, id). O(n).
func (p *Placement) Operations() []OperationUsage {
	return p.AppendOperations(make([]OperationUsage, 0, len(p.opList)))
}

// AppendOperations is Operations appending to dst, so that a caller can
// reuse one buffer from one fair-share update to the next.
func (p *Placement) AppendOperations(dst []OperationUsage) []OperationUsage {
	for _, e := range p.opList {
		dst = append(dst, e.usageReport())
	}
	return dst
}

// RunningJobs lists an operation's running jobs, oldest start first; nil
// for an unknown operation. O(running jobs).
func (p *Placement) RunningJobs(id scheduler.OperationID) []RunningJob {
	e := p.ops[id]
	if e == nil || len(e.op.running) == 0 {
		return nil
	}
	out := make([]RunningJob, 0, len(e.op.running))
	for j := e.op.oldest; j != nil; j = j.next {
		out = append(out, RunningJob{
			Key:       JobKey{Operation: id, Task: j.id.task, Index: j.id.index},
			Node:      j.node,
			Resources: e.op.tasks[j.id.task].spec,
			Seq:       j.seq,
		})
	}
	return out
}
