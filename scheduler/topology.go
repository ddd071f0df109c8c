package scheduler

import "slices"

// An Engine that updates the same tree again and again mostly sees the
// same structure: the same pools with the same parents and modes, the same
// operations in the same pools, in the same order; only the numbers change.
// Building the tree's structure (indexing the pools and the operation ids,
// checking for duplicates, cycles and clashes, the child lists, the fifo
// order) is then the same work with the same outcome, so the Engine keeps
// what the last build found and only re-reads the numbers (rebuild). The
// structure is compared in full, name by name, before it is reused (no
// hash); a fifo pool's order is reused only while its operations are still
// in that order by their current sort keys. The package-level Update,
// whose engines are shared, never records or reuses a structure (see
// tree.pooled).
//
// What the structure depends on is listed in topology.names and topoPool
// (names, parents, modes, fifo sort parameters, the pools' order) and, for
// the operations, read from the tree's own index of the last build (ids in
// order in tree.opIdx, pools in tree.opPool), plus the fifo sort keys
// checked in matches: an input added later that changes the structure must
// be added there.

// topology is the structure of the last tree an Engine built.
type topology struct {
	valid bool
	// names are the pools' names, apart from the rest of each pool's
	// structure (pools), so that matches, which looks up an operation's
	// pool name in them, finds them in a compact list.
	names []PoolID
	pools []topoPool
	// fifo holds the pools' fifo sort parameters, copied (the caller may
	// reuse its slices): pool i's are fifo[pools[i].fifoLo:pools[i].fifoHi].
	fifo []FifoSortParameter
}

type topoPool struct {
	parent         PoolID
	mode           Mode
	fifoLo, fifoHi int
}

// record remembers snap's structure after a successful build (the
// operations' is the tree's index of them, see matches).
func (tp *topology) record(snap *Snapshot) {
	tp.names = tp.names[:0]
	tp.pools = tp.pools[:0]
	tp.fifo = tp.fifo[:0]
	for i := range snap.Pools {
		p := &snap.Pools[i]
		lo := len(tp.fifo)
		tp.fifo = append(tp.fifo, p.FifoSortParameters...)
		tp.names = append(tp.names, p.Name)
		tp.pools = append(tp.pools, topoPool{parent: p.Parent, mode: p.Mode, fifoLo: lo, fifoHi: len(tp.fifo)})
	}
	tp.valid = true
}

// forget drops the remembered structure (and its references to the
// caller's names).
func (tp *topology) forget() {
	clear(tp.names)
	clear(tp.pools)
	tp.names, tp.pools, tp.fifo = tp.names[:0], tp.pools[:0], tp.fifo[:0]
	tp.valid = false
}

// matches reports whether snap has the structure t was last built with,
// fifo orders included, and validates the operations for rebuild as it
// goes (see validateOperation). With a valid structure, t's index of the
// operations is the last build's: operation i's id is t.opIdx.keys[i] and
// its pool slot t.opPool[i] (0: the root, whose operations name no pool;
// otherwise pool t.opPool[i]-1, named as snap's pool there once the pools
// match).
func (tp *topology) matches(snap *Snapshot, t *tree) bool {
	ids := t.opIdx.keys
	if len(snap.Operations) != len(ids) || !tp.poolsMatch(snap) {
		return false
	}
	// Each operation is validated for rebuild as it is compared (see
	// validateOperation).
	t.opSame = grow(t.opSame, len(ids))
	t.opErr = nil
	for i := range snap.Operations {
		o := &snap.Operations[i]
		var pool PoolID
		if ps := t.opPool[i]; ps > 0 {
			pool = tp.names[ps-1]
		}
		if string(o.ID) != ids[i] || o.Pool != pool {
			return false
		}
		t.validateOperation(i, o)
	}
	// A fifo pool's operations, as the last build sorted them, must be the
	// stable sort of the input order by the current keys: sorted by key,
	// ties in input order.
	for i := range snap.Pools {
		p := &snap.Pools[i]
		if p.Mode != ModeFIFO {
			continue
		}
		ops := t.opList[t.opStart[i+1]:t.opStart[i+2]]
		cmp := fifoCompare(snap.Operations, p.FifoSortParameters)
		for k := 1; k < len(ops); k++ {
			if c := cmp(ops[k-1], ops[k]); c > 0 || c == 0 && ops[k-1] > ops[k] {
				return false
			}
		}
	}
	return true
}

// poolsMatch reports whether snap's pools are those t was last built
// with: names, parents, modes and fifo sort parameters, in the same order.
func (tp *topology) poolsMatch(snap *Snapshot) bool {
	if !tp.valid || len(snap.Pools) != len(tp.pools) {
		return false
	}
	for i := range snap.Pools {
		p, q := &snap.Pools[i], &tp.pools[i]
		if p.Name != tp.names[i] || p.Parent != q.parent || p.Mode != q.mode ||
			!slices.Equal(p.FifoSortParameters, tp.fifo[q.fifoLo:q.fifoHi]) {
			return false
		}
	}
	return true
}

// rebuild is build for a snapshot whose structure matches the last tree
// built: the values are validated and re-read, the structure is kept.
// Errors are those build reports for the same snapshot (with a valid
// structure only the values can be wrong: pools' first, then operations').
func (t *tree) rebuild(snap *Snapshot) error {
	for i := range snap.Pools {
		if err := snap.Pools[i].Validate(snap.Tree.MainResource); err != nil {
			return err
		}
	}
	if t.opErr != nil { // see matches
		return t.opErr
	}
	clear(t.prevSince)
	clear(t.vols)
	// Operations whose inputs did not change keep their elements and
	// functions (see opcache.go); the pools' functions are built again.
	keep := t.topo.valid && t.sameGlobals(&t.opG)
	keepFn := keep && t.keepFunctions()
	if !keep {
		t.resetFunctions()
	}
	// The root's and the pools' elements keep their structure; everything
	// else starts from zero, as build leaves it (their functions are
	// written when they are prepared, see startLayout). Their names are
	// kept too: the pools' names are those the structure was built with
	// (equal to snap's, or it would not match), as a kept operation's
	// name is its id from the update that filled its element; reading
	// them from snap again would visit the pools' configurations in the
	// tree's order, scattered.
	for _, i := range t.pools {
		e := &t.el[i]
		*e = element{kind: e.kind, parent: e.parent, kidLo: e.kidLo, kidHi: e.kidHi, poolKids: e.poolKids,
			fifo: e.fifo, ord: e.ord, src: e.src, depth: e.depth, opsSummed: e.opsSummed}
	}
	t.fill(snap, keep, keepFn, true, false)
	return nil
}

// validateOperation validates operation i (o) of snap for rebuild, with
// the error Validate reports (the first one of the operations is kept in
// t.opErr), and sets t.opSame[i] when its inputs are bitwise those
// recorded in t.opIn[i] (see opcache.go). Such an operation's recorded
// fields are not checked again: every record in opIn holds the inputs of
// an operation that passed Validate (fill records only operations of a
// validated snapshot) or is the zero record, and Validate's verdict on
// those fields depends on their bits only. Its id and the fields opInputs
// does not record are checked as Validate checks them. matches calls it
// for each operation it compares, while the operation is at hand (one
// pass over the operations instead of two).
func (t *tree) validateOperation(i int, o *Operation) {
	same := t.opIn[i].same(o)
	t.opSame[i] = same
	if t.opErr == nil {
		t.opErr = o.validateKnown(same)
	}
}
