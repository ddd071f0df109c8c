package scheduler

import (
	"fmt"
	"reflect"
	"sync"
)

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
	res, err := en.t.update(snap, prev)
	en.setReuse(err)
	return res, err
}

// UpdateInto runs one fair-share update like Update and writes its result
// into res, reusing res's memory: the element records (with their job
// classifications and integral attributes) and the state's pools map and
// operations list. A caller that updates a tree again and again can keep
// two Results and update into them in turn, the state of one being the
// previous state of the next:
//
//	err := en.UpdateInto(&b, snap, &a.State) // then &a from &b.State, ...
//
// The contract:
//   - Every field of res is overwritten. Whatever res held before (records,
//     Jobs slices, Integral records, the State's map and list) is reused
//     and must no longer be read by the caller: only res as UpdateInto
//     leaves it is valid, until the next UpdateInto into it.
//   - prev may not share its pools map or its operations list with
//     res.State (for example prev == &res.State): UpdateInto reports
//     ErrInvalidConfig without updating.
//   - On an error res is left as it was.
//
// The Result shares no memory with the Engine, as with Update.
func (en *Engine) UpdateInto(res *Result, snap *Snapshot, prev *State) error {
	if prev != nil && (sameMap(prev.Pools, res.State.Pools) || sameArray(prev.Operations, res.State.Operations)) {
		return fmt.Errorf("%w: the previous state shares its memory with the result to update into", ErrInvalidConfig)
	}
	err := en.t.run(res, true, snap, prev)
	en.setReuse(err)
	return err
}

// setReuse clears the counts fill made when the update ended with err
// (a failed update may have filled some operations before it stopped).
func (en *Engine) setReuse(err error) {
	if err != nil {
		en.t.reuse = Reuse{}
	}
}

// sameMap reports whether a and b are the same non-nil map.
func sameMap[K comparable, V any](a, b map[K]V) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// sameArray reports whether a and b share their backing array: whether,
// extended to their capacities, they end at the same element (slices of one
// array do, unless a full slice expression cut one's capacity).
func sameArray[T any](a, b []T) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:cap(a)][cap(a)-1] == &b[:cap(b)][cap(b)-1]
}

// release drops the engine's references into the last snapshot (pool and
// operation configurations, names, the tree configuration, the index maps'
// keys), so that an idle pooled engine does not keep a caller's snapshot
// alive.
func (en *Engine) release() {
	t := &en.t
	clear(t.names)
	clear(t.namesOld)
	clear(t.poolIdx)
	t.opIdx.reset(0)
	t.topo.forget()
	t.snap, t.cfg = nil, nil
}

// enginePool lends engines to the package-level Update.
var enginePool = sync.Pool{New: func() any { return new(Engine) }}
