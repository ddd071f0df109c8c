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
