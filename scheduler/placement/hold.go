package placement

import "github.com/sharetree/sharetree/scheduler"

// Release lets a held operation's pending jobs start (see
// OperationSpec.Held). It returns false, changing nothing, when the
// operation is unknown or not held. O(depth·log n).
func (p *Placement) Release(id scheduler.OperationID) bool {
	e := p.ops[id]
	if e == nil || !e.op.held {
		return false
	}
	e.op.held = false
	p.refresh(e)
	return true
}

// Held reports whether an operation is held; false for an unknown one.
// O(1).
func (p *Placement) Held(id scheduler.OperationID) bool {
	e := p.ops[id]
	return e != nil && e.op.held
}

// ReleaseAll releases every held operation but those keep reports (nil:
// none), in submission order, and returns how many it released.
// O(operations + released·depth·log n).
func (p *Placement) ReleaseAll(keep func(scheduler.OperationID) bool) int {
	n := 0
	for _, e := range p.opList {
		if e.op.held && (keep == nil || !keep(scheduler.OperationID(e.name))) {
			e.op.held = false
			p.refresh(e)
			n++
		}
	}
	return n
}
