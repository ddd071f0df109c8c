package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// benchParams is the benchmark's tree: depth 4, a mix of strong guarantees,
// burst and relaxed integral pools with volumes, fifo leaf pools, limits,
// weights, usage and a cluster given as nodes (some operations give a job
// shape, so best allocation shares are computed).
func benchParams(pools, ops int) genParams {
	return genParams{
		Seed:             uint64(pools)*1_000_003 + uint64(ops),
		Pools:            pools,
		Ops:              ops,
		Depth:            4,
		Nodes:            100,
		GPU:              true,
		ClusterAsNodes:   true,
		GuaranteeFrac:    0.4,
		IntegralFrac:     0.1,
		FIFOFrac:         0.2,
		LimitFrac:        0.05,
		WeightFrac:       0.5,
		JobResourcesFrac: 0.1,
		JobsFrac:         0.05,
		WithLastUpdate:   true,
		Load:             1.5,
	}
}

// largestUpdated returns an Engine that has made one update of the largest
// benchmark tree (10,000 pools, 100,000 operations), for benchmarks that
// measure parts of an update from the state it left.
func largestUpdated(b *testing.B) *Engine {
	b.Helper()
	snap, prev := genSnapshot(benchParams(10000, 100000))
	prev.LastUpdate = snap.Now.Add(-time.Second)
	en := new(Engine)
	if _, err := en.Update(snap, prev); err != nil {
		b.Fatalf("Update: %v", err)
	}
	return en
}

// benchSizes are issue 2's three tree sizes, pools and operations, each
// benchmarked as a sub-benchmark "pools=P,ops=O".
var benchSizes = []struct{ pools, ops int }{
	{100, 1000},
	{1000, 10000},
	{10000, 100000},
}

func BenchmarkUpdate(b *testing.B) {
	benchmarkUpdate(b, func(p *genParams) {})
}

// BenchmarkBusyUpdate is BenchmarkUpdate where every operation uses part or
// all of its demand: no operation takes the engine's shortcut for idle
// operations, and more of them carry the usage breakpoints.
func BenchmarkBusyUpdate(b *testing.B) {
	benchmarkUpdate(b, func(p *genParams) { p.Busy = true })
}

func benchmarkUpdate(b *testing.B, tweak func(*genParams)) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("pools=%d,ops=%d", size.pools, size.ops), func(b *testing.B) {
			p := benchParams(size.pools, size.ops)
			tweak(&p)
			snap, prev := genSnapshot(p)
			// Volumes refill and are consumed over one second.
			prev.LastUpdate = snap.Now.Add(-time.Second)
			r, err := Update(snap, prev)
			if err != nil {
				b.Fatalf("Update: %v", err)
			}
			elements := len(r.Elements)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			for range b.N {
				if _, err := Update(snap, prev); err != nil {
					b.Fatalf("Update: %v", err)
				}
			}
			cpu = processCPU() - cpu
			b.StopTimer()
			reportCPU(b, cpu)
			b.ReportMetric(float64(elements), "elements")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(elements), "ns/element")
		})
	}
}

// reportCPU reports the process's CPU time per iteration (cpu-ms/op):
// with -cpu 1 that is the update's own time plus the garbage collector's,
// without the time the process waited for a core on a shared machine.
func reportCPU(b *testing.B, cpu int64) {
	if cpu > 0 {
		b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
	}
}

// BenchmarkUpdateInto is BenchmarkUpdate through (*Engine).UpdateInto: the
// same complete update of the same trees, by the caller's own Engine, into
// one Result that every iteration overwrites (its records, job
// classifications and state maps are reused). BenchmarkUpdate is the plain
// path: the package-level Update, a new Result each time. The snapshot is
// the same every time, so the Engine reuses the tree's structure (see
// topology.go); BenchmarkUpdateIntoChanged is the same where the structure
// changes at every update.
func BenchmarkUpdateInto(b *testing.B) {
	benchmarkUpdateInto(b, false)
}

// BenchmarkUpdateIntoChanged is BenchmarkUpdateInto where every update's
// structure differs from the last one's (the updates alternate between the
// tree and the tree without its last operation), so the Engine cannot
// reuse the structure: it lays the tree out again every time, moving the
// operations of the pools whose operations did not change (see
// reshape.go).
func BenchmarkUpdateIntoChanged(b *testing.B) {
	benchmarkUpdateInto(b, true)
}

func benchmarkUpdateInto(b *testing.B, changed bool) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("pools=%d,ops=%d", size.pools, size.ops), func(b *testing.B) {
			snap, prev := genSnapshot(benchParams(size.pools, size.ops))
			prev.LastUpdate = snap.Now.Add(-time.Second)
			snaps := []*Snapshot{snap}
			if changed {
				other := *snap
				other.Operations = snap.Operations[:len(snap.Operations)-1]
				snaps = append(snaps, &other)
			}
			var en Engine
			var res Result
			// One update of each snapshot before the timer (the second
			// allocates the Engine's second buffers, see reshape.go).
			for _, s := range snaps {
				if err := en.UpdateInto(&res, s, prev); err != nil {
					b.Fatalf("UpdateInto: %v", err)
				}
			}
			if err := en.UpdateInto(&res, snap, prev); err != nil {
				b.Fatalf("UpdateInto: %v", err)
			}
			elements := len(res.Elements)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			for i := range b.N {
				if err := en.UpdateInto(&res, snaps[(i+1)%len(snaps)], prev); err != nil {
					b.Fatalf("UpdateInto: %v", err)
				}
			}
			cpu = processCPU() - cpu
			b.StopTimer()
			reportCPU(b, cpu)
			b.ReportMetric(float64(elements), "elements")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(elements), "ns/element")
		})
	}
}

// BenchmarkUpdatePhases times the steps of one update of the largest tree
// (as custom metrics, milliseconds per update), to show where the time goes.
// It updates one Engine with the same snapshot again and again, so its
// "build" is the rebuild that reuses the structure and keeps every
// operation's element and function (see topology.go and opcache.go), not a
// full build (BenchmarkUpdate's package-level Update does a full one).
func BenchmarkUpdatePhases(b *testing.B) {
	snap, prev := genSnapshot(benchParams(10000, 100000))
	prev.LastUpdate = snap.Now.Add(-time.Second)
	sums := make([]time.Duration, len(phaseNames))
	var en Engine
	if _, err := en.Update(snap, prev); err != nil {
		b.Fatalf("Update: %v", err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		updateInPhases(b, &en.t, new(Result), false, snap, prev, sums)
	}
	b.StopTimer()
	reportPhases(b, sums)
}

// BenchmarkUpdatePhasesCold is BenchmarkUpdatePhases for the package-level
// Update: each update borrows a pooled Engine, as Update does, which keeps
// no structure, element or function from the last update (its build is a
// full build), and returns a new Result. It runs BenchmarkUpdate's three
// sizes, and reports the time per element too, so that the sizes compare:
// the smallest tree's working memory fits in one core's L2 cache, the
// middle one's in the L3 cache, the largest one's in neither.
func BenchmarkUpdatePhasesCold(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("pools=%d,ops=%d", size.pools, size.ops), func(b *testing.B) {
			benchmarkPhasesCold(b, size.pools, size.ops)
		})
	}
}

// BenchmarkUpdatePhasesColdOperations is BenchmarkUpdatePhasesCold for the
// largest tree's 10,000 pools (the same seed, so the same pools) with
// 10,000 and with 100,000 operations: the difference between the two is
// what 90,000 operations cost a cold update, step by step
// (docs/BENCHMARKS.md, thirteenth session).
func BenchmarkUpdatePhasesColdOperations(b *testing.B) {
	for _, ops := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("pools=10000,ops=%d", ops), func(b *testing.B) {
			p := benchParams(10000, ops)
			p.Seed = benchParams(10000, 100000).Seed
			benchmarkPhasesColdOf(b, p)
		})
	}
}

func benchmarkPhasesCold(b *testing.B, pools, ops int) {
	benchmarkPhasesColdOf(b, benchParams(pools, ops))
}

func benchmarkPhasesColdOf(b *testing.B, p genParams) {
	snap, prev := genSnapshot(p)
	prev.LastUpdate = snap.Now.Add(-time.Second)
	sums := make([]time.Duration, len(phaseNames))
	r, err := Update(snap, prev)
	if err != nil {
		b.Fatalf("Update: %v", err)
	}
	elements := len(r.Elements)
	b.ReportAllocs()
	b.ResetTimer()
	var work updateWork
	for range b.N {
		en := enginePool.Get().(*Engine)
		en.t.pooled = true
		updateInPhases(b, &en.t, new(Result), false, snap, prev, sums)
		b.StopTimer()
		work = updateWorkOf(&en.t)
		b.StartTimer()
		en.release()
		enginePool.Put(en)
	}
	b.StopTimer()
	reportPhases(b, sums)
	b.ReportMetric(float64(work.fPoints), "f-points")
	b.ReportMetric(float64(work.sPoints), "s-points")
	b.ReportMetric(float64(work.preparations), "pool-preparations")
	b.ReportMetric(float64(work.bisections), "bisections")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(elements), "ns/element")
}

// updateWork is how much an update built (a cold one, or one of
// BenchmarkUpdatePhasesChurn's, which reports the mean per update): the
// points of the pools' FairShareByFitFactor and FairShareBySuggestion (as
// far as the lazy build took them, kept ones included), the pools prepared
// afresh (an integral pass may prepare one again) and the pools whose fit
// factor was bisected.
type updateWork struct{ fPoints, sPoints, preparations, bisections int }

func updateWorkOf(t *tree) updateWork {
	w := updateWork{preparations: t.poolStats.fresh, bisections: t.poolStats.bisected}
	for k := range t.pools {
		w.fPoints += len(t.lz[k].sum.out)
		w.sPoints += len(t.lz[k].s)
	}
	return w
}

// BenchmarkUpdatePhasesChurn is BenchmarkUpdatePhases with the changes of
// BenchmarkUpdateIntoChurn between updates (outside the timer), each
// update written into a reused Result as UpdateInto writes it: where the
// time of a busy cluster's update goes. Its cases are
// BenchmarkUpdateIntoChurn's "churn=1%" (the structure is reused, see
// topology.go) and "churn=1%,starts=0.1%" (operations start and finish:
// the build is reshape's, see reshape.go), so the difference between them
// is what starts and finishes cost, step by step; and the same two at 30 %
// churn, the share of operations a running scheduler with several jobs per
// operation changes between updates (docs/BENCHMARKS.md, tenth session).
func BenchmarkUpdatePhasesChurn(b *testing.B) {
	for _, c := range []struct {
		name          string
		churn, starts float64
	}{
		{"churn=1%", 0.01, 0},
		{"churn=1%,starts=0.1%", 0.01, 0.001},
		{"churn=30%", 0.3, 0},
		{"churn=30%,starts=1%", 0.3, 0.01},
	} {
		b.Run(c.name, func(b *testing.B) {
			snap, prev := genSnapshot(benchParams(10000, 100000))
			prev.LastUpdate = snap.Now.Add(-time.Second)
			change := churner(snap, rand.New(rand.NewPCG(100000, 1010)), c.churn, c.starts)
			sums := make([]time.Duration, len(phaseNames))
			var en Engine
			var res Result
			warmChurn(b, &en, &res, snap, prev, change)
			b.ReportAllocs()
			b.ResetTimer()
			var work updateWork
			for range b.N {
				b.StopTimer()
				change()
				b.StartTimer()
				updateInPhases(b, &en.t, &res, true, snap, prev, sums)
				b.StopTimer()
				w := updateWorkOf(&en.t)
				work.fPoints += w.fPoints
				work.sPoints += w.sPoints
				work.preparations += w.preparations
				work.bisections += w.bisections
				b.StartTimer()
			}
			b.StopTimer()
			reportPhases(b, sums)
			b.ReportMetric(float64(work.fPoints)/float64(b.N), "f-points")
			b.ReportMetric(float64(work.sPoints)/float64(b.N), "s-points")
			b.ReportMetric(float64(work.preparations)/float64(b.N), "pool-preparations")
			b.ReportMetric(float64(work.bisections)/float64(b.N), "bisections")
		})
	}
}

// phaseNames names the steps updateInPhases times.
var phaseNames = []string{"build", "previous", "guarantees", "integral+weights", "burst", "relaxed", "functions", "distribute", "report"}

// updateInPhases runs one update of snap by t into res as tree.run does,
// adding the time of each step (see phaseNames) to sums.
func updateInPhases(b *testing.B, t *tree, res *Result, reuse bool, snap *Snapshot, prev *State, sums []time.Duration) {
	k, last := 0, time.Now()
	lap := func() {
		now := time.Now()
		sums[k] += now.Sub(last)
		k, last = k+1, now
	}
	if err := t.build(snap); err != nil {
		b.Fatalf("build: %v", err)
	}
	lap()
	if err := t.loadPrevious(prev); err != nil {
		b.Fatalf("loadPrevious: %v", err)
	}
	lap()
	t.inferStrongGuarantees()
	lap()
	burst, relaxed := t.integralLists()
	integral := t.loadIntegral(prev, burst, relaxed)
	t.updateVolumes(integral, snap.Now.Sub(prev.LastUpdate).Seconds())
	alerts := t.adjustGuarantees(burst)
	t.computeWeights()
	t.computeScales()
	lap()
	t.grantBurst(burst)
	lap()
	t.grantRelaxed(relaxed)
	lap()
	t.prepare(0)
	lap()
	t.distribute(0, 1)
	t.limitedDemands()
	lap()
	t.report(res, reuse, snap, prev, alerts)
	lap()
}

// reportPhases reports the steps' mean times in milliseconds per update.
func reportPhases(b *testing.B, sums []time.Duration) {
	for i, n := range phaseNames {
		b.ReportMetric(float64(sums[i].Nanoseconds())/1e6/float64(b.N), n+"-ms")
	}
}

// BenchmarkUpdateIntoChurn is BenchmarkUpdateInto where, between updates,
// a fraction of the operations (1 % or 10 %, chosen by a seeded random
// generator) change: an idle operation its demand, a busy one its usage
// (so the mix of idle and busy operations stays that of the tree). With
// starts, some operations also finish (0.1 % of them, anywhere in the
// list) and as many new idle ones start (at the end of the list, in
// random pools), so the operation list — the structure — changes at
// every update, as it does in a busy cluster. Without starts the Engine
// reuses the structure and keeps the elements and functions of the
// operations that did not change (see opcache.go); with them it lays the
// tree out again and moves them (see reshape.go). BenchmarkUpdateInto
// (nothing changes) flatters that, this does not. The changes are made
// outside the timer, and cpu-ms/op counts the updates only.
func BenchmarkUpdateIntoChurn(b *testing.B) {
	for _, size := range benchSizes {
		for _, c := range []struct {
			name          string
			churn, starts float64 // fractions of the operations
		}{
			{"churn=1%", 0.01, 0},
			{"churn=10%", 0.1, 0},
			{"churn=1%,starts=0.1%", 0.01, 0.001},
			{"churn=10%,starts=1%", 0.1, 0.01},
			// What a running scheduler with several jobs per operation
			// sees: `sharetree load` finds 27-39 % of the operations
			// recomputed per update (jobs of 2 s, updates every 200 ms,
			// see docs/BENCHMARKS.md). The changes are drawn with
			// replacement, so 30 % of draws change about a quarter of the
			// operations (recomputed-% adds the Engine's rebuilds of
			// every operation's functions).
			{"churn=30%", 0.3, 0},
			{"churn=30%,starts=1%", 0.3, 0.01},
		} {
			b.Run(fmt.Sprintf("pools=%d,ops=%d/%s", size.pools, size.ops, c.name), func(b *testing.B) {
				snap, prev := genSnapshot(benchParams(size.pools, size.ops))
				prev.LastUpdate = snap.Now.Add(-time.Second)
				change := churner(snap, rand.New(rand.NewPCG(uint64(size.ops), uint64(float64(c.churn*1000)+float64(c.starts*1e6)))), c.churn, c.starts)
				elements := benchChurn(b, snap, prev, change)
				b.ReportMetric(float64(elements), "elements")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(elements), "ns/element")
			})
		}
	}
}

// warmChurn runs the two updates a churn benchmark makes before its timer:
// the first builds the tree, the second is the first with changes (it
// allocates the Engine's second buffers when the operations change, see
// reshape.go).
func warmChurn(b *testing.B, en *Engine, res *Result, snap *Snapshot, prev *State, change func()) {
	for k := range 2 {
		if k > 0 {
			change()
		}
		if err := en.UpdateInto(res, snap, prev); err != nil {
			b.Fatalf("UpdateInto: %v", err)
		}
	}
}

// benchChurn times b.N updates of snap by one Engine into one Result, with
// change applied before each outside the timer (after warmChurn's two
// updates), and reports their CPU time (cpu-ms/op counts the updates
// only) and the share of the operations they recomputed (recomputed-%,
// see Engine.LastReuse). It returns the number of elements of the result.
func benchChurn(b *testing.B, snap *Snapshot, prev *State, change func()) int {
	var en Engine
	var res Result
	warmChurn(b, &en, &res, snap, prev, change)
	elements := len(res.Elements)
	b.ReportAllocs()
	b.ResetTimer()
	var cpu int64
	var ops, recomputed int
	for range b.N {
		b.StopTimer()
		change()
		b.StartTimer()
		cpu0 := processCPU()
		if err := en.UpdateInto(&res, snap, prev); err != nil {
			b.Fatalf("UpdateInto: %v", err)
		}
		cpu += processCPU() - cpu0
		r := en.LastReuse()
		ops, recomputed = ops+r.Operations, recomputed+r.Recomputed
	}
	b.StopTimer()
	reportCPU(b, cpu)
	if ops > 0 {
		b.ReportMetric(100*float64(recomputed)/float64(ops), "recomputed-%")
	}
	return elements
}

// churner returns a function that changes snap as BenchmarkUpdateIntoChurn
// describes: a fraction churn of the operations change their demand (idle
// ones) or usage (busy ones), and a fraction starts finish (anywhere in
// the list) while as many new idle ones start (at the end, in random
// pools).
func churner(snap *Snapshot, rng *rand.Rand, churn, starts float64) func() {
	started := 0
	return func() {
		ops := snap.Operations
		for range int(float64(len(ops)) * churn) {
			o := &ops[rng.IntN(len(ops))]
			if o.Usage.IsZero() {
				o.Demand = o.Demand.Scale(0.5 + unit(rng)).Round()
			} else {
				o.Usage = o.Demand.Scale(0.1 + float64(0.9*unit(rng))).Round()
			}
		}
		n := int(float64(len(ops)) * starts)
		if n == 0 {
			return
		}
		finished := make(map[int]bool, n)
		for len(finished) < n {
			finished[rng.IntN(len(ops))] = true
		}
		kept := ops[:0]
		for i := range ops {
			if !finished[i] {
				kept = append(kept, ops[i])
			}
		}
		for range n {
			o := kept[rng.IntN(len(kept))]
			started++
			o.ID = OperationID(fmt.Sprintf("started%07d", started))
			o.Pool = snap.Pools[rng.IntN(len(snap.Pools))].Name
			o.Usage, o.Jobs, o.StartTime = Resources{}, nil, snap.Now
			kept = append(kept, o)
		}
		snap.Operations = kept
	}
}

// BenchmarkUpdateGroupedByPool measures an idea tried and dropped (see
// docs/BENCHMARKS.md): the largest tree's operations listed pool by pool,
// in their pools' order in the tree (stably, so each pool keeps its
// operations' order and the results are the same), instead of in
// admission order, so that build, reshape and the report read and write
// in order. "cold" is BenchmarkUpdate's update, "starts" is
// BenchmarkUpdateIntoChurn's "churn=1%,starts=0.1%" (started operations
// are appended, as the scheduler appends them); grouped=false is the
// admission order of those benchmarks.
func BenchmarkUpdateGroupedByPool(b *testing.B) {
	for _, grouped := range []bool{false, true} {
		setup := func(b *testing.B) (*Snapshot, *State) {
			snap, prev := genSnapshot(benchParams(10000, 100000))
			prev.LastUpdate = snap.Now.Add(-time.Second)
			if grouped {
				r, err := Update(snap, prev)
				if err != nil {
					b.Fatalf("Update: %v", err)
				}
				pos := make(map[PoolID]int, len(snap.Pools))
				for i := range r.Elements {
					if e := &r.Elements[i]; e.Kind == KindPool {
						pos[PoolID(e.Name)] = i
					}
				}
				slices.SortStableFunc(snap.Operations, func(x, y Operation) int { return pos[x.Pool] - pos[y.Pool] })
			}
			return snap, prev
		}
		b.Run(fmt.Sprintf("cold/grouped=%t", grouped), func(b *testing.B) {
			snap, prev := setup(b)
			b.ResetTimer()
			cpu := processCPU()
			for range b.N {
				if _, err := Update(snap, prev); err != nil {
					b.Fatalf("Update: %v", err)
				}
			}
			reportCPU(b, processCPU()-cpu)
		})
		b.Run(fmt.Sprintf("starts/grouped=%t", grouped), func(b *testing.B) {
			snap, prev := setup(b)
			change := churner(snap, rand.New(rand.NewPCG(100000, 1010)), 0.01, 0.001)
			benchChurn(b, snap, prev, change)
		})
	}
}
