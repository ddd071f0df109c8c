package scheduler

// In a large cluster some operation starts or finishes between almost any
// two updates, so the operation list — and with it the structure that
// rebuild reuses (topology.go) — changes at almost every update, while
// the pools stay the same and most operations stay in their pools with
// the same inputs. reshape is build for that case: the snapshot's pools
// are those of the last tree (names, parents, modes, fifo sort
// parameters, in the same order), its operations are not. It indexes and
// checks the operations and lays out the tree again exactly as build does
// (so every element lands where build would put it), and then, for every
// pool whose operations are the same as in the last tree in the same
// order (the fifo order by the current keys), moves their elements and
// functions from the last tree instead of filling and building them (see
// fill): those of the operations whose inputs are bitwise unchanged (see
// opcache.go), with the identity of their functions (element.ver). In a
// pool whose operations changed, the operations that stay are found by id
// and moved too. The pools' functions stay where they are (tree.lz, by
// the pool's index in tree.pools, which reshape does not change); those
// whose inputs are unchanged are kept (see poolcache.go), their children's
// element indexes renumbered (layoutGen).
//
// The last tree's elements, names, functions and inputs are kept in second
// buffers (tree.elOld and the rest) while the new ones are written: an
// Engine holds two element stores.
//
// patch (patch.go), which moves nothing, is tried first; reshape builds
// the tree when patch does not apply (an operation that stays changed its
// place in the list or its pool) and compacts the store once patch has
// let it drift too far from pre-order. The last tree's operations of a
// pool are read from its child list, wherever they are in the store.
//
// Neither is tried unless the shortcut applies (keepsPools: the pools are
// unchanged and valid, the operations' inputs recorded, on the same
// cluster and gang setting); reshape reports false, leaving build to do a
// full build, when the snapshot is invalid: a full build finds the same
// error, reported the same way.

// matchAhead is how far ahead among a pool's last operations reshape
// looks for an operation of a pool whose operations changed.
const matchAhead = 8

// keepsPools reports whether patch and reshape may build the tree for
// snap from the last tree: its pools are those of the last tree, valid,
// and the operations' inputs were recorded (topology.valid, which the
// package-level Update's engine never sets) on the same cluster and gang
// setting.
func (t *tree) keepsPools(snap *Snapshot) bool {
	if !t.topo.poolsMatch(snap) { // false unless topo.valid: opIn is recorded
		return false
	}
	for i := range snap.Pools {
		if snap.Pools[i].Validate(snap.Tree.MainResource) != nil {
			return false
		}
	}
	return t.sameGlobals(&t.opG)
}

// reshape builds the tree for snap from the last tree, when it can
// (keepsPools must hold).
func (t *tree) reshape(snap *Snapshot) bool {
	np, no := len(snap.Pools), len(snap.Operations)

	// Each slot's operations in the last tree: its element's children
	// after its child pools, at t.kids[oldFirst:oldFirst+oldCount] (in
	// the last tree's pre-order, contiguous elements after the pool's
	// child pools' subtrees; after patch, anywhere in the store).
	t.oldFirst = grow(t.oldFirst, np+1)
	t.oldCount = grow(t.oldCount, np+1)
	for s := range np + 1 {
		pe := &t.el[t.slots[s].elem]
		t.oldCount[s], t.oldFirst[s] = pe.kidHi-pe.kidLo-pe.poolKids, pe.kidLo+pe.poolKids
	}

	// Index and check the operations as build does (any problem: a full
	// build reports it). The pools' indexes and child lists are those of
	// the last build.
	t.opIdx.reset(no)
	t.opPool = grow(t.opPool, no)
	t.opStart = grow(t.opStart, np+2)
	clear(t.opStart)
	var keys [findBatch]string
	var hs [findBatch]uint64
	for b := 0; b < no; b += findBatch {
		batch := t.opIdx.hashBatch(snap.Operations, b, &keys, &hs)
		for k := range batch {
			o := &batch[k]
			if _, ok := t.opIdx.addHashed(keys[k], hs[k]); !ok {
				return false
			}
			ps := 0
			if o.Pool != "" {
				pi, ok := t.poolIdx[o.Pool]
				if !ok {
					return false
				}
				ps = pi + 1
			}
			t.opPool[b+k] = ps
			t.opStart[ps+1]++
		}
	}
	for i := range snap.Pools {
		if _, bad := t.opIdx.find(string(snap.Pools[i].Name)); bad {
			return false
		}
	}
	t.opList = t.slotLists(t.opStart, t.opPool[:no], t.opList)
	for i := range snap.Pools {
		if p := &snap.Pools[i]; p.Mode == ModeFIFO {
			sortFIFO(t.opList[t.opStart[i+1]:t.opStart[i+2]], snap.Operations, p.FifoSortParameters)
		}
	}

	// The operations of a slot whose list is the last tree's, in the same
	// order, map to its last elements one to one. In another slot each
	// operation is looked for among the last ones by its id, in order, a
	// few places ahead of the last one found (operations that stay keep
	// their order: the input order, or the fifo order by unchanged keys;
	// one not found is filled).
	t.opOld = grow(t.opOld, no)
	t.opOldSrc = grow(t.opOldSrc, no)
	for s := range np + 1 {
		ops := t.opList[t.opStart[s]:t.opStart[s+1]]
		first, cnt := int(t.oldFirst[s]), int(t.oldCount[s])
		old := t.kids[first : first+cnt]
		same := len(ops) == cnt
		for k := 0; same && k < len(ops); k++ {
			same = t.names[old[k]] == string(snap.Operations[ops[k]].ID)
		}
		if same {
			for k, oi := range ops {
				t.opOld[oi] = int32(old[k])
				t.opOldSrc[oi] = t.el[old[k]].src
			}
			continue
		}
		p := 0 // the next last operation to look at
		for _, oi := range ops {
			t.opOld[oi] = -1
			id := string(snap.Operations[oi].ID)
			for d := 0; d < matchAhead && p+d < cnt; d++ {
				if j := old[p+d]; t.names[j] == id {
					t.opOld[oi], t.opOldSrc[oi] = int32(j), t.el[j].src
					p += d + 1
					break
				}
			}
		}
	}

	// The operations are validated now that those whose inputs are
	// unchanged are known (see validateOperation).
	t.opSame = grow(t.opSame, no)
	for oi := range snap.Operations {
		o := &snap.Operations[oi]
		same := t.opOld[oi] >= 0 && t.opIn[t.opOldSrc[oi]].same(o)
		t.opSame[oi] = same
		if o.validateKnown(same) != nil {
			return false
		}
	}

	// The last tree moves to the second buffers (its children lists are
	// read no more); the new one is laid out as build lays it out.
	t.el, t.elOld = t.elOld, t.el
	t.names, t.namesOld = t.namesOld, t.names
	t.fnS, t.fnSOld = t.fnSOld, t.fnS
	t.opIn, t.opInOld = t.opInOld, t.opIn
	keepFn := t.keepFunctions()
	n := t.startLayout(np, no)
	t.opIn = grow(t.opIn, no)
	t.moveFrom = grow(t.moveFrom, n)
	t.moveSrc = grow(t.moveSrc, n)
	for i := range t.moveFrom {
		t.moveFrom[i] = -1
	}
	// The pools are those of the last build (which checked them): fifo
	// pools have no child pools, every pool is reachable.
	if _, err := t.layout(snap, false); err != nil {
		return false
	}
	t.layoutGen++ // the elements moved (see renumberSum)
	t.fill(snap, true, keepFn, true, true)
	t.topo.record(snap)
	return true
}

// moveKept copies the elements, names and functions of the operations fill
// kept from the last tree (t.moveFrom[idx] is the last element of the
// operation now at idx, -1 for the others), in the new tree's order (a
// pool's operations are contiguous in both trees, mostly in the same
// order, so both are read and written nearly in order), at the
// operation's new position among its pool's operations.
func (t *tree) moveKept(keepFn bool) {
	for idx, old := range t.moveFrom {
		if old < 0 {
			continue
		}
		oi := int(t.moveSrc[idx])
		e := &t.el[idx]
		*e = t.elOld[old]
		e.parent, e.src, e.fifoIndex = t.slots[t.opPool[oi]].elem, int32(oi), int32(t.opFifo[oi])
		t.names[idx] = t.namesOld[old]
		t.fnS[idx] = t.fnSOld[old]
		if !keepFn {
			e.sDone, e.ver = false, t.newVer()
			t.fnS[idx] = nil
		}
	}
}
