package scheduler

import "math"

// initOperation fills an operation's element from the snapshot: demand,
// usage, limits and their shares, the dominant resource, the weight and the
// settings the later steps read, so that no later step needs the snapshot's
// operation (which lies elsewhere in memory) except for its jobs.
func (t *tree) initOperation(e *element, o *Operation) {
	total := &t.total
	e.usage = o.Usage
	// demand = max(demand, usage); limits = min(limits or +Inf, total); and
	// their shares, resource by resource.
	lim := &o.ResourceLimits
	for r := range NumResources {
		u := o.Usage[r]
		d := max(o.Demand[r], u)
		l := math.Inf(1)
		if lim.Set.Has(ResourceType(r)) {
			l = lim.Values[r]
		}
		l = min(l, total[r])
		e.demand[r], e.limits[r] = d, l
		if tr := total[r]; tr > 0 {
			e.demandShare[r], e.usageShare[r], e.limitsShare[r] = d/tr, u/tr, l/tr
		}
	}
	if best, ok := t.bestAllocationShare(&o.JobResources); ok {
		e.limitsShare = e.limitsShare.Min(best)
	}
	// An operation's functions need no guarantee and its limits never
	// change: prepare never visits it (its varies is set here, its
	// functions are built when first read, see buildOperation).
	for r, d := range e.demandShare {
		if d != 0 {
			e.varies |= 1 << r
		}
	}
	e.idle = e.usage.IsZero()
	if e.idle {
		e.dominant = DominantResource(e.demand, *total)
	} else {
		e.dominant = DominantResource(e.usage, *total)
	}
	e.gang = o.IsGang && t.cfg.EnableStepFunctionForGangOperations
	e.weight = 1
	if o.Weight != nil {
		e.weight = *o.Weight
	}
	e.unschedulable = o.Unschedulable
	e.hasJobs = len(o.Jobs) > 0
	e.pendingJobs = o.PendingJobCount
	if v := o.FairShareStarvationTolerance; v != nil {
		e.hasOpTolerance, e.opTolerance = true, *v
	}
	if v := o.FairShareStarvationTimeout; v != nil {
		e.hasOpTimeout, e.opTimeout = true, *v
	}
}

// setShares fills the demand and usage shares and the dominant resource.
func (e *element) setShares(total Resources) {
	e.demandShare = e.demand.ShareOf(total)
	e.usageShare = e.usage.ShareOf(total)
	if e.usage.IsZero() {
		e.dominant = DominantResource(e.demand, total)
	} else {
		e.dominant = DominantResource(e.usage, total)
	}
}

// poolSettings copies what the update reads of pool p's configuration into
// the pool's data (pd, cleared): its limits within the cluster, integral
// guarantee, starvation settings, weight and strong guarantee. fill calls
// it in the pools' order, so that the configurations are read in their
// order and the later passes, which visit the pools in the tree's order,
// read the compact pool data instead.
func (t *tree) poolSettings(p *PoolConfig, pd *poolData) {
	total := &t.total
	pd.limits = p.ResourceLimits.OrInfinite().Min(*total)
	ig := &p.IntegralGuarantees
	pd.integral = ig.GuaranteeType
	if ig.GuaranteeType != GuaranteeNone {
		pd.flowRatio = maxRatio(ig.ResourceFlow.OrZero(), *total)
		pd.burstRatio = maxRatio(ig.BurstGuaranteeResources.OrZero(), *total)
	}
	pd.canAcceptFreeVolume = ig.CanAcceptFreeVolume == nil || *ig.CanAcceptFreeVolume
	pd.distributeFreeVolume = t.cfg.Integral.ShouldDistributeFreeVolumeAmongChildren
	if ig.ShouldDistributeFreeVolumeAmongChildren != nil {
		pd.distributeFreeVolume = *ig.ShouldDistributeFreeVolumeAmongChildren
	}
	if v := p.FairShareStarvationTolerance; v != nil {
		pd.hasTolerance, pd.tolerance = true, *v
	}
	if v := p.FairShareStarvationTimeout; v != nil {
		pd.hasTimeout, pd.timeout = true, *v
	}
	if v := p.EnableAggressiveStarvation; v != nil {
		pd.hasAggressive, pd.aggressive = true, *v
	}
	if v := p.Weight; v != nil {
		pd.hasWeight, pd.weight = true, *v
	}
	pd.strongGuarantee = p.StrongGuaranteeResources
}

// poolAttributes fills a pool's or the root's demand, usage, limits and
// their shares and dominant resource, and adds up the integral flow and
// burst ratios of its subtree (its own last, into its parent's). Its
// children must be filled and its settings read (poolSettings): the tree
// calls it for the pools in reverse pre-order, when it leaves the pool's
// subtree.
func (t *tree) poolAttributes(e *element) {
	total := t.total
	if !e.opsSummed {
		for _, c := range t.children(e) {
			ce := &t.el[c]
			for r := range e.demand {
				e.demand[r] += ce.demand[r]
				e.usage[r] += ce.usage[r]
			}
		}
	}
	if e.kind == KindRoot {
		e.limits = total
		e.limitsShare = t.ones
		e.setShares(total)
		return
	}
	pd := t.data(e)
	e.limits = pd.limits
	e.limitsShare = e.limits.ShareOf(total)
	e.setShares(total)
	pp := t.data(&t.el[e.parent])
	pd.totalFlowRatio += pd.flowRatio
	pd.totalBurstRatio += pd.burstRatio
	pp.totalFlowRatio += pd.totalFlowRatio
	pp.totalBurstRatio += pd.totalBurstRatio
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

// nodeShape is one distinct node resource vector of the cluster and how many
// nodes have it.
type nodeShape struct {
	resources Resources
	count     float64
}

// prepareNodeShapes groups the cluster's nodes by their resources (in order
// of first appearance), so that best allocation shares walk each distinct
// node shape once.
func (t *tree) prepareNodeShapes(nodes []Node) {
	t.nodeShapes = t.nodeShapes[:0]
	clear(t.bestShare)
	if len(nodes) == 0 || t.total[Memory] <= 0 {
		return
	}
	idx := make(map[Resources]int, len(nodes))
	for _, n := range nodes {
		if k, ok := idx[n.Resources]; ok {
			t.nodeShapes[k].count++
			continue
		}
		idx[n.Resources] = len(t.nodeShapes)
		t.nodeShapes = append(t.nodeShapes, nodeShape{resources: n.Resources, count: 1})
	}
}

// bestAllocationShare limits an operation by the per-node shape of its jobs:
// on each node, as many whole jobs as fit, and the memory they take, as a
// share of the cluster's memory. Only memory is limited (every other resource
// keeps share 1). ok is false when the nodes or the job shape are unknown or
// the job needs no memory.
func (t *tree) bestAllocationShare(job *Resources) (Share, bool) {
	total := &t.total
	if len(t.nodeShapes) == 0 || job[Memory] <= 0 || total[Memory] <= 0 {
		return Share{}, false
	}
	// The share depends on the job shape, the nodes and the total only,
	// and many operations run jobs of the same shape: each shape is
	// computed once per update (a NaN never matches, and -0 matches 0,
	// which the computation does not tell apart either).
	s := t.ones
	if v, ok := t.bestShare[*job]; ok {
		s[Memory] = v
		return s, true
	}
	// The resources the job needs, and their inverses: floor(n/j) is
	// floor(n·(1/j)) unless n·(1/j) is within rounding of a whole number
	// (then the division decides), so most nodes need no division.
	var rs [NumResources]int
	var inv [NumResources]float64
	k := 0
	for r := range job {
		if job[r] > 0 {
			rs[k], inv[k] = r, 1/job[r]
			k++
		}
	}
	usable := 0.0
	for i := range t.nodeShapes {
		n := &t.nodeShapes[i]
		fit := math.Inf(1)
		for q := range k {
			r := rs[q]
			v := float64(n.resources[r] * inv[q])
			f := math.Floor(v)
			if tol := float64(1e-9 * max(1, v)); !(v-f >= tol && f+1-v >= tol) { // (NaN, Inf: divide)
				f = math.Floor(n.resources[r] / job[r])
			}
			fit = min(fit, f)
		}
		if fit > 0 && !math.IsInf(fit, 1) {
			usable += float64(n.count * fit * job[Memory])
		}
	}
	s[Memory] = min(1, usable/total[Memory])
	if t.bestShare == nil {
		t.bestShare = make(map[Resources]float64)
	}
	t.bestShare[*job] = s[Memory]
	return s, true
}
