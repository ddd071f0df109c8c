package scheduler

import (
	"slices"
	"testing"
)

// BenchmarkMemoryFloor measures what moving the largest tree's data costs
// by itself, without the computation, as reference points for
// BenchmarkUpdate (see docs/BENCHMARKS.md):
//
//   - result: a new Result's records (as many as the tree has elements)
//     allocated and every field an update writes written, in order, from
//     the elements (what Update's report cannot do with less: 84 MB);
//   - elements-in-order: the operations' elements written in element
//     order;
//   - elements-by-snapshot: the same elements written in the snapshot's
//     order of operations (admission order: random pools), as a full
//     build fills them: the same bytes in another order.
func BenchmarkMemoryFloor(b *testing.B) {
	t := &largestUpdated(b).t
	n := len(t.el)
	src := make([]element, n)
	copy(src, t.el)
	names := t.names[:n:n]
	order := t.opElem[:len(t.opPool):len(t.opPool)]

	b.Run("result", func(b *testing.B) {
		b.ReportAllocs()
		cpu := processCPU()
		for range b.N {
			records := make([]ElementResult, n)
			for i := range records {
				e, r := &src[i], &records[i]
				r.Kind, r.Name, r.Depth = e.kind, names[i], int(e.depth)
				if e.parent >= 0 {
					r.Parent = names[e.parent]
				}
				r.DemandShare, r.UsageShare, r.LimitsShare = e.demandShare, e.usageShare, e.limitsShare
				r.StrongGuaranteeShare, r.ProposedIntegralShare = e.fairShare, e.fairShare
				r.LimitedDemandShare = e.limitedDemand
				r.FairShare = DetailedShare{StrongGuarantee: e.fairShare, IntegralGuarantee: e.fairShare,
					WeightProportional: e.fairShare, Total: e.fairShare}
				r.DominantResource, r.Weight = e.dominant, e.weight
				r.ResourceDemand, r.ResourceUsage, r.ResourceLimits = e.demand, e.usage, e.limits
				r.EffectiveStrongGuaranteeResources = e.limits
				r.EffectiveFairShareStarvationTolerance, r.Satisfaction = e.scale, e.weight
				r.FifoIndex = int(e.fifoIndex)
			}
			src[0].weight = records[n-1].Weight // keep the records alive
		}
		reportCPU(b, processCPU()-cpu)
	})
	// The operations' elements, in element order and in the snapshot's
	// order, each with its source copied in that order (so that both read
	// their sources in order and differ only in the order they write).
	inOrder := slices.Sorted(slices.Values(order))
	write := func(b *testing.B, at []int) {
		from := make([]element, len(at))
		for k, i := range at {
			from[k] = src[i]
		}
		dst := make([]element, n)
		b.ResetTimer()
		cpu := processCPU()
		for range b.N {
			for k, i := range at {
				s := &from[k]
				dst[i] = element{kind: s.kind, parent: s.parent, depth: s.depth, src: s.src, weight: s.weight,
					demand: s.demand, usage: s.usage, limits: s.limits}
			}
		}
		reportCPU(b, processCPU()-cpu)
	}
	b.Run("elements-in-order", func(b *testing.B) { write(b, inOrder) })
	b.Run("elements-by-snapshot", func(b *testing.B) { write(b, order) })
	b.Run("elements-gathered", func(b *testing.B) {
		// In element order, each read from the snapshot-ordered source.
		from := make([]element, len(order))
		at := make([]int, n)
		for k, i := range order {
			from[k], at[i] = src[i], k
		}
		dst := make([]element, n)
		b.ResetTimer()
		cpu := processCPU()
		for range b.N {
			for _, i := range inOrder {
				s := &from[at[i]]
				dst[i] = element{kind: s.kind, parent: s.parent, depth: s.depth, src: s.src, weight: s.weight,
					demand: s.demand, usage: s.usage, limits: s.limits}
			}
		}
		reportCPU(b, processCPU()-cpu)
	})
}
