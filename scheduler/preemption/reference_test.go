package preemption

import (
	"cmp"
	"slices"

	"github.com/sharetree/sharetree/scheduler"
)

// This file is an independent, brute-force statement of Preempt's rules,
// written from the package documentation rather than from the
// implementation: tests compare the two.

const refEps = 1e-9

type refModel struct {
	v     *View
	ops   map[scheduler.OperationID]*Operation
	pools map[scheduler.PoolID]*Pool
}

func newRef(v *View) *refModel {
	m := &refModel{v: v, ops: map[scheduler.OperationID]*Operation{}, pools: map[scheduler.PoolID]*Pool{}}
	for i := range v.Operations {
		m.ops[v.Operations[i].ID] = &v.Operations[i]
	}
	for i := range v.Pools {
		m.pools[v.Pools[i].ID] = &v.Pools[i]
	}
	return m
}

func refCovers(o *Operation) bool {
	for r := range o.Demand {
		if o.FairShare[r]+1e-4 < o.Demand[r] || o.Demand[r]+1e-4 < o.FairShare[r] {
			return false
		}
	}
	return slices.Max(o.Demand[:]) > 1e-4
}

// refBelow: usage u of o is below k × fair share (or its non-preemptible
// usage).
func refBelow(o *Operation, u, total scheduler.Resources, k float64, infinite bool) bool {
	allStrict := true
	for r := range u {
		if !(o.NonPreemptibleUsage[r] > u[r]) {
			allStrict = false
		}
	}
	if allStrict || infinite {
		return true
	}
	share := u.ShareOf(total)
	nonBlocked, allBelow, someBelow := false, true, false
	for r := range share {
		below := o.FairShare[r]*k > share[r]+refEps
		someBelow = someBelow || below
		if o.FairShare[r]+refEps >= o.Demand[r] {
			continue
		}
		nonBlocked = true
		allBelow = allBelow && below
	}
	if nonBlocked {
		return allBelow
	}
	return someBelow
}

func refBelowGuarantee(u scheduler.Share, g scheduler.Share) bool {
	any := false
	for r := range g {
		if g[r] > refEps {
			any = true
			if u[r]+refEps >= g[r] {
				return false
			}
		}
	}
	return any
}

func (m *refModel) floor(s *Operation) float64 {
	if s.Starvation == scheduler.AggressivelyStarving {
		return m.v.Thresholds.Aggressive
	}
	return m.v.Thresholds.Preemption
}

// eligible: the per-job rules that do not depend on the other victims.
func (m *refModel) eligible(s *Operation, j *Job) bool {
	v := m.ops[j.Operation]
	if j.Interrupting || v.ID == s.ID || v.Mode == ModeGraceful || v.Starvation != scheduler.NonStarving || !MayTake(s.Starvation, j.Class) {
		return false
	}
	for _, p := range v.Pools {
		if !slices.Contains(s.Pools, p) && m.pools[p].Starvation != scheduler.NonStarving {
			return false
		}
	}
	return true
}

// valid: after removing set, no victim operation is below its floor and no
// protected pool is below its guarantee.
func (m *refModel) valid(s *Operation, set []*Job) bool {
	removedOp := map[scheduler.OperationID]scheduler.Resources{}
	removedPool := map[scheduler.PoolID]scheduler.Resources{}
	for _, j := range set {
		removedOp[j.Operation] = removedOp[j.Operation].Add(j.Resources)
		for _, p := range m.ops[j.Operation].Pools {
			removedPool[p] = removedPool[p].Add(j.Resources)
		}
	}
	aggressive := s.Starvation == scheduler.AggressivelyStarving
	for id, rem := range removedOp {
		o := m.ops[id]
		if refBelow(o, o.Usage.Sub(rem), m.v.Total, m.floor(s), !aggressive && refCovers(o)) {
			return false
		}
	}
	for id, rem := range removedPool {
		if slices.Contains(s.Pools, id) {
			continue
		}
		p := m.pools[id]
		if refBelowGuarantee(p.Usage.Sub(rem).ShareOf(m.v.Total), p.Guarantee) {
			return false
		}
	}
	return true
}

func (m *refModel) releasable() scheduler.Resources {
	out := m.v.Node.Free
	for _, j := range m.v.Jobs {
		if j.Interrupting {
			out = out.Add(j.Resources)
		}
	}
	return out
}

func refFits(avail, need scheduler.Resources) bool {
	for r := range need {
		if avail[r]+float64(refEps*max(1, need[r])) < need[r] {
			return false
		}
	}
	return true
}

// candidates are s's eligible jobs in candidate order.
func (m *refModel) candidates(s *Operation) []*Job {
	var out []*Job
	for i := range m.v.Jobs {
		if m.eligible(s, &m.v.Jobs[i]) {
			out = append(out, &m.v.Jobs[i])
		}
	}
	slices.SortFunc(out, func(a, b *Job) int {
		return cmp.Or(cmp.Compare(b.Class, a.Class), cmp.Compare(b.Seq, a.Seq), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// best enumerates subsets of the candidates by size, each size in
// lexicographic order, and returns the first valid one that makes s's next
// job fit; ok is false when there is none.
func (m *refModel) best(s *Operation) (victims []JobID, ok bool) {
	cands := m.candidates(s)
	base := m.releasable()
	var pick []int
	var rec func(from, k int) bool
	rec = func(from, k int) bool {
		if k == 0 {
			set := make([]*Job, len(pick))
			avail := base
			for i, c := range pick {
				set[i] = cands[c]
				avail = avail.Add(cands[c].Resources)
			}
			return refFits(avail, s.NextJob) && m.valid(s, set)
		}
		for i := from; i <= len(cands)-k; i++ {
			pick = append(pick, i)
			if rec(i+1, k-1) {
				return true
			}
			pick = pick[:len(pick)-1]
		}
		return false
	}
	for k := 1; k <= len(cands); k++ {
		pick = pick[:0]
		if rec(0, k) {
			for _, i := range pick {
				victims = append(victims, cands[i].ID)
			}
			return victims, true
		}
	}
	return nil, false
}
