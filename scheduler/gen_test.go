package scheduler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// genParams parameterises genSnapshot. The zero value of every knob means
// "off"; Pools, Ops and Depth are clamped to sane ranges.
type genParams struct {
	// Seed drives every random choice: the same params give the same snapshot.
	Seed uint64
	// Pools and Ops are the number of pools and operations.
	Pools, Ops int
	// Depth is the maximum pool depth (1..4; the root's children have depth 1).
	Depth int
	// Nodes is the number of exec nodes; 0 picks a number from the seed.
	Nodes int
	// GPU adds gpu to some nodes and some operations' demands.
	GPU bool
	// ClusterAsNodes gives the cluster as its nodes (so operations with
	// JobResources get a best-allocation-share limit); otherwise only the
	// total is given.
	ClusterAsNodes bool

	// GuaranteeFrac is the probability that a pool (whose parent can give it
	// one) has a strong guarantee. Without Overcommit, children's guarantees
	// never exceed the parent's (explicit and inferred) and the first level,
	// together with the integral flows and bursts, fits in the cluster.
	GuaranteeFrac float64
	// Overcommit lets guarantees exceed the parent's (and the cluster at the
	// first level), and lets pools without a guarantee have guaranteed
	// children.
	Overcommit bool
	// IntegralFrac is the probability that a pool is integral (burst or
	// relaxed, half and half), with a flow, a burst guarantee for burst pools
	// and, usually, an initial accumulated volume in the state.
	IntegralFrac float64
	// FIFOFrac is the probability that a leaf pool is fifo.
	FIFOFrac float64
	// LimitFrac is the probability that a pool, or an operation, has resource
	// limits.
	LimitFrac float64
	// WeightFrac is the probability that a pool or an operation has an
	// explicit weight, drawn log-uniformly in [0.1, 10].
	WeightFrac float64
	// JobResourcesFrac is the probability that an operation gives the shape
	// of one job.
	JobResourcesFrac float64
	// JobsFrac is the probability that an operation with usage lists its
	// running jobs (for the preemptible classification).
	JobsFrac float64
	// NoUsage makes every operation's usage 0 (so no operation lists jobs).
	NoUsage bool
	// Busy makes every operation with a demand use part or all of it (none
	// is idle); it draws more random numbers, so it changes the rest of the
	// snapshot too.
	Busy bool
	// GangFrac is the probability that an operation is a gang; any positive
	// value also turns on the tree's step function for gangs.
	GangFrac float64
	// WithLastUpdate sets State.LastUpdate one to sixty seconds before Now,
	// so that integral volumes refill and are consumed.
	WithLastUpdate bool
	// NoNestedIntegral keeps integral pools out of the subtrees of integral
	// pools (otherwise they nest freely: a burst pool in a relaxed pool,
	// relaxed in relaxed, at any distance).
	NoNestedIntegral bool
	// DistributeFreeVolume turns on the tree's free-volume distribution.
	DistributeFreeVolume bool
	// InferWeights sets the tree's infer_weight_from_guarantees_share
	// multiplier.
	InferWeights bool
	// Load is the total demand relative to the cluster (roughly); 0 means 1.
	Load float64
}

// genBaseTime is the snapshot's Now (before any LastUpdate offset).
var genBaseTime = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// genPool is the generator's working view of one pool.
type genPool struct {
	cfg      PoolConfig
	depth    int
	parent   int // index in the generator's pool list; -1 for the root
	children []int
	// eff is an upper bound of the pool's effective strong guarantee
	// resources (inference ignores truncation and scaling, which only lower
	// it); the root's is the cluster total.
	eff Resources
}

// genSnapshot builds a valid snapshot and previous state from p. It is a
// pure function of p: calling it twice gives equal, independent (no shared
// pointers or slices) values.
func genSnapshot(p genParams) (*Snapshot, *State) {
	rng := rand.New(rand.NewPCG(p.Seed, 0x5eed5eed))
	depth := min(max(p.Depth, 1), 4)
	npools := max(p.Pools, 0)
	nops := max(p.Ops, 0)
	load := p.Load
	if load <= 0 {
		load = 1
	}
	chance := func(q float64) bool { return q > 0 && unit(rng) < q }
	// logUniform draws from [lo, hi) with a uniform logarithm:
	// lo·(hi/lo)^u for u uniform on 32 binary digits, the power taken
	// from repeated square roots and products, which every target rounds
	// alike (math.Exp and math.Log do not: amd64's assembly and the other
	// targets' code differ in the last bit, and the generated trees, and
	// so the fingerprints, would depend on the target).
	logUniform := func(lo, hi float64) float64 {
		u := rng.Uint32()
		v, root := lo, hi/lo
		for bit := uint32(1) << 31; bit != 0; bit >>= 1 {
			root = math.Sqrt(root)
			if u&bit != 0 {
				v *= root
			}
		}
		return v
	}
	cpu2 := func(v float64) float64 { return math.Round(v*100) / 100 }

	// Cluster.
	nnodes := p.Nodes
	if nnodes <= 0 {
		nnodes = 1 + rng.IntN(40)
	}
	nodes := make([]Node, nnodes)
	for i := range nodes {
		r := Resources{}
		r[CPU] = float64(8 * (1 + rng.IntN(16)))
		r[UserSlots] = r[CPU] * float64(1+rng.IntN(4))
		r[Memory] = r[CPU] * float64(2+rng.IntN(7)) * 1024
		if p.GPU && rng.IntN(3) == 0 {
			r[GPU] = float64(4 * (1 + rng.IntN(2)))
		}
		var tags []string
		if rng.IntN(2) == 0 {
			tags = []string{fmt.Sprintf("rack%d", rng.IntN(4))}
		}
		nodes[i] = Node{ID: NodeID(fmt.Sprintf("node-%03d", i)), Resources: r, Tags: tags}
	}
	cluster := NewClusterFromNodes(nodes)
	total := cluster.Total
	if !p.ClusterAsNodes {
		cluster = Cluster{Total: total}
	}

	tree := DefaultTreeConfig()
	if p.GangFrac > 0 {
		tree.EnableStepFunctionForGangOperations = true
	}
	if p.DistributeFreeVolume {
		tree.Integral.ShouldDistributeFreeVolumeAmongChildren = true
	}
	if p.InferWeights {
		m := 1 + float64(9*unit(rng))
		tree.InferWeightFromGuaranteesShareMultiplier = &m
	}
	now := genBaseTime
	state := &State{Pools: map[PoolID]PoolState{}}
	if p.WithLastUpdate {
		state.LastUpdate = now.Add(-time.Duration(1+rng.IntN(60)) * time.Second)
	}

	// Pool tree shape: pool i hangs under the root or an earlier pool above
	// the maximum depth.
	pools := make([]*genPool, npools)
	var rootChildren []int
	for i := range pools {
		gp := &genPool{parent: -1, depth: 1}
		// Prefer shallow, bushy trees with some deep chains.
		if i > 0 && rng.IntN(4) != 0 {
			cand := rng.IntN(i)
			if pools[cand].depth < depth {
				gp.parent, gp.depth = cand, pools[cand].depth+1
			}
		}
		gp.cfg.Name = PoolID(fmt.Sprintf("pool%03d", i))
		if gp.parent >= 0 {
			gp.cfg.Parent = pools[gp.parent].cfg.Name
			pools[gp.parent].children = append(pools[gp.parent].children, i)
		} else {
			rootChildren = append(rootChildren, i)
		}
		pools[i] = gp
	}

	// Budgets at the root: part of the cluster for strong guarantees, part for
	// integral flows and bursts (their sum stays below 1 without overcommit).
	strongBudget := 0.3 + float64(0.5*unit(rng)) // fraction of the cluster
	integralBudget := math.Max(0, 0.95-strongBudget)
	if p.Overcommit {
		strongBudget = 0.5 + unit(rng)
		integralBudget = 0.2 + float64(0.8*unit(rng))
	}

	// Strong guarantees, top-down (children are created after their parent,
	// so index order is top-down). Each parent hands its children random
	// fractions of its effective guarantee that sum to at most 1.
	assignChildren := func(parentEff Resources, parentHasSG bool, children []int, budgetFrac float64) {
		var guaranteed []int
		for _, c := range children {
			if (parentHasSG || p.Overcommit) && chance(p.GuaranteeFrac) {
				guaranteed = append(guaranteed, c)
			}
		}
		if len(guaranteed) == 0 {
			return
		}
		fr := make([]float64, len(guaranteed))
		sum := 0.0
		for k := range fr {
			fr[k] = 0.2 + unit(rng)
			sum += fr[k]
		}
		// Without a guarantee (overcommit only), use the cluster as the base.
		base := parentEff
		if !parentHasSG {
			base = total
		}
		for k, c := range guaranteed {
			f := fr[k] / sum * budgetFrac
			if p.Overcommit && rng.IntN(3) == 0 {
				f *= 1 + float64(2*unit(rng))
			}
			gp := pools[c]
			cpu := cpu2(f * base[CPU])
			if cpu <= 0 {
				continue
			}
			sg := PartialResources{}.With(CPU, cpu)
			gp.eff = Resources{}
			gp.eff[CPU] = cpu
			for r := range NumResources {
				rt := ResourceType(r)
				if rt == CPU {
					continue
				}
				implicit := 0.0
				if base[CPU] > 0 {
					implicit = cpu / base[CPU] * base[r]
				}
				// Sometimes set a resource explicitly, at most the implicit
				// value (so the explicit-plus-implicit sums stay within the
				// parent's), or above it with overcommit.
				if (rt == Memory || rt == UserSlots) && rng.IntN(4) == 0 {
					v := math.Floor(implicit * (0.3 + float64(0.7*unit(rng))))
					if p.Overcommit && rng.IntN(2) == 0 {
						v = math.Floor(implicit * (1 + unit(rng)))
					}
					sg = sg.With(rt, v)
					gp.eff[r] = v
				} else {
					gp.eff[r] = implicit
				}
			}
			gp.cfg.StrongGuaranteeResources = sg
		}
	}
	assignChildren(total, true, rootChildren, strongBudget)
	for _, gp := range pools {
		if len(gp.children) == 0 {
			continue
		}
		hasSG := !gp.cfg.StrongGuaranteeResources.IsEmpty()
		assignChildren(gp.eff, hasSG, gp.children, 0.5+float64(0.5*unit(rng)))
	}

	// Integral pools: burst or relaxed, with flows and bursts that share the
	// integral budget.
	var integral []int
	isIntegral := make([]bool, npools)
	for i, gp := range pools {
		if !chance(p.IntegralFrac) {
			continue
		}
		if p.NoNestedIntegral {
			nested := false
			for a := gp.parent; a >= 0; a = pools[a].parent {
				nested = nested || isIntegral[a]
			}
			if nested {
				continue
			}
		}
		isIntegral[i] = true
		integral = append(integral, i)
	}
	if len(integral) > 0 {
		per := integralBudget / float64(len(integral))
		for _, i := range integral {
			gp := pools[i]
			ig := &gp.cfg.IntegralGuarantees
			burstRatio := per * (0.3 + float64(0.7*unit(rng)))
			flowRatio := burstRatio * (0.1 + float64(0.9*unit(rng)))
			ig.ResourceFlow = PartialResources{}.With(CPU, cpu2(flowRatio*total[CPU]))
			if rng.IntN(3) == 0 {
				ig.ResourceFlow = ig.ResourceFlow.With(Memory, math.Floor(flowRatio*total[Memory]*unit(rng)))
			}
			if rng.IntN(2) == 0 {
				ig.GuaranteeType = GuaranteeBurst
				ig.BurstGuaranteeResources = PartialResources{}.With(CPU, cpu2(burstRatio*total[CPU]))
			} else {
				ig.GuaranteeType = GuaranteeRelaxed
				if rng.IntN(4) == 0 {
					m := 1 + float64(9*unit(rng))
					ig.RelaxedShareMultiplierLimit = &m
				}
			}
			if rng.IntN(5) == 0 {
				b := false
				ig.CanAcceptFreeVolume = &b
			}
			// Initial volume: usually some minutes of the flow, sometimes none,
			// sometimes a lot.
			var ps PoolState
			switch rng.IntN(5) {
			case 0:
			case 1:
				ps.AccumulatedVolume = total.Scale(flowRatio * 86400 * unit(rng)).Round()
			default:
				ps.AccumulatedVolume = total.Scale(flowRatio * 600 * unit(rng)).Round()
			}
			if rng.IntN(2) == 0 {
				ps.LastIntegralShareRatio = burstRatio * unit(rng)
			}
			if ps != (PoolState{}) {
				state.Pools[gp.cfg.Name] = ps
			}
		}
	}

	// Leaf pools may be fifo; limits and weights.
	for _, gp := range pools {
		if len(gp.children) == 0 && chance(p.FIFOFrac) {
			gp.cfg.Mode = ModeFIFO
			switch rng.IntN(3) {
			case 0:
				gp.cfg.FifoSortParameters = []FifoSortParameter{FifoSortStartTime}
			case 1:
				gp.cfg.FifoSortParameters = []FifoSortParameter{FifoSortPendingJobCount, FifoSortWeight, FifoSortStartTime}
			}
		}
		if chance(p.LimitFrac) {
			gp.cfg.ResourceLimits = PartialResources{}.With(CPU, cpu2(total[CPU]*logUniform(0.02, 1.2)))
			if rng.IntN(3) == 0 {
				gp.cfg.ResourceLimits = gp.cfg.ResourceLimits.With(Memory, math.Floor(total[Memory]*logUniform(0.02, 1.2)))
			}
		}
		if chance(p.WeightFrac) {
			w := logUniform(0.1, 10)
			gp.cfg.Weight = &w
		}
		if rng.IntN(10) == 0 {
			tol := unit(rng)
			gp.cfg.FairShareStarvationTolerance = &tol
		}
		if rng.IntN(10) == 0 {
			b := true
			gp.cfg.EnableAggressiveStarvation = &b
		}
		if p.WithLastUpdate && rng.IntN(8) == 0 {
			ps := state.Pools[gp.cfg.Name]
			ps.BelowFairShareSince = state.LastUpdate.Add(-time.Duration(rng.IntN(300)) * time.Second)
			state.Pools[gp.cfg.Name] = ps
		}
	}

	// Operations.
	ops := make([]Operation, nops)
	for i := range ops {
		o := &ops[i]
		o.ID = OperationID(fmt.Sprintf("op%04d", i))
		if npools > 0 && rng.IntN(10) != 0 {
			o.Pool = pools[rng.IntN(npools)].cfg.Name
		}
		o.StartTime = now.Add(-time.Duration(rng.IntN(3600)) * time.Second)
		o.PendingJobCount = rng.IntN(20)
		// Demand: a random shape scaled to a heavy-tailed dominant share.
		dom := math.Min(2, load/float64(nops)*logUniform(0.05, 20))
		var shape Resources
		shape[CPU] = 0.1 + unit(rng)
		shape[Memory] = 0.1 + unit(rng)
		shape[UserSlots] = 0.05 + unit(rng)
		if p.GPU && total[GPU] > 0 && rng.IntN(4) == 0 {
			shape[GPU] = 0.1 + float64(2*unit(rng))
		}
		if rng.IntN(8) == 0 {
			shape[Memory] = 0 // cpu-only operations
		}
		top := 0.0
		for r := range shape {
			if total[r] > 0 {
				top = math.Max(top, shape[r])
			}
		}
		for r := range shape {
			if total[r] > 0 {
				o.Demand[r] = math.Ceil(dom * shape[r] / top * total[r])
			}
		}
		o.Demand[CPU] = cpu2(dom * shape[CPU] / top * total[CPU])
		if rng.IntN(20) == 0 {
			o.Demand = Resources{} // an idle operation
		}
		// Usage: often 0, sometimes partial, sometimes all of the demand.
		k := rng.IntN(10)
		if p.Busy && k < 5 {
			k = 5 + rng.IntN(5)
		}
		switch {
		case k < 5:
		case k < 8:
			u := unit(rng)
			for r := range o.Usage {
				o.Usage[r] = math.Floor(o.Demand[r] * u)
			}
			o.Usage[CPU] = math.Floor(o.Demand[CPU]*u*100) / 100
		default:
			o.Usage = o.Demand
		}
		if p.NoUsage {
			o.Usage = Resources{}
		}
		if chance(p.JobsFrac) && !o.Usage.IsZero() {
			n := 1 + rng.IntN(6)
			left := o.Usage
			for j := range n {
				ju := o.Usage.Scale(1 / float64(n)).Truncate()
				if j == n-1 {
					ju = left
				}
				left = left.Sub(ju).Max(Resources{})
				o.Jobs = append(o.Jobs, Job{
					ID:        fmt.Sprintf("job%d", j),
					Usage:     ju,
					StartTime: o.StartTime.Add(time.Duration(j) * time.Second),
				})
			}
		}
		if chance(p.JobResourcesFrac) && !o.Demand.IsZero() {
			k := float64(1 + rng.IntN(20))
			o.JobResources = o.Demand.Scale(1 / k).Round()
			o.JobResources[CPU] = math.Max(0.01, cpu2(o.Demand[CPU]/k))
		}
		if chance(p.LimitFrac) {
			o.ResourceLimits = PartialResources{}.With(CPU, cpu2(total[CPU]*logUniform(0.005, 1)))
		}
		if chance(p.WeightFrac) {
			w := logUniform(0.1, 10)
			o.Weight = &w
		}
		if chance(p.GangFrac) {
			o.IsGang = true
		}
		if rng.IntN(30) == 0 {
			o.Unschedulable = true
		}
		if p.WithLastUpdate && rng.IntN(6) == 0 {
			state.Operations = append(state.Operations, OperationState{ID: o.ID, BelowFairShareSince: state.LastUpdate.Add(-time.Duration(rng.IntN(300)) * time.Second)})
		}
	}

	// Pools in a random order (sibling order is input order; parents may come
	// after their children).
	cfgs := make([]PoolConfig, npools)
	for i, k := range rng.Perm(npools) {
		cfgs[i] = pools[k].cfg
	}
	snap := &Snapshot{Now: now, Cluster: cluster, Tree: tree, Pools: cfgs, Operations: ops}
	return snap, state
}

// genDefaults returns a mid-sized parameter set with every feature on.
func genDefaults(seed uint64) genParams {
	return genParams{
		Seed: seed, Pools: 40, Ops: 150, Depth: 4, GPU: true, ClusterAsNodes: true,
		GuaranteeFrac: 0.5, IntegralFrac: 0.15, FIFOFrac: 0.2, LimitFrac: 0.15, WeightFrac: 0.5,
		JobResourcesFrac: 0.3, JobsFrac: 0.3, WithLastUpdate: true,
	}
}

// TestGenSnapshotValid checks that the generator makes snapshots the engine
// accepts, that it is deterministic, and that without overcommit it raises
// no overcommit alert and keeps every child's strong guarantee within its
// parent's.
func TestGenSnapshotValid(t *testing.T) {
	for seed := range uint64(200) {
		p := genDefaults(seed)
		p.Pools = 1 + int(seed%60)
		p.Ops = int(seed * 7 % 200)
		p.Depth = 1 + int(seed%4)
		p.GangFrac = float64(seed%3) * 0.1
		p.DistributeFreeVolume = seed%2 == 0
		p.InferWeights = seed%5 == 0
		p.Overcommit = seed%7 == 0
		p.ClusterAsNodes = seed%3 != 0
		snap, prev := genSnapshot(p)
		snap2, prev2 := genSnapshot(p)
		if d := cmp.Diff(snap, snap2); d != "" {
			t.Fatalf("seed %d: generator is not deterministic (-first +second):\n%s", seed, d)
		}
		if d := cmp.Diff(prev, prev2); d != "" {
			t.Fatalf("seed %d: generator state is not deterministic (-first +second):\n%s", seed, d)
		}
		if len(snap.Pools) != p.Pools || len(snap.Operations) != p.Ops {
			t.Fatalf("seed %d: %d pools, %d ops; want %d, %d", seed, len(snap.Pools), len(snap.Operations), p.Pools, p.Ops)
		}
		r, err := Update(snap, prev)
		if err != nil {
			t.Fatalf("seed %d: Update: %v", seed, err)
		}
		maxDepth := 0
		for _, e := range r.Elements {
			if e.Kind == KindPool {
				maxDepth = max(maxDepth, e.Depth)
			}
		}
		if maxDepth > p.Depth {
			t.Errorf("seed %d: pool depth %d > %d", seed, maxDepth, p.Depth)
		}
		if p.Overcommit {
			continue
		}
		if len(r.Alerts) > 0 {
			t.Errorf("seed %d: alerts without overcommit: %v", seed, r.Alerts)
		}
		// Effective guarantees of children within the parent's.
		sums := map[string]Resources{}
		for _, e := range r.Elements {
			if e.Kind == KindPool {
				sums[e.Parent] = sums[e.Parent].Add(e.EffectiveStrongGuaranteeResources)
			}
		}
		for _, e := range r.Elements {
			if s, ok := sums[e.Name]; ok && e.Kind != KindOperation {
				if _, over := exceeds(s, e.EffectiveStrongGuaranteeResources); over {
					t.Errorf("seed %d: children of %s guarantee %v > %v", seed, e.Name, s, e.EffectiveStrongGuaranteeResources)
				}
			}
		}
	}
}

// unit is rng.Float64() rounded on its own. math/rand/v2 scales an integer
// into [0, 1) by dividing it by 2⁵³, which compiles to a multiplication;
// inlined, the compiler may fuse it with
// the caller's next addition on targets with fused multiply-add (arm64 and
// others), and the check in .ci/fma-check refuses any fused instruction in
// the module (see docs/DETERMINISM.md), so generators draw through unit.
func unit(rng *rand.Rand) float64 { return float64(rng.Float64()) }
