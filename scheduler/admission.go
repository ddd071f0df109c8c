package scheduler

import (
	"fmt"
	"iter"
	"slices"
)

// AdmissionState is whether an admitted operation runs or waits.
type AdmissionState int

const (
	// AdmissionRunning: the operation counts as running on every ancestor.
	AdmissionRunning AdmissionState = iota
	// AdmissionPending: some pool on its path has no running slot; the
	// operation waits in that pool's queue.
	AdmissionPending
)

// String returns "running" or "pending".
func (s AdmissionState) String() string {
	if s == AdmissionPending {
		return "pending"
	}
	return "running"
}

// LimitError is the typed rejection of an operation by max_operation_count.
type LimitError struct {
	Operation OperationID
	// Pool is the pool (RootID for the tree) whose limit is reached.
	Pool  string
	Limit int
	Count int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("operation %q rejected: max_operation_count of %s reached (%d/%d)", e.Operation, e.Pool, e.Count, e.Limit)
}

// Unwrap returns ErrTooManyOperations.
func (e *LimitError) Unwrap() error { return ErrTooManyOperations }

type admPool struct {
	name       string
	parent     string // "" for the root itself
	maxOps     int
	maxRunning int
	// lightweight: fifo with enable_lightweight_operations.
	lightweight bool
	ops         int
	running     int
	// lightRunning counts running lightweight operations in the subtree.
	lightRunning int
	pending      []OperationID
}

type admOp struct {
	pool    string // pool key; RootID for the root
	state   AdmissionState
	queueAt string // pool whose queue holds it while pending
	// vanilla: the operation's type allows it to be lightweight.
	vanilla bool
	// light: it runs as a lightweight operation (decided when it starts).
	light bool
	// removed: the operation was removed (its entry in Admission.seq is
	// dead).
	removed bool
}

// Admission keeps operation counts on every pool of a tree and decides which
// operations run and which wait, exactly as the operation-limits rules say:
// an operation is rejected when max_operation_count is reached on its pool
// or any ancestor; otherwise it runs when every pool on its path has a
// running slot, and waits in the queue of the first pool (from the operation
// upwards) that has none. When a running operation leaves, the queues of its
// pool and ancestors are served in order. It is a plain data structure: not
// safe for concurrent use, deterministic.
type Admission struct {
	cfg   TreeConfig
	pools map[string]*admPool
	order []string // pools in configuration order, root first
	ops   map[OperationID]*admOp
	// seq is the operations in registration order, with the removed ones
	// left in place (marked removed) until they are half of it: removing
	// one of n operations is O(1) amortised, not O(n).
	seq  []admEntry
	dead int
}

// admEntry is one registration in Admission.seq.
type admEntry struct {
	id OperationID
	op *admOp
}

// registered yields the registered operations in registration order.
func (a *Admission) registered() iter.Seq2[OperationID, *admOp] {
	return func(yield func(OperationID, *admOp) bool) {
		for _, e := range a.seq {
			if !e.op.removed && !yield(e.id, e.op) {
				return
			}
		}
	}
}

// NewAdmission builds the counters for a tree.
func NewAdmission(cfg TreeConfig, pools []PoolConfig) (*Admission, error) {
	a := &Admission{ops: make(map[OperationID]*admOp)}
	if _, err := a.Reconfigure(cfg, pools); err != nil {
		return nil, err
	}
	return a, nil
}

// Reconfigure applies a new tree configuration and returns the pending
// operations that started because limits were raised or pools moved. Counts
// are rebuilt from the registered operations; running operations keep
// running even if a limit was lowered. Pools that still hold operations must
// not be removed. On error nothing changes.
func (a *Admission) Reconfigure(cfg TreeConfig, pools []PoolConfig) ([]OperationID, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	next := map[string]*admPool{RootID: {name: RootID, maxOps: cfg.MaxOperationCount, maxRunning: cfg.MaxRunningOperationCount}}
	order := []string{RootID}
	for _, p := range pools {
		if err := p.Validate(cfg.MainResource); err != nil {
			return nil, err
		}
		name := string(p.Name)
		if _, dup := next[name]; dup {
			return nil, fmt.Errorf("%w: pool %q is defined twice", ErrInvalidTree, name)
		}
		parent := RootID
		if p.Parent != "" {
			parent = string(p.Parent)
		}
		ap := &admPool{name: name, parent: parent, maxOps: cfg.MaxOperationCountPerPool, maxRunning: cfg.MaxRunningOperationCountPerPool,
			lightweight: p.Mode == ModeFIFO && p.EnableLightweightOperations}
		if p.MaxOperationCount != nil {
			ap.maxOps = *p.MaxOperationCount
		}
		if p.MaxRunningOperationCount != nil {
			ap.maxRunning = *p.MaxRunningOperationCount
		}
		next[name] = ap
		order = append(order, name)
	}
	for _, name := range order[1:] {
		if _, ok := next[next[name].parent]; !ok {
			return nil, fmt.Errorf("%w: pool %q: parent %q does not exist", ErrInvalidTree, name, next[name].parent)
		}
	}
	for _, name := range order[1:] {
		seen := map[string]bool{}
		for n := name; n != ""; n = next[n].parent {
			if seen[n] {
				return nil, fmt.Errorf("%w: pool %q is part of a cycle", ErrInvalidTree, name)
			}
			seen[n] = true
		}
	}
	for id, op := range a.registered() {
		if _, ok := next[op.pool]; !ok {
			return nil, fmt.Errorf("%w: pool %q still holds operation %q", ErrInvalidTree, op.pool, id)
		}
	}
	a.cfg, a.pools, a.order = cfg, next, order
	for _, op := range a.registered() {
		// A running operation keeps the kind it started with.
		for _, p := range a.path(op.pool) {
			p.ops++
			if op.state == AdmissionRunning {
				p.countRunning(op, 1)
			}
		}
	}
	return a.retryAllPending(), nil
}

// countRunning adds d running operations of op's kind.
func (p *admPool) countRunning(op *admOp, d int) {
	if op.light {
		p.lightRunning += d
	} else {
		p.running += d
	}
}

func poolKey(p PoolID) string {
	if p == "" {
		return RootID
	}
	return string(p)
}

// path returns the pool and its ancestors, the pool first, the root last.
func (a *Admission) path(pool string) []*admPool {
	var out []*admPool
	for name := pool; name != ""; name = a.pools[name].parent {
		out = append(out, a.pools[name])
	}
	return out
}

// AdmitOptions describes an operation to Admission.
type AdmitOptions struct {
	// Vanilla: the operation is of type vanilla, so it runs as a lightweight
	// operation in a fifo pool with enable_lightweight_operations.
	Vanilla bool
	// Revived: the operation was admitted before the scheduler restarted
	// and is admitted again. max_operation_count does not refuse it (a
	// pool's count may then exceed a limit lowered since, as it may after
	// a live lowering); max_running_operation_count still applies.
	Revived bool
}

// Add registers an operation that cannot be lightweight; see Admit.
func (a *Admission) Add(id OperationID, pool PoolID) (AdmissionState, error) {
	return a.Admit(id, pool, AdmitOptions{})
}

// Admit registers an operation in pool ("" is the root). It returns a
// *LimitError (wrapping ErrTooManyOperations) when max_operation_count is
// reached on the path (unless opts.Revived), and otherwise whether the
// operation runs or waits.
// A lightweight operation always runs.
func (a *Admission) Admit(id OperationID, pool PoolID, opts AdmitOptions) (AdmissionState, error) {
	if _, dup := a.ops[id]; dup {
		return 0, fmt.Errorf("%w: %q", ErrDuplicateOperation, id)
	}
	key := poolKey(pool)
	if _, ok := a.pools[key]; !ok {
		return 0, fmt.Errorf("%w: operation %q: pool %q does not exist", ErrInvalidOperation, id, pool)
	}
	path := a.path(key)
	for _, p := range path {
		if p.ops >= p.maxOps && !opts.Revived {
			return 0, &LimitError{Operation: id, Pool: p.name, Limit: p.maxOps, Count: p.ops}
		}
	}
	for _, p := range path {
		p.ops++
	}
	op := &admOp{pool: key, vanilla: opts.Vanilla}
	a.ops[id] = op
	a.seq = append(a.seq, admEntry{id: id, op: op})
	a.tryRun(id, op)
	return op.state, nil
}

// tryRun starts the operation if every pool on its path has a running slot,
// or queues it on the first pool that has none.
func (a *Admission) tryRun(id OperationID, op *admOp) bool {
	op.light = op.vanilla && a.pools[op.pool].lightweight
	if !op.light {
		for _, p := range a.path(op.pool) {
			if p.running >= p.maxRunning {
				op.state, op.queueAt = AdmissionPending, p.name
				p.pending = append(p.pending, id)
				return false
			}
		}
	}
	for _, p := range a.path(op.pool) {
		p.countRunning(op, 1)
	}
	op.state, op.queueAt = AdmissionRunning, ""
	return true
}

// Remove unregisters an operation (finished, failed or aborted, running or
// pending) and returns the pending operations that started because of it,
// in the order they started.
func (a *Admission) Remove(id OperationID) ([]OperationID, error) {
	op, ok := a.ops[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownOperation, id)
	}
	delete(a.ops, id)
	op.removed = true
	if a.dead++; a.dead > len(a.seq)/2 {
		a.seq = slices.DeleteFunc(a.seq, func(e admEntry) bool { return e.op.removed })
		a.dead = 0
	}
	path := a.path(op.pool)
	for _, p := range path {
		p.ops--
	}
	if op.state == AdmissionPending {
		q := a.pools[op.queueAt]
		q.pending = slices.DeleteFunc(q.pending, func(x OperationID) bool { return x == id })
		return nil, nil
	}
	for _, p := range path {
		p.countRunning(op, -1)
	}
	if op.light {
		// It held no running slot: nobody waits for it.
		return nil, nil
	}
	var started []OperationID
	for _, p := range path {
		started = append(started, a.serveQueue(p)...)
	}
	return started, nil
}

// serveQueue walks a pool's pending list in order while it has free running
// slots, re-checking each operation's whole path: it starts, or moves to the
// queue of the pool that now blocks it.
func (a *Admission) serveQueue(p *admPool) []OperationID {
	var started []OperationID
	queue := p.pending
	p.pending = nil
	for i, id := range queue {
		if p.running >= p.maxRunning {
			p.pending = append(p.pending, queue[i:]...)
			break
		}
		if a.tryRun(id, a.ops[id]) {
			started = append(started, id)
		}
	}
	return started
}

// retryAllPending re-checks every pending operation (after a configuration
// change), in registration order.
func (a *Admission) retryAllPending() []OperationID {
	for _, name := range a.order {
		a.pools[name].pending = nil
	}
	var started []OperationID
	for id, op := range a.registered() {
		if op.state == AdmissionPending {
			if a.tryRun(id, op) {
				started = append(started, id)
			}
		}
	}
	return started
}

// AdmissionInfo is one operation's admission state.
type AdmissionInfo struct {
	State AdmissionState
	// PendingReason names the pool whose limit holds a pending operation, e.g.
	// "max_running_operation_count of research reached (2/2)".
	PendingReason string
	// QueuePosition is the 0-based position in that pool's queue.
	QueuePosition int
	// QueuePool is that pool (RootID for the tree's own limit).
	QueuePool string
	// QueueRunning and QueueMaxRunning are that pool's running operation
	// count and its effective max_running_operation_count.
	QueueRunning, QueueMaxRunning int
	// Lightweight: the operation runs as a lightweight operation.
	Lightweight bool
}

// Info returns an operation's admission state.
func (a *Admission) Info(id OperationID) (AdmissionInfo, bool) {
	op, ok := a.ops[id]
	if !ok {
		return AdmissionInfo{}, false
	}
	if op.state == AdmissionRunning {
		return AdmissionInfo{State: AdmissionRunning, Lightweight: op.light}, true
	}
	q := a.pools[op.queueAt]
	// Searched from the back: an operation that was just queued, the
	// common question, is last.
	pos := len(q.pending) - 1
	for pos >= 0 && q.pending[pos] != id {
		pos--
	}
	return q.queue().Info(pos), true
}

// PendingQueue is one pool's queue of operations waiting for a running
// slot.
type PendingQueue struct {
	// Pool is the pool (RootID for the tree's own limit).
	Pool string
	// Running is the pool's running operation count, MaxRunning its
	// effective max_running_operation_count.
	Running, MaxRunning int
	// Operations are the waiting operations in queue order (position 0
	// first). The slice is the Admission's own: read it before the
	// Admission changes, and do not modify it.
	Operations []OperationID
}

// Reason is the pending reason of the queue's operations, e.g.
// "max_running_operation_count of research reached (2/2)".
func (q PendingQueue) Reason() string {
	return fmt.Sprintf("max_running_operation_count of %s reached (%d/%d)", q.Pool, q.Running, q.MaxRunning)
}

// Info is the admission state of the operation at position pos of the
// queue: what Admission.Info returns for it.
func (q PendingQueue) Info(pos int) AdmissionInfo {
	return AdmissionInfo{State: AdmissionPending, PendingReason: q.Reason(), QueuePosition: pos, QueuePool: q.Pool,
		QueueRunning: q.Running, QueueMaxRunning: q.MaxRunning}
}

func (p *admPool) queue() PendingQueue {
	return PendingQueue{Pool: p.name, Running: p.running, MaxRunning: p.maxRunning, Operations: p.pending}
}

// PendingQueues yields the pools' non-empty queues in configuration order
// (the tree's own first): every pending operation once, with its position,
// in O(pending operations + pools), where asking Info for each would take
// time proportional to the queue's length per operation.
func (a *Admission) PendingQueues() iter.Seq[PendingQueue] {
	return func(yield func(PendingQueue) bool) {
		for _, name := range a.order {
			if p := a.pools[name]; len(p.pending) > 0 && !yield(p.queue()) {
				return
			}
		}
	}
}

// Counts returns a pool's operation count (running + pending in its subtree)
// and running operation count (lightweight operations excluded); pool "" or
// RootID is the whole tree.
func (a *Admission) Counts(pool PoolID) (operations, running int) {
	c := a.PoolCounts(pool)
	return c.Operations, c.Running
}

// PoolCounts are a pool's operation counters, over its subtree.
type PoolCounts struct {
	// Operations: running and pending (operation_count).
	Operations int
	// Running: running operations that are not lightweight
	// (running_operation_count), the ones max_running_operation_count limits.
	Running int
	// LightweightRunning: running lightweight operations
	// (lightweight_running_operation_count); no limit applies.
	LightweightRunning int
	// Pending: operations waiting in this pool's own queue.
	Pending int
	// MaxOperations and MaxRunning are the effective limits.
	MaxOperations, MaxRunning int
}

// PoolCounts returns a pool's counters (the zero value for an unknown pool);
// pool "" or RootID is the whole tree.
func (a *Admission) PoolCounts(pool PoolID) PoolCounts {
	p, ok := a.pools[poolKey(pool)]
	if !ok {
		return PoolCounts{}
	}
	return PoolCounts{Operations: p.ops, Running: p.running, LightweightRunning: p.lightRunning,
		Pending: len(p.pending), MaxOperations: p.maxOps, MaxRunning: p.maxRunning}
}

// Running returns the running operations in registration order.
func (a *Admission) Running() []OperationID {
	var out []OperationID
	for id, op := range a.registered() {
		if op.state == AdmissionRunning {
			out = append(out, id)
		}
	}
	return out
}
