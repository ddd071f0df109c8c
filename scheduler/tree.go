package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// ElementKind says whether an element is the root, a pool or an operation.
type ElementKind int

const (
	// KindRoot is the tree's root.
	KindRoot ElementKind = iota
	// KindPool is a pool.
	KindPool
	// KindOperation is an operation (a leaf).
	KindOperation
)

// String returns "root", "pool" or "operation".
func (k ElementKind) String() string {
	switch k {
	case KindRoot:
		return "root"
	case KindPool:
		return "pool"
	default:
		return "operation"
	}
}

// resourceSet is a set of resource indices.
type resourceSet uint8

// element is the engine's working copy of one tree element during an update.
// It holds no pointers (names, functions and the previous state's times
// are kept in the tree's slices, indexed like the elements), so that the
// garbage collector never scans the element store, and the fields the
// fit-factor functions and the distribution read come first.
type element struct {
	kind ElementKind
	// parent is the parent's index; -1 for the root.
	parent int32
	// The children are tree.kids[kidLo:kidHi]: child pools first (poolKids
	// of them), then operations.
	kidLo, kidHi, poolKids int32
	// gang: an operation whose function is a step (a gang with the tree's
	// step function enabled). fifo: a pool in fifo mode. idle: an operation
	// with no usage. prepared: a pool's (or the root's) functions are
	// prepared (see prepare; operations' are never marked).
	gang, fifo, idle, prepared bool
	// varies holds the resources in which the element's FairShareBySuggestion
	// may change (in the others it is exactly constant).
	varies resourceSet
	// sDone: the element's functions are complete (operations' always are;
	// pools' are built on demand, see lazy.go).
	sDone bool
	// opVaries is the union of the varies of a pool's operations (set when
	// the tree is built, when the operations' varies are, see
	// initOperation).
	opVaries resourceSet
	// opsSummed: a pool's demand and usage already hold its operations'
	// sum (see fill).
	opsSummed bool
	// ord is a pool's index in tree.pools (and tree.lz).
	ord int32
	// sEnd is activeEnd of a complete FairShareBySuggestion.
	sEnd int32

	weight float64
	// scale is the suggestion scale among siblings: weight / smallest
	// sibling weight (see computeScales).
	scale float64
	// fLo is the start of the FairShareByFitFactor domain.
	fLo float64
	// ver identifies the element's functions: an operation's is given by
	// fill (see opcache.go), a pool's when it is prepared (see
	// poolcache.go); equal numbers mean equal functions.
	ver uint64

	// Shares of the cluster total.
	demandShare, usageShare, limitsShare Share
	fairShare                            Share
	// limitedDemand is S(1): an operation's, set when its S is built; a
	// pool's, set by limitedDemands (for the report).
	limitedDemand Share

	// src is the pool's index in the snapshot's pools, the operation's in
	// its operations; the root's is the number of pools (the index of its
	// volume bookkeeping, see vol).
	src       int32
	depth     int32
	fifoIndex int32
	dominant  ResourceType
	// Copied from an operation so that the report reads it from here.
	pendingJobs            int
	unschedulable, hasJobs bool
	// An operation's own starvation settings, when it sets them.
	hasOpTolerance, hasOpTimeout bool
	opTolerance                  float64
	opTimeout                    time.Duration

	// Absolute resources.
	demand, usage, limits Resources
}

// poolSlot is what fill reads and sums about the root (slot 0) or pool i
// (slot i+1) while it reads the operations: the pool's element index,
// depth and index in tree.pools (ord), whether it sums its operations' demand and usage (opsSummed), and
// those sums and its operations' varies, copied into the pool's element
// after the operations (a few hundred kilobytes of slots stay in cache,
// where the pools' elements lie scattered over the tree).
type poolSlot struct {
	elem, depth   int32
	ord           int32
	summed        bool
	varies        resourceSet
	changed       bool // see slotCache
	demand, usage Resources
}

// slotSums is what fill found for a slot in the last update: its
// operations' varies and, when it sums them, their demand and usage.
type slotSums struct {
	varies        resourceSet
	demand, usage Resources
}

// ordNode is the root's or a pool's place in the pools' tree by index in
// tree.pools: its parent's index (-1 for the root) and its child pools at
// tree.ordKids[lo:hi].
type ordNode struct {
	parent, lo, hi int32
}

// addKept adds a kept operation's recorded inputs to its pool's slot: its
// varies and, when the slot sums its operations, its demand and usage as
// its element has them (demand max(demand, usage), usage the operation's),
// which is what filling the element would add.
func (sl *poolSlot) addKept(in *opInputs) {
	sl.varies |= in.varies
	if sl.summed {
		for r := range sl.demand {
			sl.demand[r] += max(in.demand[r], in.usage[r])
			sl.usage[r] += in.usage[r]
		}
	}
}

// poolData is the part of the root's and the pools' elements that
// operations do not have (tree.pd, by index in tree.pools).
type poolData struct {
	// sgs is the strong guarantee share; pis the proposed integral share
	// (burst and relaxed grants).
	sgs, pis Share
	// effectiveSG is the effective (inferred) strong guarantee.
	effectiveSG Resources

	// limits is the pool's limits within the cluster (see poolSettings).
	limits Resources

	// Integral ratios (scalars).
	burstRatio, flowRatio                     float64 // after overcommit scaling (burst) / as specified (flow)
	totalBurstRatio, totalFlowRatio           float64
	lastShareRatio                            float64
	integral                                  GuaranteeType
	canAcceptFreeVolume, distributeFreeVolume bool

	// The pool's own starvation settings, when it sets them (see
	// inheritStarvationSettings), its strong guarantee as configured and
	// its weight when it sets one: poolSettings copies them from the
	// configuration, so that the later passes read them here, by index in
	// pools, where the configurations would be read scattered.
	hasTolerance, hasTimeout, hasAggressive, aggressive bool
	hasWeight                                           bool
	tolerance                                           float64
	timeout                                             time.Duration
	weight                                              float64
	strongGuarantee                                     PartialResources
	// starvation is the effective starvation settings, inherited
	// top-down in the report (see inheritStarvationSettings).
	starvation starvationSettings
}

// volumeState is a pool's integral-volume bookkeeping during an update.
type volumeState struct {
	volume                                   Resources
	capacity                                 Resources
	overflow, acceptable, acceptedFreeVolume Resources
	childrenOverflow                         Resources
}

// tree is the element tree of one update. Element 0 is the root; every
// element's children are listed in configuration order (pools first, then
// operations, each in input order; fifo pools order their operations by
// fifo_sort_parameters). A build lays the elements out in depth-first
// pre-order; after patch (patch.go) the store may hold holes and
// operations out of that order (drift), and the report walks the tree.
// Its buffers are reused by the next update of the same Engine; every
// update overwrites what it reads.
type tree struct {
	el []element
	// Indexed like el: names, functions (fnM for the root and pools only)
	// and when the previous state says each element went below its fair
	// share (zero when it does not).
	names     []string
	fnS       []vfunc
	fnM       []sfunc
	prevSince []time.Time
	// prevSeen marks, by operation index, the operations loadPrevious
	// found in the previous state (one bit each).
	prevSeen []uint64
	// pd and lz hold the pools' data and functions, by index in pools;
	// lzAlt holds second functions of some pools (pool k's at
	// lzAlt[altIdx[k]-1] when altIdx[k] > 0), see poolcache.go.
	pd     []poolData
	lz     []poolFn
	lzAlt  []poolFn
	altIdx []int32
	// verNext is the next function identity to give (see element.ver);
	// gen counts the updates and layoutGen the layouts of the tree (see
	// poolcache.go); poolStats counts, for tests, how the pools were
	// prepared in the last update.
	verNext, gen, layoutGen uint64
	poolStats               poolStats
	// pools lists the root and the pools, in pre-order.
	pools []int
	// ordNode and ordKids are the tree of the root and the pools by index
	// in pools (as pd): each one's parent and child pools
	// (ordKids[lo:hi]), so that the passes that read the pools' data
	// alone (the guarantees) need not visit their elements, scattered
	// over the element store.
	ordNode []ordNode
	ordKids []int32

	total Resources
	ones  Share
	snap  *Snapshot
	cfg   *TreeConfig
	ws    workspace

	kids []int
	vols []volumeState
	// Index of the snapshot.
	poolIdx map[PoolID]int
	opIdx   nameIndex // operation ids
	// Per pool slot (0 the root, i+1 pool i): parent slot, and the child
	// pools and operations as windows of poolList and opList.
	poolParent         []int
	poolStart, opStart []int
	poolList, opList   []int
	opPool             []int
	opElem             []int
	opFifo             []int // an operation's index in its fifo pool
	// slots holds, per pool slot, what fill needs about the pool (see
	// poolSlot), so that filling an operation touches no pool element;
	// slots[pi+1].elem is pool pi's element.
	slots []poolSlot
	// slotCache holds, by slot, what fill found for it in the last
	// update (slotSums). When an update keeps the structure, the
	// elements and their functions (rebuild), a slot none of whose
	// operations is filled again has the same operations with the same
	// inputs, in the same order, so its varies and sums are bitwise
	// those found last: fill reads only the operations of the slots
	// that changed (changed), not every operation's recorded inputs.
	slotCache   []slotSums
	scratchInts []int
	nodeShapes  []nodeShape
	// bestShare holds the memory share bestAllocationShare found for
	// each job shape in this update (see there).
	bestShare map[Resources]float64
	// topo is the structure of the last tree built (see topology).
	topo topology
	// opIn and opG are the inputs the operations' elements were last
	// filled from (see opcache.go), valid while topo.valid (a build
	// records the structure only after them; one that fails leaves the
	// structure invalid, or both unchanged); fnBase is the size of the
	// arena of operations' functions after the update that last reset it
	// (-1: not yet measured).
	opIn   []opInputs
	opG    opGlobals
	fnBase int
	// opSame[oi]: operation oi's inputs are those recorded for it (set
	// by the validation of rebuild and reshape, read by their fill);
	// opErr: the first operation's error that the validation for
	// rebuild found (see validateOperation).
	opSame []bool
	opErr  error
	// reuse counts the operations fill read and those it computed afresh
	// (see Engine.LastReuse; cleared when an update fails).
	reuse Reuse
	// The last tree's elements, names, functions and inputs while reshape
	// moves them, and each operation's element in them (-1: none) and its
	// index in the last snapshot, with the first element and count of
	// each slot's operations.
	elOld              []element
	namesOld           []string
	fnSOld             []vfunc
	opInOld            []opInputs
	opOld, opOldSrc    []int32
	oldFirst, oldCount []int32
	// moveFrom and moveSrc: for each new element, the last tree's element
	// moveKept copies there (-1: none) and the operation's index.
	moveFrom, moveSrc []int32
	// patch's buffers (see patch.go): the last update's operation index,
	// pools, elements and child lists while the new ones are written;
	// each operation's index in the last list (-1: started); which of the
	// last operations stay (oldTaken) and which pool slots changed; the
	// store's holes (free), how far it drifted from pre-order since it
	// was last laid out (drift: 0 when it is in pre-order without holes),
	// and the pre-order the report walks when it drifted (seq).
	opIdxOld              nameIndex
	opPoolOld, opElemOld  []int
	kidsOld               []int
	opPrev                []int32
	oldTaken, slotChanged []bool
	free, seq             []int32
	drift                 int
	// patched: fill is filling for patch (see slotChanged).
	patched bool
	// built says how the last build made the tree (for tests).
	built buildKind
	// pooled: the tree of an engine the package-level Update borrows,
	// which keeps nothing from one update to the next (see
	// Engine.release), so its builds record nothing either (neither the
	// operations' inputs and globals nor the structure): it never
	// rebuilds or reshapes.
	pooled bool
}

// buildKind is how a build made the tree: from nothing, or from the last
// tree (rebuild, patch, reshape).
type buildKind uint8

const (
	builtFull buildKind = iota
	builtRebuild
	builtPatch
	builtReshape
)

// children returns the indices of e's children.
func (t *tree) children(e *element) []int { return t.kids[e.kidLo:e.kidHi] }

// poolChildren returns the indices of e's child pools (its first children).
func (t *tree) poolChildren(e *element) []int { return t.kids[e.kidLo : e.kidLo+e.poolKids] }

// pool returns a pool's configuration.
func (t *tree) pool(e *element) *PoolConfig { return &t.snap.Pools[e.src] }

// op returns an operation's snapshot entry.
func (t *tree) op(e *element) *Operation { return &t.snap.Operations[e.src] }

// data returns the pool data of the root or a pool.
func (t *tree) data(e *element) *poolData { return &t.pd[e.ord] }

// vol returns the volume bookkeeping of the root or a pool.
func (t *tree) vol(e *element) *volumeState { return &t.vols[e.src] }

// build fills the tree from snap, reusing the tree's buffers.
func (t *tree) build(snap *Snapshot) error {
	if err := snap.Tree.Validate(); err != nil {
		return err
	}
	for i := range snap.Cluster.Total {
		if v := snap.Cluster.Total[i]; !validTotal(v) {
			return fmt.Errorf("%w: cluster total %s must be 0 or a number in [%g, %g], got %g", ErrInvalidConfig, ResourceType(i), MinAmount, MaxClusterAmount, v)
		}
	}
	for k := range snap.Cluster.Nodes {
		n := &snap.Cluster.Nodes[k]
		for i, v := range n.Resources {
			if !ValidAmount(v) {
				return fmt.Errorf("%w: node %q resources %s %s, got %g", ErrInvalidConfig, n.ID, ResourceType(i), AmountRule, v)
			}
		}
	}
	t.gen++
	t.poolStats = poolStats{}
	t.total = snap.Cluster.Total
	t.prepareNodeShapes(snap.Cluster.Nodes) // for every path below
	t.ones = Ones(snap.Cluster.Total)
	t.snap = snap
	t.cfg = &snap.Tree
	np, no := len(snap.Pools), len(snap.Operations)
	if t.topo.matches(snap, t) {
		t.built = builtRebuild
		return t.rebuild(snap)
	}
	if t.keepsPools(snap) {
		if t.patch(snap) {
			t.built = builtPatch
			return nil
		}
		if t.reshape(snap) {
			t.built = builtReshape
			return nil
		}
	}
	t.built = builtFull
	t.topo.valid = false
	t.dropPools() // the pools may be numbered differently

	// Index pools and check names and parents. Slot 0 is the root; pool i
	// is slot i+1.
	if t.poolIdx == nil {
		t.poolIdx = make(map[PoolID]int, np)
	}
	clear(t.poolIdx)
	poolIdx := t.poolIdx
	for i := range snap.Pools {
		p := &snap.Pools[i]
		if err := p.Validate(snap.Tree.MainResource); err != nil {
			return err
		}
		if _, dup := poolIdx[p.Name]; dup {
			return fmt.Errorf("%w: pool %q is defined twice", ErrInvalidTree, p.Name)
		}
		poolIdx[p.Name] = i
	}
	slot := func(p PoolID) (int, bool) {
		if p == "" {
			return 0, true
		}
		i, ok := poolIdx[p]
		return i + 1, ok
	}
	t.poolParent = grow(t.poolParent, np+1)
	t.poolStart = grow(t.poolStart, np+2)
	t.opStart = grow(t.opStart, np+2)
	clear(t.poolStart)
	clear(t.opStart)
	for i := range snap.Pools {
		p := &snap.Pools[i]
		ps, ok := slot(p.Parent)
		if !ok {
			return fmt.Errorf("%w: pool %q: parent %q does not exist", ErrInvalidTree, p.Name, p.Parent)
		}
		t.poolParent[i+1] = ps
		t.poolStart[ps+1]++
	}
	t.opIdx.reset(no)
	t.opPool = grow(t.opPool, no)
	// An operation id may not be a pool name. The check runs once per pool
	// after the loop (there are far fewer pools than operations); when the
	// loop stops at an error, clash reports an earlier operation's clash
	// first, as checking each operation in turn would.
	clashErr := func(o *Operation) error {
		return fmt.Errorf("%w: operation id %q is also a pool name", ErrInvalidOperation, o.ID)
	}
	clash := func(before int, err error) error {
		for j := range before {
			if _, bad := poolIdx[PoolID(snap.Operations[j].ID)]; bad {
				return clashErr(&snap.Operations[j])
			}
		}
		return err
	}
	var keys [findBatch]string
	var hs [findBatch]uint64
	for i := range snap.Operations {
		o := &snap.Operations[i]
		k := i % findBatch
		if k == 0 {
			// The next batch's ids are hashed ahead (see hashAhead).
			batch := snap.Operations[i:min(i+findBatch, no)]
			for j := range batch {
				keys[j] = string(batch[j].ID)
			}
			t.opIdx.hashAhead(keys[:len(batch)], hs[:])
		}
		if err := o.Validate(); err != nil {
			return clash(i, err)
		}
		if _, ok := t.opIdx.addHashed(keys[k], hs[k]); !ok {
			return clash(i, fmt.Errorf("%w: operation %q is listed twice", ErrDuplicateOperation, o.ID))
		}
		ps, ok := slot(o.Pool)
		if !ok {
			return clash(i+1, fmt.Errorf("%w: operation %q: pool %q does not exist", ErrInvalidOperation, o.ID, o.Pool))
		}
		t.opPool[i] = ps
		t.opStart[ps+1]++
	}
	first := -1
	for i := range snap.Pools {
		if j, bad := t.opIdx.find(string(snap.Pools[i].Name)); bad && (first < 0 || j < first) {
			first = j
		}
	}
	if first >= 0 {
		return clashErr(&snap.Operations[first])
	}
	// Child lists by slot, in input order.
	t.poolList = t.slotLists(t.poolStart, t.poolParent[1:np+1], t.poolList)
	t.opList = t.slotLists(t.opStart, t.opPool[:no], t.opList)

	n := t.startLayout(np, no)
	t.resetFunctions() // a full build keeps no operation's function
	if !t.pooled {
		t.opIn = grow(t.opIn, no)
	}
	next, err := t.layout(snap, true)
	if err != nil {
		return err
	}
	if next != n {
		// Pools that are not reachable from the root form a cycle.
		reached := make(map[string]bool, next)
		for _, i := range t.pools {
			reached[t.names[i]] = true
		}
		for i := range snap.Pools {
			if !reached[string(snap.Pools[i].Name)] {
				return fmt.Errorf("%w: pool %q is part of a cycle (not reachable from the root)", ErrInvalidTree, snap.Pools[i].Name)
			}
		}
	}
	// The package-level Update's engine records nothing (see pooled).
	t.fill(snap, false, false, !t.pooled, false)
	if !t.pooled {
		t.topo.record(snap)
	}
	return nil
}

// fill fills the operations' elements and the pools' attributes of a tree
// whose structure is built, and prepares the operations. With keep, the
// elements of the operations whose inputs are those they were last filled
// from are kept (see opcache.go), with their functions when keepFn; with
// record, the inputs of the elements filled and the globals are recorded
// for the next update (t.opIn must then have room for every operation).
//
// With keep or moved, t.opSame says which operations' inputs are
// unchanged (see validateOperation; reshape sets it for the operations it
// found in the last tree).
//
// With moved (reshape, which passes keep too), the operations that were
// in the last tree are found at t.opOld in the last tree's elements
// (elOld, with their inputs in opInOld at t.opOldSrc), and those whose
// inputs did not change are copied from there (moveKept).
func (t *tree) fill(snap *Snapshot, keep, keepFn, record, moved bool) {
	// Operations are read in their own order (the tree's order would read
	// them scattered); each fills its element in place.
	slots := t.slots[:len(t.pools)]
	for k := range slots {
		sl := &slots[k]
		sl.varies, sl.demand, sl.usage, sl.changed = 0, Resources{}, Resources{}, t.patched && t.slotChanged[k]
	}
	// cached: the slots that did not change take what they found in the
	// last update (see slotCache).
	cached := keep && keepFn && !moved
	t.slotCache = grow(t.slotCache, len(slots))
	t.reuse = Reuse{Operations: len(snap.Operations)}
	for oi := range snap.Operations {
		o := &snap.Operations[oi]
		sl := &slots[t.opPool[oi]]
		idx := t.opElem[oi]
		if keep && t.opSame[oi] {
			if cached {
				continue
			}
			in := &t.opIn[oi]
			if moved {
				// Kept: moved by moveKept (below), in the tree's
				// order; its inputs are recorded here (reshape sets
				// opSame only for an operation found in the last
				// tree, at opOld >= 0).
				t.moveFrom[idx], t.moveSrc[idx] = t.opOld[oi], int32(oi)
				*in = t.opInOld[t.opOldSrc[oi]]
			} else if !keepFn {
				e := &t.el[idx]
				e.sDone, e.ver = false, t.newVer()
				t.fnS[idx] = nil
			}
			sl.addKept(in)
			continue
		}
		t.reuse.Recomputed++
		e := &t.el[idx]
		*e = element{kind: KindOperation, parent: sl.elem, depth: sl.depth + 1, fifoIndex: int32(t.opFifo[oi]), src: int32(oi),
			ver: t.newVer()}
		t.initOperation(e, o)
		t.names[idx] = string(o.ID)
		t.fnS[idx] = nil
		if record {
			t.opIn[oi].set(o, e.varies)
		}
		if cached {
			sl.changed = true // its slot is summed below
			continue
		}
		sl.varies |= e.varies
		if sl.summed {
			// A pool whose children are all operations, in input order
			// (not fifo): its sum in their order, as poolAttributes
			// would add them, while the operation is at hand.
			for r := range sl.demand {
				sl.demand[r] += e.demand[r]
				sl.usage[r] += e.usage[r]
			}
		}
	}
	if !keepFn {
		// Every operation's functions are built again.
		t.reuse.Recomputed = t.reuse.Operations
	}
	if moved {
		t.moveKept(keepFn)
	}
	if cached {
		t.sumSlots(slots)
	}
	for k := range slots {
		sl := &slots[k]
		c := &t.slotCache[k]
		c.varies, c.demand, c.usage = sl.varies, sl.demand, sl.usage
		pe := &t.el[sl.elem]
		pe.opVaries = sl.varies
		if sl.summed {
			pe.demand, pe.usage = sl.demand, sl.usage
		}
	}
	if record {
		t.recordGlobals(&t.opG)
	}
	t.growPools()
	t.pd = grow(t.pd, len(t.pools))
	clear(t.pd)
	for pi := range snap.Pools {
		t.poolSettings(&snap.Pools[pi], &t.pd[slots[pi+1].ord])
	}
	// Pools' attributes sum their children's, so pools go bottom-up.
	for k := len(t.pools) - 1; k >= 0; k-- {
		t.poolAttributes(&t.el[t.pools[k]])
	}
}

// sumSlots is fill's accumulation of the operations' varies, demand and
// usage by slot when the structure and the kept elements are those of the
// last update (see slotCache): a slot that did not change takes what was
// found last, one that did is summed again from its operations, in input
// order as fill adds them (a kept operation's from its recorded inputs, a
// filled one's from its element).
func (t *tree) sumSlots(slots []poolSlot) {
	for k := range slots {
		sl := &slots[k]
		if !sl.changed {
			c := &t.slotCache[k]
			sl.varies, sl.demand, sl.usage = c.varies, c.demand, c.usage
			continue
		}
		for _, oi := range t.opList[t.opStart[k]:t.opStart[k+1]] {
			if t.opSame[oi] {
				sl.addKept(&t.opIn[oi])
				continue
			}
			e := &t.el[t.opElem[oi]]
			sl.varies |= e.varies
			if sl.summed {
				for r := range sl.demand {
					sl.demand[r] += e.demand[r]
					sl.usage[r] += e.usage[r]
				}
			}
		}
	}
}

// loadPrevious copies from the previous state when each pool and operation
// went below its fair share. It walks the previous state's lists (smaller
// than the tree when most elements are not below their fair share); each
// entry sets its own element, so their order does not matter. An operation
// of the tree listed twice is an ErrInvalidState.
func (t *tree) loadPrevious(prev *State) error {
	// The operations' ids are looked up a batch at a time (see findMany).
	var ids [findBatch]string
	var since [findBatch]time.Time
	var found [findBatch]int32
	seen := grow(t.prevSeen, (len(t.opElem)+63)/64)
	clear(seen)
	t.prevSeen = seen
	n := 0
	flush := func() error {
		t.opIdx.findMany(ids[:n], found[:n])
		for k, oi := range found[:n] {
			if oi < 0 {
				continue
			}
			if w, bit := oi/64, uint64(1)<<(oi%64); seen[w]&bit == 0 {
				seen[w] |= bit
			} else {
				return fmt.Errorf("%w: operation %q is listed twice in the previous state", ErrInvalidState, ids[k])
			}
			t.prevSince[t.opElem[oi]] = since[k]
		}
		n = 0
		return nil
	}
	for i := range prev.Operations {
		st := &prev.Operations[i]
		ids[n], since[n] = string(st.ID), st.BelowFairShareSince
		if n++; n == findBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	bad := false
	for id, st := range prev.Pools {
		if pi, ok := t.poolIdx[id]; ok {
			t.prevSince[t.slots[pi+1].elem] = st.BelowFairShareSince
		}
		bad = bad || !validPoolState(&st)
	}
	if bad {
		return badPoolState(prev.Pools)
	}
	return nil
}

// validPoolState reports whether a pool's previous state holds volumes
// and a share ratio the integral arithmetic stays finite with.
func validPoolState(st *PoolState) bool {
	for _, v := range st.AccumulatedVolume {
		if !ValidVolume(v) {
			return false
		}
	}
	r := st.LastIntegralShareRatio
	return r >= 0 && r <= MaxShareRatio
}

// badPoolState is the ErrInvalidState of the first pool (by name) whose
// previous state validPoolState refuses.
func badPoolState(pools map[PoolID]PoolState) error {
	for _, id := range slices.Sorted(maps.Keys(pools)) {
		st := pools[id]
		if validPoolState(&st) {
			continue
		}
		for r, v := range st.AccumulatedVolume {
			if !ValidVolume(v) {
				return fmt.Errorf("%w: pool %q accumulated volume %s %s, got %g",
					ErrInvalidState, id, ResourceType(r), VolumeRule, v)
			}
		}
		return fmt.Errorf("%w: pool %q last integral share ratio must be a number in [0, %g], got %g",
			ErrInvalidState, id, MaxShareRatio, st.LastIntegralShareRatio)
	}
	return nil
}

// sortFIFO orders a fifo pool's operations by its sort parameters
// (default weight, then start time); ties keep the input order.
func sortFIFO(ops []int, all []Operation, params []FifoSortParameter) {
	// A list already in order (a pool whose operations came in the order
	// they sort in, as most do from one update to the next) is left as it
	// is, exactly as the stable sort would leave it, for one comparison
	// per operation.
	if c := fifoCompare(all, params); !slices.IsSortedFunc(ops, c) {
		slices.SortStableFunc(ops, c)
	}
}

// fifoCompare compares two operations (indices in all) by a fifo pool's
// sort parameters.
func fifoCompare(all []Operation, params []FifoSortParameter) func(a, b int) int {
	if len(params) == 0 {
		params = []FifoSortParameter{FifoSortWeight, FifoSortStartTime}
	}
	weight := func(o *Operation) float64 {
		if o.Weight != nil {
			return *o.Weight
		}
		return 1
	}
	return func(a, b int) int {
		oa, ob := &all[a], &all[b]
		for _, p := range params {
			switch p {
			case FifoSortWeight:
				if wa, wb := weight(oa), weight(ob); wa != wb {
					if wa > wb {
						return -1
					}
					return 1
				}
			case FifoSortStartTime:
				if c := oa.StartTime.Compare(ob.StartTime); c != 0 {
					return c
				}
			case FifoSortPendingJobCount:
				if oa.PendingJobCount != ob.PendingJobCount {
					if oa.PendingJobCount < ob.PendingJobCount {
						return -1
					}
					return 1
				}
			}
		}
		return 0
	}
}

// slotLists lists items 0..len(slotOf)-1 (pools or operations) by their
// slot slotOf[i], in order (a counting sort): on entry start[s+1] is the
// number of items in slot s; on return start[s] is where slot s's items
// begin in the list, which is list grown to len(slotOf).
func (t *tree) slotLists(start, slotOf, list []int) []int {
	for s := 1; s < len(start); s++ {
		start[s] += start[s-1]
	}
	list = grow(list, len(slotOf))
	fill := grow(t.scratchInts, len(start)-1)
	t.scratchInts = fill
	copy(fill, start)
	for i, s := range slotOf {
		list[fill[s]] = i
		fill[s]++
	}
	return list
}

// startLayout readies the buffers of a tree of np pools and no operations
// for layout (build's and reshape's) and sets the root's element; it
// returns the number of elements. The functions (fnS, fnM) are not
// cleared: fill (or moveKept) writes every operation's fnS, and initPool
// every pool's fnS and fnM when the pool is prepared, which comes before
// anything reads them (a pool is read only once prepared, and preparing
// it prepares its child pools first; prepare(0) prepares every pool
// before the distribution and the report); an operation's fnM is never
// read.
func (t *tree) startLayout(np, no int) int {
	n := 1 + np + no
	t.el = grow(t.el, n)
	t.names = grow(t.names, n)
	t.fnS = grow(t.fnS, n)
	t.fnM = grow(t.fnM, n)
	t.prevSince = grow(t.prevSince, n)
	clear(t.prevSince)
	t.kids = grow(t.kids, n)[:0]
	t.vols = grow(t.vols, np+1)
	clear(t.vols)
	t.opElem = grow(t.opElem, no)
	t.opFifo = grow(t.opFifo, no)
	t.slots = grow(t.slots, np+1)
	t.slots[0] = poolSlot{elem: 0, depth: 0}
	t.el[0] = element{kind: KindRoot, parent: -1, src: int32(np)}
	t.free, t.drift = t.free[:0], 0 // laid out in pre-order (see patch)
	t.names[0] = RootID
	t.pools = append(t.pools[:0], 0)
	t.ordNode = grow(t.ordNode, np+1)
	t.ordNode[0] = ordNode{parent: -1}
	t.ordKids = grow(t.ordKids, np)[:0]
	return n
}

// layout lays the tree out below the root, depth first: each element's
// children are contiguous in t.kids, child pools before operations, and
// elements are numbered in the order they are laid out (pools and
// operations; the root, element 0, is set by the caller). With sortFifo a
// fifo pool's operations are sorted into fifo order first (reshape has
// sorted them already). It returns the number of elements laid out,
// counting the root; fewer than the snapshot has means a cycle among the
// pools.
func (t *tree) layout(snap *Snapshot, sortFifo bool) (int, error) {
	next := 1 // index of the next element
	var add func(parent, key int, mode Mode, depth int) error
	add = func(parent, key int, mode Mode, depth int) error {
		childPools := t.poolList[t.poolStart[key]:t.poolStart[key+1]]
		ops := t.opList[t.opStart[key]:t.opStart[key+1]]
		if mode == ModeFIFO && len(childPools) > 0 {
			return fmt.Errorf("%w: fifo pool %q has child pools; fifo pools hold operations only", ErrInvalidTree, snap.Pools[key-1].Name)
		}
		k0 := len(t.kids)
		nk := len(childPools) + len(ops)
		t.kids = t.kids[:k0+nk]
		children := t.kids[k0 : k0+nk : k0+nk]
		pe := &t.el[parent]
		pe.kidLo, pe.kidHi, pe.poolKids = int32(k0), int32(k0+nk), int32(len(childPools))
		po, o0 := pe.ord, len(t.ordKids)
		t.ordKids = t.ordKids[:o0+len(childPools)]
		t.ordNode[po].lo, t.ordNode[po].hi = int32(o0), int32(len(t.ordKids))
		for k, pi := range childPools {
			p := &snap.Pools[pi]
			idx := next
			next++
			children[k] = idx
			t.ordKids[o0+k] = int32(len(t.pools))
			t.ordNode[len(t.pools)].parent = po
			t.el[idx] = element{kind: KindPool, parent: int32(parent), depth: int32(depth), src: int32(pi), fifo: p.Mode == ModeFIFO, ord: int32(len(t.pools)),
				opsSummed: p.Mode != ModeFIFO && t.poolStart[pi+1] == t.poolStart[pi+2]}
			t.names[idx] = string(p.Name)
			t.pools = append(t.pools, idx)
			t.slots[pi+1] = poolSlot{elem: int32(idx), depth: int32(depth), ord: t.el[idx].ord, summed: t.el[idx].opsSummed}
			if err := add(idx, pi+1, p.Mode, depth+1); err != nil {
				return err
			}
		}
		if sortFifo && mode == ModeFIFO {
			sortFIFO(ops, snap.Operations, snap.Pools[key-1].FifoSortParameters)
		}
		for fi, oi := range ops {
			idx := next
			next++
			children[len(childPools)+fi] = idx
			t.opElem[oi] = idx
			t.opFifo[oi] = fi
		}
		return nil
	}
	err := add(0, 0, ModeFairShare, 1)
	return next, err
}
