package scheduler

import (
	"fmt"
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

// element is the engine's working copy of one tree element during an update.
type element struct {
	kind     ElementKind
	name     string
	parent   int // index; -1 for the root
	children []int
	depth    int

	pool *PoolConfig // pools only
	op   *Operation  // operations only

	// Absolute resources.
	demand, usage, limits Resources
	// Shares of the cluster total.
	demandShare, usageShare, limitsShare Share
	dominant                             ResourceType

	// Strong guarantees: effective (inferred) resources and the share.
	effectiveSG Resources
	sgs         Share
	// pis is the proposed integral share (burst and relaxed grants).
	pis Share

	// Integral ratios (scalars).
	burstRatio, flowRatio                     float64 // after overcommit scaling (burst) / as specified (flow)
	specifiedBurstRatio                       float64
	totalBurstRatio, totalFlowRatio           float64
	integral                                  GuaranteeType
	lastShareRatio                            float64
	canAcceptFreeVolume, distributeFreeVolume bool
	// vol is the volume bookkeeping of the root and pools (nil for
	// operations).
	vol *volumeState

	weight float64
	// scale is the suggestion scale among siblings: weight / smallest
	// sibling weight (see computeScales).
	scale float64

	// Fit-factor functions.
	fLo      float64 // start of the FairShareByFitFactor domain
	fnM      sfunc
	fnS      vfunc
	prepared bool

	fifoIndex int
	fairShare Share
	detailed  DetailedShare

	// Starvation.
	tolerance          float64
	starvationTimeout  time.Duration
	aggressiveEnabled  bool
	status             Status
	starvation         StarvationStatus
	belowFairShareTime time.Time
}

// volumeState is a pool's integral-volume bookkeeping during an update.
type volumeState struct {
	volume                                   Resources
	capacity                                 Resources
	overflow, acceptable, acceptedFreeVolume Resources
	childrenOverflow                         Resources
}

// tree is the element tree of one update. elements[0] is the root; the rest
// are in depth-first pre-order with children in configuration order (pools
// first, then operations, each in input order; fifo pools order their
// operations by fifo_sort_parameters).
type tree struct {
	elements []*element
	total    Resources
	ones     Share
	cfg      *TreeConfig
	ws       workspace
}

func buildTree(snap *Snapshot) (*tree, error) {
	if err := snap.Tree.Validate(); err != nil {
		return nil, err
	}
	for i := range snap.Cluster.Total {
		if v := snap.Cluster.Total[i]; !finite(v) || v < 0 {
			return nil, fmt.Errorf("%w: cluster total %s must be a finite number >= 0, got %g", ErrInvalidConfig, ResourceType(i), v)
		}
	}
	t := &tree{
		total: snap.Cluster.Total,
		ones:  Ones(snap.Cluster.Total),
		cfg:   &snap.Tree,
	}
	// Index pools and check names and parents. Slot 0 of the child lists is
	// the root; pool i is slot i+1.
	poolIdx := make(map[PoolID]int, len(snap.Pools))
	for i := range snap.Pools {
		p := &snap.Pools[i]
		if err := p.Validate(snap.Tree.MainResource); err != nil {
			return nil, err
		}
		if _, dup := poolIdx[p.Name]; dup {
			return nil, fmt.Errorf("%w: pool %q is defined twice", ErrInvalidTree, p.Name)
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
	childPools := make([][]int, len(snap.Pools)+1)
	for i := range snap.Pools {
		p := &snap.Pools[i]
		ps, ok := slot(p.Parent)
		if !ok {
			return nil, fmt.Errorf("%w: pool %q: parent %q does not exist", ErrInvalidTree, p.Name, p.Parent)
		}
		childPools[ps] = append(childPools[ps], i)
	}
	childOps := make([][]int, len(snap.Pools)+1)
	seenOps := make(map[OperationID]struct{}, len(snap.Operations))
	for i := range snap.Operations {
		o := &snap.Operations[i]
		if err := o.Validate(); err != nil {
			return nil, err
		}
		if _, dup := seenOps[o.ID]; dup {
			return nil, fmt.Errorf("%w: operation %q is listed twice", ErrDuplicateOperation, o.ID)
		}
		seenOps[o.ID] = struct{}{}
		if _, clash := poolIdx[PoolID(o.ID)]; clash {
			return nil, fmt.Errorf("%w: operation id %q is also a pool name", ErrInvalidOperation, o.ID)
		}
		ps, ok := slot(o.Pool)
		if !ok {
			return nil, fmt.Errorf("%w: operation %q: pool %q does not exist", ErrInvalidOperation, o.ID, o.Pool)
		}
		childOps[ps] = append(childOps[ps], i)
	}

	n := 1 + len(snap.Pools) + len(snap.Operations)
	t.ws.chunk = min(4*n, maxChunk)
	store := make([]element, n)
	t.elements = make([]*element, 0, n)
	vols := make([]volumeState, len(snap.Pools)+1)
	store[0] = element{kind: KindRoot, name: RootID, parent: -1, vol: &vols[len(snap.Pools)]}
	t.elements = append(t.elements, &store[0])
	newElement := func(kind ElementKind, name string, parent, depth int) *element {
		idx := len(t.elements)
		e := &store[idx]
		e.kind, e.name, e.parent, e.depth = kind, name, parent, depth
		t.elements = append(t.elements, e)
		p := t.elements[parent]
		p.children = append(p.children, idx)
		return e
	}
	var add func(parent, key int, mode Mode, depth int) error
	add = func(parent, key int, mode Mode, depth int) error {
		if mode == ModeFIFO && len(childPools[key]) > 0 {
			return fmt.Errorf("%w: fifo pool %q has child pools; fifo pools hold operations only", ErrInvalidTree, snap.Pools[key-1].Name)
		}
		t.elements[parent].children = make([]int, 0, len(childPools[key])+len(childOps[key]))
		for _, pi := range childPools[key] {
			p := &snap.Pools[pi]
			idx := len(t.elements)
			e := newElement(KindPool, string(p.Name), parent, depth)
			e.pool, e.vol = p, &vols[pi]
			if err := add(idx, pi+1, p.Mode, depth+1); err != nil {
				return err
			}
		}
		ops := childOps[key]
		if mode == ModeFIFO {
			ops = slices.Clone(ops)
			sortFIFO(ops, snap.Operations, snap.Pools[key-1].FifoSortParameters)
		}
		for fi, oi := range ops {
			o := &snap.Operations[oi]
			e := newElement(KindOperation, string(o.ID), parent, depth)
			e.op, e.fifoIndex = o, fi
		}
		return nil
	}
	if err := add(0, 0, ModeFairShare, 1); err != nil {
		return nil, err
	}
	if len(t.elements) != n {
		// Pools that are not reachable from the root form a cycle.
		reached := make(map[string]bool, len(t.elements))
		for _, e := range t.elements {
			reached[e.name] = true
		}
		for i := range snap.Pools {
			if !reached[string(snap.Pools[i].Name)] {
				return nil, fmt.Errorf("%w: pool %q is part of a cycle (not reachable from the root)", ErrInvalidTree, snap.Pools[i].Name)
			}
		}
	}
	return t, nil
}

// sortFIFO orders a fifo pool's operations by its sort parameters
// (default weight, then start time), with the operation id as the last
// tie-break.
func sortFIFO(ops []int, all []Operation, params []FifoSortParameter) {
	if len(params) == 0 {
		params = []FifoSortParameter{FifoSortWeight, FifoSortStartTime}
	}
	weight := func(o *Operation) float64 {
		if o.Weight != nil {
			return *o.Weight
		}
		return 1
	}
	slices.SortStableFunc(ops, func(a, b int) int {
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
	})
}
