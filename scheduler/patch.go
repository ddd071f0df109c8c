package scheduler

import "time"

// patch is reshape without the move. When operations start and finish
// between two updates and the pools stay the same, reshape lays the whole
// tree out again and moves every kept element to its new place: with
// 100,000 operations, 50 MB of elements copied because a hundred
// operations came and went. patch instead leaves every operation that
// stays in the element it had; a finished operation's element becomes a
// hole (kindHole, in no child list), a started one takes a hole or a new
// element at the end of the store, and only the child lists (tree.kids,
// one int per element) are written again. The elements are then no longer
// in pre-order: the report walks the tree (preorder) instead of the store.
//
// patch applies when the operations that stay are in the same relative
// order as in the last update's list (started operations anywhere,
// finished ones removed: a scheduler appends the operations it admits),
// each in the pool it was in, and the store has not drifted too far from
// pre-order (maxDrift); otherwise reshape lays the tree out again (and
// compacts the store).
//
// Invariants it keeps (see also opcache.go and poolcache.go):
//   - A kept operation's element, name, function and function identity
//     (ver) stay where they were; its element's src and fifoIndex are
//     brought up to date. Its pool's element does not move either (the
//     pools are the same, laid out as before), so no kept children's sum
//     needs renumbering (layoutGen does not change).
//   - A hole's element holds no name and no function, and is reused only
//     by fill, which writes it whole under a new function identity.
//   - tree.kids lists every pool's children, child pools first, then its
//     operations in input order (fifo order in a fifo pool), exactly as a
//     fresh layout lists them: every sum over children, and the report's
//     order, are those of a fresh build.

// kindHole marks an element of the store no element of the tree uses (see
// patch). It is never reported.
const kindHole ElementKind = -1

// maxDrift bounds how far the element store may drift from pre-order
// before reshape compacts it: the holes plus the operations placed out of
// order since the last layout, as a fraction 1/maxDrift of the elements.
const maxDrift = 16

// minDrift is the drift a small tree's store may have all the same.
const minDrift = 8

// patch builds the tree for snap in place from the last tree, when it can
// (see above; keepsPools must hold); it reports false when it cannot,
// leaving the last tree as it was for reshape (what patchMatch wrote,
// reshape writes again).
func (t *tree) patch(snap *Snapshot) bool {
	t.swapOps()
	finished, ok := t.patchMatch(snap)
	if !ok {
		t.swapOps() // back: reshape reads the last tree's
		return false
	}
	t.patchLayout(snap, finished)
	return true
}

// swapOps swaps the operations' index, pools, elements and recorded inputs
// with their second buffers.
func (t *tree) swapOps() {
	t.opIdx, t.opIdxOld = t.opIdxOld, t.opIdx
	t.opPool, t.opPoolOld = t.opPoolOld, t.opPool
	t.opElem, t.opElemOld = t.opElemOld, t.opElem
	t.opIn, t.opInOld = t.opInOld, t.opIn
}

// patchMatch indexes snap's operations, finds each one's place in the last
// update's list (t.opPrev, -1 for a started one), checks and validates
// them, and lists them by pool; it writes nothing of the tree's elements.
// It returns how many of the last operations finished, and false when
// patch does not apply or the snapshot is invalid (a full build finds the
// same error, reported the same way).
func (t *tree) patchMatch(snap *Snapshot) (finished int, ok bool) {
	np, no := len(snap.Pools), len(snap.Operations)
	oldKeys := t.opIdxOld.keys
	nOld := len(oldKeys)
	t.opIdx.reset(no)
	t.opPool = grow(t.opPool, no)
	t.opPrev = grow(t.opPrev, no)
	t.opIn = grow(t.opIn, no)
	t.opSame = grow(t.opSame, no)
	t.opStart = grow(t.opStart, np+2)
	clear(t.opStart)
	started, p := 0, 0 // p: the next operation of the last list to match
	var keys [findBatch]string
	var hs [findBatch]uint64
	for b := 0; b < no; b += findBatch {
		batch := t.opIdx.hashBatch(snap.Operations, b, &keys, &hs)
		for k := range batch {
			o, oi := &batch[k], b+k
			if _, ok := t.opIdx.addHashed(keys[k], hs[k]); !ok {
				return 0, false // listed twice
			}
			q := -1
			if p < nOld && oldKeys[p] == keys[k] {
				q = p
			} else if j, ok := t.opIdxOld.find(keys[k]); ok {
				if j < p {
					return 0, false // out of the last order
				}
				q = j
			}
			ps := 0
			if q >= 0 {
				p = q + 1
				ps = t.opPoolOld[q]
				if ps > 0 && o.Pool != t.topo.names[ps-1] || ps == 0 && o.Pool != "" {
					return 0, false // moved to another pool
				}
			} else {
				started++
				if _, clash := t.poolIdx[PoolID(keys[k])]; clash {
					return 0, false // a pool's name (one that stays was checked when it started)
				}
				if o.Pool != "" {
					pi, ok := t.poolIdx[o.Pool]
					if !ok {
						return 0, false
					}
					ps = pi + 1
				}
			}
			t.opPool[oi], t.opPrev[oi] = ps, int32(q)
			t.opStart[ps+1]++
			same := q >= 0 && t.opInOld[q].same(o)
			if same {
				t.opIn[oi] = t.opInOld[q]
			}
			t.opSame[oi] = same
			if o.validateKnown(same) != nil {
				return 0, false
			}
		}
	}
	finished = nOld - (no - started)
	if t.drift+finished+started+1 > max((1+np+no)/maxDrift, minDrift) {
		return 0, false // reshape compacts the store
	}
	t.opList = t.slotLists(t.opStart, t.opPool[:no], t.opList)
	for i := range snap.Pools {
		if p := &snap.Pools[i]; p.Mode == ModeFIFO {
			sortFIFO(t.opList[t.opStart[i+1]:t.opStart[i+2]], snap.Operations, p.FifoSortParameters)
		}
	}
	return finished, true
}

// patchLayout makes the tree snap's, in place, once patchMatch has matched
// its operations: holes for the finished operations, elements for the
// started ones, the child lists written again, the kept operations'
// elements brought up to date, and then fill, as rebuild fills; finished
// operations of the last list finished.
func (t *tree) patchLayout(snap *Snapshot, finished int) {
	np, no := len(snap.Pools), len(snap.Operations)
	nOld := len(t.opIdxOld.keys)

	// The finished operations' elements become holes, in the last list's
	// order.
	t.oldTaken = grow(t.oldTaken, nOld)
	clear(t.oldTaken)
	for _, q := range t.opPrev[:no] {
		if q >= 0 {
			t.oldTaken[q] = true
		}
	}
	for q, taken := range t.oldTaken {
		if taken {
			continue
		}
		j := t.opElemOld[q]
		t.el[j] = element{kind: kindHole}
		t.names[j] = ""
		t.fnS[j] = nil
		t.free = append(t.free, int32(j))
	}
	// The drift: holes, operations out of place, and one for the child
	// lists written again (a fifo pool's kept operations may be in
	// another order, in elements that did not move).
	t.drift += finished + 1

	// The pools whose operations changed: those that lost one or got a
	// started one (a pool's kept operations keep their order, see
	// patchMatch), read by fill (see slotCache).
	t.slotChanged = grow(t.slotChanged, np+1)
	clear(t.slotChanged)
	for q, taken := range t.oldTaken {
		if !taken {
			t.slotChanged[t.opPoolOld[q]] = true
		}
	}
	for oi, q := range t.opPrev[:no] {
		if q < 0 {
			t.slotChanged[t.opPool[oi]] = true
		}
	}

	// Every operation's element: a kept one's, or a hole (the last made
	// first), or a new one at the end of the store.
	t.opElem = grow(t.opElem, no)
	for oi, q := range t.opPrev[:no] {
		if q >= 0 {
			t.opElem[oi] = t.opElemOld[q]
			continue
		}
		if n := len(t.free); n > 0 {
			t.opElem[oi] = int(t.free[n-1])
			t.free = t.free[:n-1]
		} else {
			t.opElem[oi] = len(t.el)
			t.el = append(t.el, element{})
			t.names = append(t.names, "")
			t.fnS = append(t.fnS, nil)
			t.fnM = append(t.fnM, nil)
			t.prevSince = append(t.prevSince, time.Time{})
		}
		t.drift++ // out of pre-order
	}
	clear(t.prevSince)
	clear(t.vols)

	// The child lists, pool by pool in pre-order: the child pools as they
	// were, then the operations; the kept operations' elements get their
	// place in the snapshot and in their pool.
	t.kids, t.kidsOld = t.kidsOld, t.kids
	t.kids = grow(t.kids, len(t.el)-len(t.free)-1)[:0]
	t.opFifo = grow(t.opFifo, no)
	for _, i := range t.pools {
		e := &t.el[i]
		s := 0
		if i != 0 {
			s = int(e.src) + 1
		}
		lo := len(t.kids)
		t.kids = append(t.kids, t.kidsOld[e.kidLo:e.kidLo+e.poolKids]...)
		for fi, oi := range t.opList[t.opStart[s]:t.opStart[s+1]] {
			idx := t.opElem[oi]
			t.kids = append(t.kids, idx)
			t.opFifo[oi] = fi
			if t.opSame[oi] {
				oe := &t.el[idx]
				oe.src, oe.fifoIndex = int32(oi), int32(fi)
			}
		}
		// The pool's element starts from zero but for its structure, as
		// rebuild leaves it.
		*e = element{kind: e.kind, parent: e.parent, kidLo: int32(lo), kidHi: int32(len(t.kids)), poolKids: e.poolKids,
			fifo: e.fifo, ord: e.ord, src: e.src, depth: e.depth, opsSummed: e.opsSummed}
	}

	keepFn := t.keepFunctions()
	t.patched = true
	t.fill(snap, true, keepFn, true, false)
	t.patched = false
	t.topo.record(snap)
}

// preorder returns the elements of the tree in pre-order (nil when the
// store is in pre-order, holes-free: the elements' own order).
func (t *tree) preorder() []int32 {
	if t.drift == 0 {
		return nil
	}
	t.seq = t.appendPreorder(t.seq[:0], 0)
	return t.seq
}

// appendPreorder appends element i's subtree to seq in pre-order: i, its
// child pools' subtrees, then its operations.
func (t *tree) appendPreorder(seq []int32, i int) []int32 {
	seq = append(seq, int32(i))
	e := &t.el[i]
	kids := t.kids[e.kidLo:e.kidHi]
	for _, c := range kids[:e.poolKids] {
		seq = t.appendPreorder(seq, c)
	}
	for _, c := range kids[e.poolKids:] {
		seq = append(seq, int32(c))
	}
	return seq
}
