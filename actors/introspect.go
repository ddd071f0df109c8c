package actors

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sharetree/sharetree/scheduler"
)

// ErrUnknownTree is wrapped when a request names a tree the scheduler does
// not run.
var ErrUnknownTree = errors.New("actors: unknown tree")

// ErrUnavailable is wrapped when an actor did not answer in time.
var ErrUnavailable = errors.New("actors: the scheduler did not answer in time")

// TreeIntrospection is one tree's live state at one moment, as its tree
// actor saw it: the latest fair-share result, every pool's operation
// counters and every admitted operation's admission state. It is a copy
// (Result is shared but not modified until Release): safe to read from
// any goroutine.
type TreeIntrospection struct {
	Tree string
	// Result is the latest fair-share update (nil before the first one).
	// Pools and operations admitted since it ran are not in it. It is
	// leased: it stays as it is until Release, and must not be read after
	// (the tree then recycles its memory, see results.go).
	Result *scheduler.Result
	// release ends the Result's lease.
	release func()
	// Updates counts the tree's fair-share updates since its actor started.
	Updates UpdateStats
	// Pools are the root (scheduler.RootID) followed by the configured
	// pools in configuration order and the ephemeral pools by name.
	Pools []PoolIntrospection
	// Operations are the admitted operations Scope selects, sorted by id
	// (with Scope.Pending, in the queues' order instead).
	Operations []OperationIntrospection
	// Reviving is true when Result was computed while a restarted
	// scheduler waited for the nodes to report their jobs (see
	// Config.JobRevivalTimeout): it may miss jobs that run, so its usage
	// may be too low. (Without a Result: while it waits.)
	Reviving bool
}

// Release ends the lease on Result: neither Result nor anything read from
// it by reference (its records, their Jobs and Integral) may be read after.
// A snapshot that is never released only keeps the tree from recycling that
// Result. Release may be called more than once.
func (in *TreeIntrospection) Release() {
	if in != nil && in.release != nil {
		in.release()
	}
}

// PoolIntrospection is one pool's operation counters.
type PoolIntrospection struct {
	// Name is the pool, or scheduler.RootID for the root.
	Name string
	// Parent is the parent pool (scheduler.RootID for the root's
	// children, "" for the root).
	Parent string
	Counts scheduler.PoolCounts
}

// OperationIntrospection is one admitted operation in the tree.
type OperationIntrospection struct {
	ID scheduler.OperationID
	// Pool is the operation's pool in this tree ("" is the root).
	Pool scheduler.PoolID
	// Admission says whether it runs or waits, and where it waits.
	Admission scheduler.AdmissionInfo
	// Weight in this tree (nil is 1) and ResourceLimits, as updated at
	// run time.
	Weight         *float64
	ResourceLimits scheduler.PartialResources
	// SpecDemand is every job of the spec at once (what a pending
	// operation asks for).
	SpecDemand scheduler.Resources
}

// Scope selects which admitted operations an introspection copies (the
// pools always come): copying every operation is O(operations) work in the
// tree actor, which a question about one pool or one operation does not
// need.
type Scope struct {
	// AllOperations copies every admitted operation.
	AllOperations bool
	// Operation, when AllOperations is false, copies this one (if admitted).
	Operation scheduler.OperationID
	// Pending, when AllOperations is false, copies up to this many waiting
	// operations, in the queues' order (the pools in configuration order,
	// each queue from its head), and keeps them in that order.
	Pending int
}

// introspectTree asks a tree actor for a TreeIntrospection.
type introspectTree struct{ scope Scope }

// introspect builds the snapshot; it runs in the tree actor.
func (t *treeActor) introspect(scope Scope) *TreeIntrospection {
	res, release := t.ledger.results.acquire()
	out := &TreeIntrospection{Tree: t.spec.Name, Result: res, release: release, Updates: t.stats}
	if res != nil {
		out.Reviving = t.ledger.revivingAt(res.Now)
	} else {
		out.Reviving = t.ledger.holding(t.cfg.Now())
	}
	out.Updates.RecycledResults, out.Updates.AllocatedResults = t.ledger.results.counts()
	out.Updates.StateWrites, out.Updates.StateWriteFailures = t.writer.writes.Load(), t.writer.failures.Load()
	out.Pools = append(out.Pools, PoolIntrospection{Name: scheduler.RootID, Counts: t.adm.PoolCounts(scheduler.RootID)})
	for _, p := range t.allPools() {
		parent := string(p.Parent)
		if parent == "" {
			parent = scheduler.RootID
		}
		out.Pools = append(out.Pools, PoolIntrospection{Name: string(p.Name), Parent: parent, Counts: t.adm.PoolCounts(p.Name)})
	}
	// Every waiting operation's admission state comes from one walk of
	// the queues: Info finds an operation's position by searching its
	// queue, which for every operation would be O(pending²).
	var queued map[scheduler.OperationID]scheduler.AdmissionInfo
	if scope.AllOperations {
		queued = map[scheduler.OperationID]scheduler.AdmissionInfo{}
		for q := range t.adm.PendingQueues() {
			for pos, id := range q.Operations {
				queued[id] = q.Info(pos)
			}
		}
	}
	add := func(id scheduler.OperationID, op *treeOp) {
		info, ok := queued[id]
		if !ok {
			info, _ = t.adm.Info(id)
		}
		oi := OperationIntrospection{ID: id, Pool: op.pool, Admission: info, ResourceLimits: op.limits}
		if op.weight != nil {
			w := *op.weight
			oi.Weight = &w
		}
		for _, task := range op.msg.place.Tasks {
			oi.SpecDemand = oi.SpecDemand.Add(task.JobResources.Scale(float64(task.JobCount)))
		}
		out.Operations = append(out.Operations, oi)
	}
	if scope.AllOperations {
		for id, op := range t.ops {
			add(id, op)
		}
	} else if op := t.ops[scope.Operation]; op != nil {
		add(scope.Operation, op)
	}
	if !scope.AllOperations && scope.Pending > 0 {
		// In the queues' order; the one operation asked for, if any,
		// stays first.
		queued = map[scheduler.OperationID]scheduler.AdmissionInfo{}
		n := 0
	queues:
		for q := range t.adm.PendingQueues() {
			for pos, id := range q.Operations {
				if n == scope.Pending {
					break queues
				}
				if op := t.ops[id]; op != nil && id != scope.Operation {
					queued[id] = q.Info(pos)
					add(id, op)
					n++
				}
			}
		}
		return out
	}
	slices.SortFunc(out.Operations, func(a, b OperationIntrospection) int { return strings.Compare(string(a.ID), string(b.ID)) })
	return out
}

// Introspect returns a snapshot of a tree's live state, with the operations
// scope selects. It asks the tree actor and waits at most
// Config.RequestTimeout; it must not be called from an actor.
func (s *System) Introspect(tree string, scope Scope) (*TreeIntrospection, error) {
	for _, t := range s.dir.Load().trees {
		if t.name != tree {
			continue
		}
		res, err := s.as.Root.RequestFuture(t.pid, &introspectTree{scope: scope}, s.cfg.RequestTimeout).Result()
		if err != nil {
			return nil, fmt.Errorf("%w: tree %s: %w", ErrUnavailable, tree, err)
		}
		snap, ok := res.(*TreeIntrospection)
		if !ok {
			return nil, fmt.Errorf("%w: tree %s answered %T", ErrUnavailable, tree, res)
		}
		return snap, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownTree, tree)
}
