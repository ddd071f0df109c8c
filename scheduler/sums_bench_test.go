package scheduler

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkPoolSums measures the children's sums (childSum, which builds
// every fair_share pool's FairShareByFitFactor) by themselves, as a
// reference point for the distribution step of BenchmarkUpdatePhasesCold
// (see docs/BENCHMARKS.md): after one update of the largest tree, each
// iteration sums every such pool's children again, to as many points as
// the update built, from the children's functions as the update left them
// (it built the points the sums read, so they pull nothing: the sweeps
// alone). It reports the milliseconds per iteration spent on the pools of
// each depth (depth 0 is the root), the pools summed, the root's children
// and the points of its F, and the points of the children's functions the
// sums could read (as far as the update built them; a sweep stops at its
// target and may not reach the last ones).
func BenchmarkPoolSums(b *testing.B) {
	t := &largestUpdated(b).t
	type poolSum struct {
		elem, depth, target int
	}
	var sums []poolSum
	maxDepth := 0
	for k, i := range t.pools {
		if lz := &t.lz[k]; lz.sumStarted && !t.el[i].fifo && len(t.children(&t.el[i])) > 0 {
			d := int(t.el[i].depth)
			sums = append(sums, poolSum{elem: i, depth: d, target: len(lz.sum.out)})
			maxDepth = max(maxDepth, d)
		}
	}
	built := func() (n int) { // the pools' final points of S, which a pull extends
		for k := range t.pools {
			n += t.lz[k].sFinal
		}
		return n
	}
	before := built()
	byDepth := make([]time.Duration, maxDepth+1)
	var s childSum
	var out vfunc
	childPoints := 0
	b.ResetTimer()
	for range b.N {
		childPoints = 0
		for _, p := range sums {
			start := time.Now()
			s.reset(t)
			var base Share
			for _, c := range t.children(&t.el[p.elem]) {
				fn, done := t.finalS(c)
				if sc := t.el[c].scale; sc > 0 {
					s.add(c, fn, done, int(t.el[c].sEnd), sc)
				} else {
					addTo(&base, &fn[0].l)
				}
			}
			s.start(out, base)
			s.run(p.target)
			out = s.out
			byDepth[p.depth] += time.Since(start)
			for k := range s.ch {
				childPoints += len(s.ch[k].fn)
			}
		}
	}
	b.StopTimer()
	if after := built(); after != before {
		b.Fatalf("the sums pulled points: the pools' final points of S went from %d to %d", before, after)
	}
	for d, sum := range byDepth {
		b.ReportMetric(float64(sum.Nanoseconds())/1e6/float64(b.N), fmt.Sprintf("depth%d-ms", d))
	}
	b.ReportMetric(float64(len(sums)), "pools")
	b.ReportMetric(float64(len(t.children(&t.el[0]))), "root-children")
	for _, p := range sums {
		if p.elem == 0 {
			b.ReportMetric(float64(p.target), "root-f-points")
		}
	}
	b.ReportMetric(float64(childPoints), "child-points-built")
}
