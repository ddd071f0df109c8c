package placement

import "github.com/sharetree/sharetree/scheduler"

// element is the root, a pool or an operation.
type element struct {
	parent *element // nil for the root
	// name is the pool name, the operation id, or scheduler.RootID.
	name string
	// isOp is true for operations.
	isOp bool
	// order is an operation's submission order (0 for pools).
	order uint64
	// specWeight is the weight before any SetFairShares; weight is the one
	// used for ties.
	specWeight, weight float64
	// depth is 0 for the root.
	depth int

	// usage and pending are the resources of the running and the pending
	// jobs in the subtree; pendingJobs counts the pending jobs.
	usage, pending vec
	pendingJobs    int
	// limit is the ResourceLimits in fixed point (unlimited where absent).
	limit vec
	// limited is false when limit is unlimited everywhere.
	limited bool

	// fair is the fair share of the last SetFairShares.
	fair scheduler.Share
	// resolved is the Placement's resolved counter when ResolveFairShares
	// last found the element in an update, at index ent of its entries.
	resolved uint64
	ent      int
	// needsHeapify is set while the element is on the Placement's reheap
	// list.
	needsHeapify bool
	// sat and dom are the cached heap key: local satisfaction and dominant
	// usage share.
	sat, dom float64

	// pos is the index in the parent's heap, -1 when not a candidate.
	pos int
	// contrib is what the element contributed to its parent's minPending
	// when it entered or was last refreshed in the heap.
	contrib vec
	// minPending is the componentwise minimum of the pending job resources
	// that can start below the element as far as its own limits and its
	// descendants' limits go: over candidate children for pools, over tasks
	// with pending jobs for operations. unlimitedVec when there are none.
	minPending vec

	// mode and heap are set for the root and pools: heap holds the
	// candidate children.
	mode scheduler.Mode
	heap []*element

	// op is set for operations.
	op *operation
	// changed is set while the operation is on the Placement's changedOps.
	changed bool
}

// room is what the element's own limits still allow.
func (e *element) room() vec {
	if !e.limited {
		return unlimitedVec
	}
	return e.limit.sub(e.usage)
}

// candidate reports whether the element belongs in its parent's heap: it
// has something pending that its own limits do not block (and, for an
// operation, that is not held).
func (e *element) candidate() bool {
	if e.op != nil {
		if e.op.removed || e.op.held || len(e.op.active) == 0 {
			return false
		}
	} else if len(e.heap) == 0 {
		return false
	}
	return !e.limited || e.room().fits(e.minPending)
}

// computeKey refreshes sat and dom from the live usage, the pending jobs and
// the fair share. inv holds 1/total per resource in fixed units (0 where the
// total is 0).
func (e *element) computeKey(inv *[scheduler.NumResources]float64) {
	var usage, demand scheduler.Share
	dom := 0.0
	for r := range usage {
		u := float64(e.usage[r]) * inv[r]
		usage[r] = u
		demand[r] = float64(e.usage[r]+e.pending[r]) * inv[r]
		dom = max(dom, u)
	}
	e.dom = dom
	e.sat = scheduler.LocalSatisfaction(usage, e.fair, demand)
}

// before is the order of the children of parent: true when a is tried
// before b.
func before(mode scheduler.Mode, a, b *element) bool {
	if mode == scheduler.ModeFairShare {
		if a.sat != b.sat {
			return a.sat < b.sat
		}
		if a.dom != b.dom {
			return a.dom < b.dom
		}
		if a.weight != b.weight {
			return a.weight > b.weight
		}
	}
	if a.isOp != b.isOp {
		return !a.isOp
	}
	if a.order != b.order {
		return a.order < b.order
	}
	return a.name < b.name
}
