package placement

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sharetree/sharetree/scheduler"
)

// benchPlacement builds pools in two levels (sqrt(pools) groups under the
// root) with ops operations spread over them, each with jobs jobs in two
// tasks of slightly different shapes.
func benchPlacement(tb testing.TB, pools, ops, jobsPerTask int) *Placement {
	tb.Helper()
	groups := 1
	for groups*groups < pools {
		groups++
	}
	var specs []PoolSpec
	for g := range groups {
		specs = append(specs, PoolSpec{Name: scheduler.PoolID(fmt.Sprintf("g%d", g))})
	}
	for i := range pools {
		s := PoolSpec{Name: scheduler.PoolID(fmt.Sprintf("p%d", i)), Parent: scheduler.PoolID(fmt.Sprintf("g%d", i%groups))}
		if i%10 == 9 {
			s.Mode = scheduler.ModeFIFO
		}
		if i%7 == 3 {
			s.ResourceLimits = limits(map[scheduler.ResourceType]float64{scheduler.CPU: 50})
		}
		specs = append(specs, s)
	}
	p := New()
	p.SetTotal(res(float64(ops*jobsPerTask), float64(ops*jobsPerTask*2), float64(ops*jobsPerTask*8)))
	if err := p.SetPools(specs); err != nil {
		tb.Fatal(err)
	}
	for i := range ops {
		err := p.AddOperation(OperationSpec{
			ID: scheduler.OperationID(fmt.Sprintf("op%05d", i)), Pool: scheduler.PoolID(fmt.Sprintf("p%d", i%pools)), Order: uint64(i),
			Tasks: []TaskSpec{
				{JobCount: jobsPerTask, JobResources: res(1, float64(1+i%4), float64(2+i%8))},
				{JobCount: jobsPerTask, JobResources: res(1, 1, 4)},
			},
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return p
}

// benchShare is a fair share of v in the resources the bench cluster has
// (slots, cpu, memory).
func benchShare(v float64) scheduler.Share {
	return scheduler.Share{scheduler.UserSlots: v, scheduler.CPU: v, scheduler.Memory: v}
}

// benchResult is an update result giving every pool and operation a fair
// share (a function of its position).
func benchResult(p *Placement) *scheduler.Result {
	r := &scheduler.Result{Elements: []scheduler.ElementResult{{Kind: scheduler.KindRoot, Name: scheduler.RootID, FairShare: scheduler.DetailedShare{Total: uniform(1)}}}}
	for i, e := range p.poolList {
		r.Elements = append(r.Elements, scheduler.ElementResult{Kind: scheduler.KindPool, Name: e.name, FairShare: scheduler.DetailedShare{Total: benchShare(float64(1+i%5) / float64(len(p.poolList)))}})
	}
	for i, e := range p.opList {
		r.Elements = append(r.Elements, scheduler.ElementResult{Kind: scheduler.KindOperation, Name: e.name, FairShare: scheduler.DetailedShare{Total: benchShare(float64(1+i%3) / float64(len(p.opList)))}})
	}
	return r
}

// BenchmarkSchedule: 10,000 operations in 1,000 pools; each heartbeat
// starts up to 4 jobs on an empty node and then finishes them (requeued), so
// the state stays stationary. ns/op covers one Schedule plus 4 JobFinished.
func BenchmarkSchedule(b *testing.B) {
	for _, fair := range []bool{false, true} {
		b.Run(fmt.Sprintf("fairShares=%v", fair), func(b *testing.B) {
			p := benchPlacement(b, 1000, 10000, 50)
			// Some usage everywhere first.
			for range 5000 {
				p.Schedule("warm", res(4, 16, 64), 4)
			}
			if fair {
				p.SetFairShares(benchResult(p))
			}
			buf := make([]Assignment, 0, 4)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				buf = p.ScheduleAppend(buf[:0], "n", res(4, 16, 64), 4)
				for _, a := range buf {
					p.JobFinished(a.Job, true)
				}
			}
		})
	}
}

// BenchmarkScheduleOnly: Schedule alone, starting 4 jobs per call until the
// operations run dry (the placement is rebuilt off the clock when they do).
func BenchmarkScheduleOnly(b *testing.B) {
	p := benchPlacement(b, 1000, 10000, 50)
	p.SetFairShares(benchResult(p))
	buf := make([]Assignment, 0, 4)
	b.ReportAllocs()
	for b.Loop() {
		buf = p.ScheduleAppend(buf[:0], "n", res(4, 16, 64), 4)
		if len(buf) < 4 {
			b.StopTimer()
			p = benchPlacement(b, 1000, 10000, 50)
			p.SetFairShares(benchResult(p))
			b.StartTimer()
		}
	}
}

// BenchmarkScheduleFullNode: a heartbeat from a node with too little free
// for any pending job: pruned at the root.
func BenchmarkScheduleFullNode(b *testing.B) {
	p := benchPlacement(b, 1000, 10000, 50)
	p.SetFairShares(benchResult(p))
	b.ReportAllocs()
	for b.Loop() {
		if got := p.Schedule("n", res(1, 0.5, 64), 4); got != nil {
			b.Fatal("something fit")
		}
	}
}

// BenchmarkScheduleRareFit: only one operation has jobs that fit the node
// (a small memory footprint), so the search must find it among 10,000.
func BenchmarkScheduleRareFit(b *testing.B) {
	p := benchPlacement(b, 1000, 10000, 50)
	if err := p.AddOperation(OperationSpec{ID: "tiny", Pool: "p500", Order: 1 << 40, Tasks: []TaskSpec{{JobCount: 1 << 20, JobResources: res(1, 1, 1)}}}); err != nil {
		b.Fatal(err)
	}
	p.SetFairShares(benchResult(p))
	buf := make([]Assignment, 0, 4)
	b.ReportAllocs()
	for b.Loop() {
		buf = p.ScheduleAppend(buf[:0], "n", res(4, 8, 1), 1)
		if len(buf) != 1 || buf[0].Job.Operation != "tiny" {
			b.Fatalf("got %v", buf)
		}
		p.JobFinished(buf[0].Job, true)
	}
}

// BenchmarkSetFairShares: 11,000 elements.
func BenchmarkSetFairShares(b *testing.B) {
	p := benchPlacement(b, 1000, 10000, 50)
	res := benchResult(p)
	b.ReportAllocs()
	for b.Loop() {
		p.SetFairShares(res)
	}
}

// BenchmarkApplyFairShares: a fair-share update with 100,000 operations
// in 10,000 pools, some of them running jobs, alternating between two
// updates that differ in no element, in 1% of the operations, or in every
// element. ns/op is ResolveFairShares (the lookups and comparisons, before
// the ledger's lock) plus ApplyFairShares; apply-ns/op is ApplyFairShares
// alone (under the lock).
func BenchmarkApplyFairShares(b *testing.B) {
	p := benchPlacement(b, 10000, 100000, 8)
	for range 20000 {
		p.Schedule("warm", res(4, 16, 64), 4)
	}
	base := benchResult(p)
	for _, tc := range []struct {
		name    string
		changed func(i int) bool // whether operation i's fair share differs
		pools   bool             // whether every pool's differs too
	}{
		{"none", func(int) bool { return false }, false},
		{"1%", func(i int) bool { return i%100 == 0 }, false},
		{"all", func(int) bool { return true }, true},
	} {
		other := &scheduler.Result{Elements: slices.Clone(base.Elements)}
		for i := range other.Elements {
			e := &other.Elements[i]
			op := e.Kind == scheduler.KindOperation
			if op && tc.changed(i-1-len(p.poolList)) || !op && tc.pools {
				e.FairShare.Total = e.FairShare.Total.Scale(1.5)
			}
		}
		results := [2]*scheduler.Result{base, other}
		b.Run("changed="+tc.name, func(b *testing.B) {
			var fs FairShares
			p.SetFairShares(base)
			var apply time.Duration
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				p.ResolveFairShares(results[(i+1)%2], &fs)
				start := time.Now()
				p.ApplyFairShares(&fs)
				apply += time.Since(start)
			}
			b.ReportMetric(float64(apply.Nanoseconds())/float64(b.N), "apply-ns/op")
		})
	}
}

// BenchmarkOperationsSnapshot: the operations' usage for a fair-share
// update's snapshot with 100,000 operations in 10,000 pools and about
// 40,000 running jobs, after a round of 1,000 heartbeats that each start
// up to 4 jobs and end as many of the oldest (off the clock):
// AppendOperations copies every operation, CollectOperations (what runs
// under the ledger's lock) only the changed ones, and Operations merges
// them into the copy (after the lock).
func BenchmarkOperationsSnapshot(b *testing.B) {
	p := benchPlacement(b, 10000, 100000, 8)
	var running []JobKey
	for range 10000 {
		for _, a := range p.Schedule("warm", res(4, 16, 64), 4) {
			running = append(running, a.Job)
		}
	}
	buf := make([]Assignment, 0, 4)
	heartbeats := func() {
		for range 1000 {
			buf = p.ScheduleAppend(buf[:0], "n", res(4, 16, 64), 4)
			for _, a := range buf {
				running = append(running, a.Job)
			}
			for _, k := range running[:len(buf)] {
				p.JobFinished(k, true)
			}
			running = append(running[:0], running[len(buf):]...)
		}
	}
	b.Run("AppendOperations", func(b *testing.B) {
		var ops []OperationUsage
		for b.Loop() {
			b.StopTimer()
			heartbeats()
			b.StartTimer()
			ops = p.AppendOperations(ops[:0])
		}
	})
	for _, merge := range []bool{false, true} {
		name := "CollectOperations"
		if merge {
			name += "+Operations"
		}
		b.Run(name, func(b *testing.B) {
			var c OperationsCopy
			p.CollectOperations(&c)
			c.Operations()
			for b.Loop() {
				b.StopTimer()
				heartbeats()
				b.StartTimer()
				p.CollectOperations(&c)
				if !merge {
					b.StopTimer()
				}
				c.Operations()
				b.StartTimer()
			}
		})
	}
}
