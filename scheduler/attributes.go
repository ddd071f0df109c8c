package scheduler

import "math"

// computeAttributes fills demand, usage, limits and their shares, dominant
// resources and integral ratios, bottom-up.
func (t *tree) computeAttributes(nodes []Node) {
	total := t.total
	for i := len(t.elements) - 1; i >= 0; i-- {
		e := t.elements[i]
		switch e.kind {
		case KindOperation:
			o := e.op
			e.usage = o.Usage
			e.demand = o.Demand.Max(o.Usage)
			e.limits = o.ResourceLimits.OrInfinite().Min(total)
			e.limitsShare = e.limits.ShareOf(total)
			if best, ok := bestAllocationShare(o.JobResources, nodes, total); ok {
				e.limitsShare = e.limitsShare.Min(best)
			}
		case KindPool:
			for _, c := range e.children {
				ce := t.elements[c]
				e.demand = e.demand.Add(ce.demand)
				e.usage = e.usage.Add(ce.usage)
			}
			e.limits = e.pool.ResourceLimits.OrInfinite().Min(total)
			e.limitsShare = e.limits.ShareOf(total)
			ig := e.pool.IntegralGuarantees
			e.integral = ig.GuaranteeType
			if ig.GuaranteeType != GuaranteeNone {
				e.flowRatio = maxRatio(ig.ResourceFlow.OrZero(), total)
				e.burstRatio = maxRatio(ig.BurstGuaranteeResources.OrZero(), total)
				e.specifiedBurstRatio = e.burstRatio
			}
			e.totalFlowRatio += e.flowRatio
			e.totalBurstRatio += e.burstRatio
			e.canAcceptFreeVolume = ig.CanAcceptFreeVolume == nil || *ig.CanAcceptFreeVolume
			e.distributeFreeVolume = t.cfg.Integral.ShouldDistributeFreeVolumeAmongChildren
			if ig.ShouldDistributeFreeVolumeAmongChildren != nil {
				e.distributeFreeVolume = *ig.ShouldDistributeFreeVolumeAmongChildren
			}
		case KindRoot:
			for _, c := range e.children {
				ce := t.elements[c]
				e.demand = e.demand.Add(ce.demand)
				e.usage = e.usage.Add(ce.usage)
			}
			e.limits = total
			e.limitsShare = t.ones
		}
		e.demandShare = e.demand.ShareOf(total)
		e.usageShare = e.usage.ShareOf(total)
		if e.usage.IsZero() {
			e.dominant = DominantResource(e.demand, total)
		} else {
			e.dominant = DominantResource(e.usage, total)
		}
		if e.parent >= 0 && e.kind == KindPool {
			p := t.elements[e.parent]
			p.totalFlowRatio += e.totalFlowRatio
			p.totalBurstRatio += e.totalBurstRatio
		}
	}
}

// maxRatio is max over resources with a positive total of v_r / total_r.
func maxRatio(v, total Resources) float64 {
	m := 0.0
	for r := range v {
		if total[r] > 0 {
			m = max(m, v[r]/total[r])
		}
	}
	return m
}

// minRatio is min over resources with a positive total of v_r / total_r (0
// when no total is positive).
func minRatio(v, total Resources) float64 {
	m := math.Inf(1)
	for r := range v {
		if total[r] > 0 {
			m = min(m, v[r]/total[r])
		}
	}
	if math.IsInf(m, 1) {
		return 0
	}
	return m
}

// bestAllocationShare limits an operation by the per-node shape of its jobs:
// on each node, as many whole jobs as fit, and the memory they take, as a
// share of the cluster's memory. Only memory is limited (every other resource
// keeps share 1). ok is false when the nodes or the job shape are unknown or
// the job needs no memory.
func bestAllocationShare(job Resources, nodes []Node, total Resources) (Share, bool) {
	if len(nodes) == 0 || job[Memory] <= 0 || total[Memory] <= 0 {
		return Share{}, false
	}
	usable := 0.0
	for _, n := range nodes {
		fit := math.Inf(1)
		for r := range job {
			if job[r] > 0 {
				fit = min(fit, math.Floor(n.Resources[r]/job[r]))
			}
		}
		if fit > 0 && !math.IsInf(fit, 1) {
			usable += fit * job[Memory]
		}
	}
	s := Ones(total)
	s[Memory] = min(1, usable/total[Memory])
	return s, true
}
