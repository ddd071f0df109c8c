package scheduler

import "sync"

// Engine runs fair-share updates exactly like Update and keeps its working
// memory — the element tree, the scratch buffers and the arena of
// fit-factor functions — from one update to the next, so that a caller that
// updates a tree again and again allocates little beyond each Result. The
// zero value is ready to use. An Engine is not safe for concurrent use. The
// Results it returns share no memory with the Engine or with each other;
// between updates the Engine still refers to the last snapshot.
type Engine struct {
	t tree
}

// Update runs one fair-share update; see the package-level Update.
func (en *Engine) Update(snap *Snapshot, prev *State) (*Result, error) {
	return en.t.update(snap, prev)
}

// release drops the engine's references into the last snapshot (pool and
// operation configurations, names, the tree configuration, the index maps'
// keys), so that an idle pooled engine does not keep a caller's snapshot
// alive.
func (en *Engine) release() {
	t := &en.t
	clear(t.names)
	clear(t.poolIdx)
	clear(t.seenOps)
	t.snap, t.cfg = nil, nil
}

// enginePool lends engines to the package-level Update.
var enginePool = sync.Pool{New: func() any { return new(Engine) }}
