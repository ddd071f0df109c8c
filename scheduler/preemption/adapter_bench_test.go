package preemption

import (
	"fmt"
	"testing"

	"github.com/sharetree/sharetree/scheduler"
)

// BenchmarkPreemptionView builds one node's preemption view in a tree of
// 500 operations with 20 running jobs each on 1,700 nodes, while every
// other job of half the operations is being interrupted (2,500 jobs):
// with the interrupting jobs summed again by the view (leaving=summed), or
// with the sums the caller kept since the last change (leaving=kept, see
// Source.Leaving).
func BenchmarkPreemptionView(b *testing.B) {
	var pools []scheduler.PoolConfig
	for p := range 10 {
		pools = append(pools, scheduler.PoolConfig{Name: scheduler.PoolID(fmt.Sprintf("p%d", p))})
	}
	h := newHarness(b, scheduler.DefaultTreeConfig(), pools)
	for n := range 1700 {
		h.nodes = append(h.nodes, scheduler.Node{ID: scheduler.NodeID(fmt.Sprintf("m%04d", n)), Resources: unit.Scale(6)})
	}
	for o := range 500 {
		h.add(fmt.Sprintf("o%03d", o), fmt.Sprintf("p%d", o%10), 20, ModeNormal)
	}
	h.update(0)
	h.fill()
	h.update(0)
	for _, u := range h.p.Operations() {
		if u.ID[len(u.ID)-1]%2 != 0 {
			continue
		}
		for k, j := range h.p.RunningJobs(u.ID) {
			if k%2 == 0 {
				h.leaves[j.Key] = j.Resources
			}
		}
	}
	node := h.nodes[len(h.nodes)/2].ID
	jobs, view := h.nodeJobs(node), h.node(node)
	if len(jobs) == 0 || len(h.leaves) < 2000 {
		b.Fatalf("%d jobs on the node, %d leaving: the tree is not as described", len(jobs), len(h.leaves))
	}
	for _, kept := range []bool{false, true} {
		name := "leaving=summed"
		if kept {
			name = "leaving=kept"
		}
		b.Run(name, func(b *testing.B) {
			src := h.source()
			if kept {
				src.Leaving = SumLeaving(h.leaves)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := src.PreemptionView(view, jobs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
