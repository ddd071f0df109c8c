package scheduler

import (
	"fmt"
	"slices"
	"strings"
)

// Update runs one fair-share update on snap, continuing from prev (nil or
// the zero State before the first update). It returns every element's
// attributes and the state for the next update. It never modifies snap or
// prev; the same inputs always give the same result.
//
// Update borrows the working memory of an Engine from a pool (see Engine);
// callers that update one tree repeatedly can keep their own Engine instead.
func Update(snap *Snapshot, prev *State) (*Result, error) {
	en := enginePool.Get().(*Engine)
	en.t.pooled = true
	res, err := en.Update(snap, prev)
	en.release()
	enginePool.Put(en)
	return res, err
}

func (t *tree) update(snap *Snapshot, prev *State) (*Result, error) {
	res := new(Result)
	if err := t.run(res, false, snap, prev); err != nil {
		return nil, err
	}
	return res, nil
}

// run runs one update into res: a new Result, or (reuse) one to overwrite.
func (t *tree) run(res *Result, reuse bool, snap *Snapshot, prev *State) error {
	if prev == nil {
		prev = &State{}
	}
	if !prev.LastUpdate.IsZero() && snap.Now.Before(prev.LastUpdate) {
		return fmt.Errorf("%w: update time %s is before the previous update %s", ErrInvalidConfig,
			snap.Now.Format("2006-01-02T15:04:05.000Z07:00"), prev.LastUpdate.Format("2006-01-02T15:04:05.000Z07:00"))
	}
	if err := t.build(snap); err != nil {
		return err
	}
	if err := t.loadPrevious(prev); err != nil {
		return err
	}
	t.inferStrongGuarantees()
	burst, relaxed := t.integralLists()
	integral := t.loadIntegral(prev, burst, relaxed)
	if !prev.LastUpdate.IsZero() {
		dt := snap.Now.Sub(prev.LastUpdate).Seconds()
		t.updateVolumes(integral, dt)
	}
	alerts := t.adjustGuarantees(burst)
	t.computeWeights()
	t.computeScales()
	t.grantBurst(burst)
	t.grantRelaxed(relaxed)
	t.prepare(0)
	t.distribute(0, 1)
	t.limitedDemands()
	t.report(res, reuse, snap, prev, alerts)
	return nil
}

// loadIntegral lists the burst and then the relaxed pools, each with the
// volume and last share ratio the previous state gives it.
func (t *tree) loadIntegral(prev *State, burst, relaxed []int) []int {
	integral := append(append([]int(nil), burst...), relaxed...)
	for _, i := range integral {
		e := &t.el[i]
		ps := prev.Pools[PoolID(t.names[i])]
		t.vol(e).volume = ps.AccumulatedVolume
		t.data(e).lastShareRatio = ps.LastIntegralShareRatio
	}
	return integral
}

// report builds the Result in one pre-order pass: the detailed split of each
// fair share (the root's total is the sum of its children's), the
// starvation settings, statuses and job classes, and the state for the next
// update. A reused Result keeps the memory of its records (job
// classifications and integral attributes included) and of its state's
// pools map and operations list; every field is overwritten.
func (t *tree) report(res *Result, reuse bool, snap *Snapshot, prev *State, alerts []Alert) {
	// The elements in pre-order: the store's order, or (after patch) the
	// tree's.
	seq := t.preorder()
	n := len(t.el) - len(t.free)
	elements := res.Elements
	if !reuse || cap(elements) < n {
		elements = make([]ElementResult, n)
	}
	elements = elements[:n]
	pools, ops := res.State.Pools, res.State.Operations
	if pools == nil {
		pools = make(map[PoolID]PoolState, len(prev.Pools))
	} else {
		clear(pools)
	}
	oldOps := len(ops)
	ops = ops[:0]
	*res = Result{
		Now:      snap.Now,
		Total:    t.total,
		Elements: elements,
		Alerts:   alerts,
		State: State{
			LastUpdate: snap.Now,
			Pools:      pools,
			// Operations is filled after the pass, at its exact size when
			// it is new.
			Operations: ops,
		},
	}
	// The root's fair share is the sum of its children's: the pass adds
	// them up as it meets them (pre-order meets the root's children in
	// their order), and the root's record is completed after it.
	var rootTotal, rootSG Share
	below := t.scratchInts[:0] // operations below their fair share
	var none poolData          // an operation's
	for j := range n {
		i := j
		if seq != nil {
			i = int(seq[j])
		}
		e := &t.el[i]
		pd := &none
		if e.kind != KindOperation {
			pd = t.data(e)
		}
		set := t.inheritStarvationSettings(i)
		var st starvation
		if i != 0 {
			st = t.computeStatus(i, snap.Now, &set)
		}
		if e.parent == 0 {
			addTo(&rootTotal, &e.fairShare)
			rootSG = rootSG.Add(e.fairShare.Min(pd.sgs).ClampZero()) // operations have no guarantee
		}
		r := &res.Elements[j]
		// Every field of the record is written once, in the record's
		// order (a reused record is not cleared first; what it may hold
		// from before is overwritten too, with zero where a new record
		// has it): its job classifications and integral attributes lend
		// their memory. They are read only where they are written again:
		// reading a record before writing it waits for its memory.
		r.Kind = e.kind
		r.Name = t.names[i]
		r.Parent = ""
		if e.parent >= 0 {
			r.Parent = t.names[e.parent]
		}
		r.Depth = int(e.depth)
		r.DemandShare = e.demandShare
		r.UsageShare = e.usageShare
		r.LimitsShare = e.limitsShare
		r.StrongGuaranteeShare = pd.sgs
		r.ProposedIntegralShare = pd.pis
		if t.fnS[i] != nil {
			r.LimitedDemandShare = e.limitedDemand
		} else {
			r.LimitedDemandShare = Share{}
		}
		if i != 0 {
			splitShareInto(&r.FairShare, &e.fairShare, &pd.sgs, &pd.pis)
		}
		r.DominantResource = e.dominant
		r.Weight = e.weight
		r.ResourceDemand = e.demand
		r.ResourceUsage = e.usage
		r.ResourceLimits = e.limits
		r.EffectiveStrongGuaranteeResources = pd.effectiveSG
		r.TotalBurstRatio = pd.totalBurstRatio
		r.TotalResourceFlowRatio = pd.totalFlowRatio
		if e.kind == KindPool && pd.integral != GuaranteeNone {
			r.Integral = t.integralAttributes(e, r.Integral)
		} else {
			r.Integral = nil
		}
		r.Status = st.status
		r.StarvationStatus = st.starvation
		r.EffectiveFairShareStarvationTolerance = set.tolerance
		r.EffectiveFairShareStarvationTimeout = set.timeout
		r.BelowFairShareSince = st.since
		if i != 0 {
			r.Satisfaction = localSatisfaction(&e.usageShare, &e.fairShare, &e.demandShare)
		}
		r.FifoIndex = int(e.fifoIndex)
		r.NonPreemptibleJobCount, r.AggressivelyPreemptibleJobCount, r.PreemptibleJobCount = 0, 0, 0
		if e.kind == KindOperation && e.hasJobs {
			t.classifyJobs(e, r, r.Jobs) // counts them too
		} else {
			r.Jobs = nil
		}
		switch e.kind {
		case KindPool:
			ps := PoolState{BelowFairShareSince: st.since}
			if pd.integral != GuaranteeNone {
				ps.AccumulatedVolume = t.vol(e).volume
				ps.LastIntegralShareRatio = pd.lastShareRatio
			}
			if ps != (PoolState{}) {
				res.State.Pools[PoolID(t.names[i])] = ps
			}
		case KindOperation:
			if !st.since.IsZero() {
				t.prevSince[i] = st.since // the next state's entry, see below
				below = append(below, i)
			}
		}
	}
	root, r := &t.el[0], &res.Elements[0]
	root.fairShare = rootTotal
	rootIG := rootTotal.Sub(rootSG).Min(t.data(root).pis).ClampZero()
	r.FairShare = DetailedShare{
		StrongGuarantee:    rootSG,
		IntegralGuarantee:  rootIG,
		WeightProportional: rootTotal.Sub(rootSG).Sub(rootIG).ClampZero(),
		Total:              rootTotal,
	}
	r.Satisfaction = localSatisfaction(&root.usageShare, &root.fairShare, &root.demandShare)
	if ops == nil {
		ops = make([]OperationState, 0, len(below)) // never nil, like the pools' map
	}
	for _, i := range below {
		ops = append(ops, OperationState{ID: OperationID(t.names[i]), BelowFairShareSince: t.prevSince[i]})
	}
	if len(ops) < oldOps {
		clear(ops[len(ops):oldOps]) // reused memory keeps no old ids
	}
	res.State.Operations = ops
	t.scratchInts = below[:0]
}

// byStart orders jobs by start time, then id.
func byStart(a, b Job) int {
	if c := a.StartTime.Compare(b.StartTime); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// classifyJobs classifies an operation's running jobs in start order (into
// the memory of dst) and counts them by class.
func (t *tree) classifyJobs(e *element, r *ElementResult, dst []JobClassification) {
	jobs := t.op(e).Jobs
	if !slices.IsSortedFunc(jobs, byStart) {
		jobs = slices.Clone(jobs)
		slices.SortStableFunc(jobs, byStart)
	}
	r.Jobs = classifyJobsInto(dst, ClassifyInput{
		FairShare:           e.fairShare,
		Demand:              e.demandShare,
		Total:               t.total,
		AggressiveThreshold: t.cfg.AggressivePreemptionSatisfactionThreshold,
		Threshold:           t.cfg.PreemptionSatisfactionThreshold,
		UsageThreshold:      t.usageThreshold(e),
		Jobs:                jobs,
	})
	for _, j := range r.Jobs {
		switch j.Class {
		case NonPreemptible:
			r.NonPreemptibleJobCount++
		case AggressivelyPreemptible:
			r.AggressivelyPreemptibleJobCount++
		default:
			r.PreemptibleJobCount++
		}
	}
}

// integralAttributes returns a pool's integral attributes, in a (when not
// nil) or a new record.
func (t *tree) integralAttributes(e *element, a *IntegralAttributes) *IntegralAttributes {
	ig := t.pool(e).IntegralGuarantees
	if a == nil {
		a = new(IntegralAttributes)
	}
	est := a.EstimatedBurstUsageDurationSeconds
	*a = IntegralAttributes{
		GuaranteeType:                  t.data(e).integral,
		AccumulatedResourceVolume:      t.vol(e).volume,
		AccumulatedResourceRatioVolume: minRatio(t.vol(e).volume, t.total),
		IntegralPoolCapacity:           t.total.Scale(t.data(e).flowRatio).Round().Scale(t.cfg.Integral.PoolCapacitySaturationPeriod.Seconds()),
		SpecifiedBurstRatio:            maxRatio(ig.BurstGuaranteeResources.OrZero(), t.total),
		SpecifiedResourceFlowRatio:     t.data(e).flowRatio,
		LastShareRatio:                 t.data(e).lastShareRatio,
	}
	if t.data(e).integral == GuaranteeRelaxed {
		a.SpecifiedBurstRatio = 0
	}
	if d := a.SpecifiedBurstRatio - a.SpecifiedResourceFlowRatio; d > largeEpsilon {
		if est == nil {
			est = new(float64)
		}
		*est = a.AccumulatedResourceRatioVolume / d
		a.EstimatedBurstUsageDurationSeconds = est
	}
	return a
}

// usageThreshold is an operation's effective non-preemptible resource usage
// threshold: the nearest pool's setting (or the tree's), lowered per resource
// by the operation's own. Once any resource is set, absent ones are
// unlimited; an empty setting protects nothing.
func (t *tree) usageThreshold(e *element) Resources {
	setting := t.cfg.NonPreemptibleResourceUsageThreshold
	for i := e.parent; i > 0; i = t.el[i].parent {
		if p := t.pool(&t.el[i]).NonPreemptibleResourceUsageThreshold; p != nil {
			setting = *p
			break
		}
	}
	th := thresholdResources(setting)
	if o := t.op(e).NonPreemptibleResourceUsageThreshold; o != nil {
		th = th.Min(thresholdResources(*o))
	}
	return th
}

func thresholdResources(p PartialResources) Resources {
	if p.IsEmpty() {
		return Resources{}
	}
	return p.OrInfinite()
}
