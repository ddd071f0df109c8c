package placement

import (
	"cmp"
	"slices"

	"github.com/sharetree/sharetree/scheduler"
)

// OperationsCopy is a copy of a Placement's Operations that is kept up to
// date from the changes since it was last brought up to date, so that a
// caller who guards the Placement with a lock holds it only to collect
// what changed: CollectOperations collects (O(changes), under the lock),
// Operations merges (O(n), after it). The zero value is ready.
//
// A Placement follows the changes for one copy at a time: the first
// collect of a copy, and the next one after another copy collected, copy
// every operation, as does a collect after too many changes (more than
// half the operations).
type OperationsCopy struct {
	// p and sync are the Placement and its sync counter at the last
	// collect; they tell whether p's changes since are this copy's.
	p    *Placement
	sync uint64
	// ops is the copy sorted by (Order, ID); spare is the buffer the next
	// merge writes into.
	ops, spare []OperationUsage
	// changed are the reports of the operations that changed (or were
	// added) since the collect before, removed the operations removed
	// since; both are merged into ops by Operations.
	changed []OperationUsage
	removed []opKey
}

// opKey is an operation's place in the sorted Operations.
type opKey struct {
	order uint64
	id    scheduler.OperationID
}

func compareKeys(a, b opKey) int {
	return cmp.Or(cmp.Compare(a.order, b.order), cmp.Compare(a.id, b.id))
}

func keyOf(u *OperationUsage) opKey { return opKey{u.Order, u.ID} }

// CollectOperations records in c what changed in the operations since c's
// last collect: the reports of the operations whose jobs, usage, pending
// jobs or pool changed or that were added, and the operations removed.
// O(changes), or O(n) when it copies everything (see OperationsCopy). It
// reads the Placement: call it under the caller's lock, then Operations
// after (else it merges the changes of the collect before first).
func (p *Placement) CollectOperations(c *OperationsCopy) {
	c.Operations() // the last collect's changes, if nobody merged them
	if c.p == p && c.sync == p.opSync && p.tracking {
		for _, e := range p.changedOps {
			if !e.op.removed {
				c.changed = append(c.changed, e.usageReport())
			}
		}
		c.removed = append(c.removed, p.removedOps...)
	} else {
		c.ops = p.AppendOperations(c.ops[:0])
	}
	p.forgetChanges()
	p.tracking = true
	p.opSync++
	c.p, c.sync = p, p.opSync
}

// Operations returns the copy: what Placement.Operations returned at the
// last CollectOperations. The slice is valid until the next
// CollectOperations; the copy keeps it. O(changes·log n) when no
// operation was added or removed, else O(n).
func (c *OperationsCopy) Operations() []OperationUsage {
	if len(c.changed) == 0 && len(c.removed) == 0 {
		return c.ops
	}
	slices.SortFunc(c.changed, func(a, b OperationUsage) int { return compareKeys(keyOf(&a), keyOf(&b)) })
	if len(c.removed) == 0 && c.replace() {
		c.changed = c.changed[:0]
		return c.ops
	}
	slices.SortFunc(c.removed, compareKeys)
	out, r := c.spare[:0], 0
	// keep appends old unless it was removed; removed is sorted like ops.
	keep := func(old *OperationUsage) {
		k := keyOf(old)
		for r < len(c.removed) && compareKeys(c.removed[r], k) < 0 {
			r++
		}
		if r == len(c.removed) || compareKeys(c.removed[r], k) != 0 {
			out = append(out, *old)
		}
	}
	i := 0
	for j := range c.changed {
		u := &c.changed[j]
		k := keyOf(u)
		for ; i < len(c.ops) && compareKeys(keyOf(&c.ops[i]), k) < 0; i++ {
			keep(&c.ops[i])
		}
		if i < len(c.ops) && compareKeys(keyOf(&c.ops[i]), k) == 0 {
			i++ // replaced by u (a removed one re-added too)
		}
		out = append(out, *u)
	}
	for ; i < len(c.ops); i++ {
		keep(&c.ops[i])
	}
	c.ops, c.spare = out, c.ops
	c.changed, c.removed = c.changed[:0], c.removed[:0]
	return c.ops
}

// replace overwrites the entries of the sorted changes in ops, and
// reports whether they were all there (when not, the merge does the rest).
func (c *OperationsCopy) replace() bool {
	for j := range c.changed {
		u := &c.changed[j]
		i, found := slices.BinarySearchFunc(c.ops, keyOf(u), func(o OperationUsage, k opKey) int { return compareKeys(keyOf(&o), k) })
		if !found {
			return false
		}
		c.ops[i] = *u
	}
	return true
}

// noteChanged records that operation e's report may have changed, for the
// copy that follows the changes (see OperationsCopy); refresh calls it
// after every change of an operation.
func (p *Placement) noteChanged(e *element) {
	if !p.tracking || e.changed {
		return
	}
	e.changed = true
	p.changedOps = append(p.changedOps, e)
	p.checkChanges()
}

// noteRemoved records that operation e was removed, for the copy that
// follows the changes.
func (p *Placement) noteRemoved(e *element) {
	if !p.tracking {
		return
	}
	p.removedOps = append(p.removedOps, opKey{e.order, scheduler.OperationID(e.name)})
	p.checkChanges()
}

// checkChanges stops following the changes when there are more than half
// as many as operations (plus a margin): a full copy then costs about as
// much as the changes, and the lists stay O(n) when nobody collects.
func (p *Placement) checkChanges() {
	if len(p.changedOps)+len(p.removedOps) > len(p.opList)/2+256 {
		p.forgetChanges()
		p.tracking = false
	}
}

// forgetChanges empties the change lists.
func (p *Placement) forgetChanges() {
	for _, e := range p.changedOps {
		e.changed = false
	}
	clear(p.changedOps)
	p.changedOps = p.changedOps[:0]
	clear(p.removedOps)
	p.removedOps = p.removedOps[:0]
}
