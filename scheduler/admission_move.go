package scheduler

import (
	"fmt"
	"slices"
)

// Move re-registers an operation in another pool ("" is the root), as a
// run-time pool change does. Pools that the operation newly counts toward
// must be below their max_operation_count (else a *LimitError, changing
// nothing). A running operation keeps running even where the new path has
// no running slot left (as when a limit is lowered); a pending one queues
// again on the new path, or starts. It returns the pending operations that
// started because of the move, in the order they started.
func (a *Admission) Move(id OperationID, pool PoolID) ([]OperationID, error) {
	op, ok := a.ops[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownOperation, id)
	}
	key := poolKey(pool)
	if _, ok := a.pools[key]; !ok {
		return nil, fmt.Errorf("%w: operation %q: pool %q does not exist", ErrInvalidOperation, id, pool)
	}
	if key == op.pool {
		return nil, nil
	}
	oldPath, newPath := a.path(op.pool), a.path(key)
	for _, p := range newPath {
		if !slices.Contains(oldPath, p) && p.ops >= p.maxOps {
			return nil, &LimitError{Operation: id, Pool: p.name, Limit: p.maxOps, Count: p.ops}
		}
	}
	for _, p := range oldPath {
		p.ops--
	}
	for _, p := range newPath {
		p.ops++
	}
	op.pool = key
	if op.state == AdmissionPending {
		q := a.pools[op.queueAt]
		q.pending = slices.DeleteFunc(q.pending, func(x OperationID) bool { return x == id })
		var started []OperationID
		if a.tryRun(id, op) {
			started = append(started, id)
		}
		return started, nil
	}
	// A running operation keeps its kind (lightweight or not).
	for _, p := range oldPath {
		p.countRunning(op, -1)
	}
	for _, p := range newPath {
		p.countRunning(op, 1)
	}
	if op.light {
		return nil, nil
	}
	var started []OperationID
	for _, p := range oldPath {
		started = append(started, a.serveQueue(p)...)
	}
	return started, nil
}
