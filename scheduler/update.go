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
func Update(snap *Snapshot, prev *State) (*Result, error) {
	if prev == nil {
		prev = &State{}
	}
	if !prev.LastUpdate.IsZero() && snap.Now.Before(prev.LastUpdate) {
		return nil, fmt.Errorf("%w: update time %s is before the previous update %s", ErrInvalidConfig,
			snap.Now.Format("2006-01-02T15:04:05.000Z07:00"), prev.LastUpdate.Format("2006-01-02T15:04:05.000Z07:00"))
	}
	t, err := buildTree(snap)
	if err != nil {
		return nil, err
	}
	t.inferStrongGuarantees()
	t.computeAttributes(snap.Cluster.Nodes)
	burst, relaxed := t.integralLists()
	integral := append(append([]int(nil), burst...), relaxed...)
	for _, i := range integral {
		e := t.elements[i]
		ps := prev.Pools[PoolID(e.name)]
		e.vol.volume = ps.AccumulatedVolume
		e.lastShareRatio = ps.LastIntegralShareRatio
	}
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
	t.splitFairShares()
	t.inheritStarvationSettings()
	t.computeStatuses(snap.Now, prev)
	return t.result(snap, alerts), nil
}

func (t *tree) result(snap *Snapshot, alerts []Alert) *Result {
	res := &Result{
		Now:      snap.Now,
		Total:    t.total,
		Elements: make([]ElementResult, len(t.elements)),
		Alerts:   alerts,
		State: State{
			LastUpdate: snap.Now,
			Pools:      make(map[PoolID]PoolState),
			Operations: make(map[OperationID]OperationState),
		},
	}
	for i, e := range t.elements {
		r := &res.Elements[i]
		*r = ElementResult{
			Kind:                                  e.kind,
			Name:                                  e.name,
			Depth:                                 e.depth,
			DemandShare:                           e.demandShare,
			UsageShare:                            e.usageShare,
			LimitsShare:                           e.limitsShare,
			StrongGuaranteeShare:                  e.sgs,
			ProposedIntegralShare:                 e.pis,
			FairShare:                             e.detailed,
			DominantResource:                      e.dominant,
			Weight:                                e.weight,
			ResourceDemand:                        e.demand,
			ResourceUsage:                         e.usage,
			ResourceLimits:                        e.limits,
			Status:                                e.status,
			StarvationStatus:                      e.starvation,
			EffectiveFairShareStarvationTolerance: e.tolerance,
			EffectiveFairShareStarvationTimeout:   e.starvationTimeout,
			BelowFairShareSince:                   e.belowFairShareTime,
			Satisfaction:                          LocalSatisfaction(e.usageShare, e.fairShare, e.demandShare),
			FifoIndex:                             e.fifoIndex,
		}
		if e.fnS != nil {
			r.LimitedDemandShare = e.fnS.at(1)
		}
		if e.parent >= 0 {
			r.Parent = t.elements[e.parent].name
		}
		if e.kind != KindOperation {
			r.EffectiveStrongGuaranteeResources = e.effectiveSG
			r.TotalBurstRatio = e.totalBurstRatio
			r.TotalResourceFlowRatio = e.totalFlowRatio
		}
		switch e.kind {
		case KindPool:
			ps := PoolState{BelowFairShareSince: e.belowFairShareTime}
			if e.integral != GuaranteeNone {
				ps.AccumulatedVolume = e.vol.volume
				ps.LastIntegralShareRatio = e.lastShareRatio
				r.Integral = t.integralAttributes(e)
			}
			if ps != (PoolState{}) {
				res.State.Pools[PoolID(e.name)] = ps
			}
		case KindOperation:
			if !e.belowFairShareTime.IsZero() {
				res.State.Operations[OperationID(e.name)] = OperationState{BelowFairShareSince: e.belowFairShareTime}
			}
			if len(e.op.Jobs) > 0 {
				jobs := slices.Clone(e.op.Jobs)
				slices.SortStableFunc(jobs, func(a, b Job) int {
					if c := a.StartTime.Compare(b.StartTime); c != 0 {
						return c
					}
					return strings.Compare(a.ID, b.ID)
				})
				r.Jobs = ClassifyJobs(ClassifyInput{
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
		}
	}
	return res
}

func (t *tree) integralAttributes(e *element) *IntegralAttributes {
	ig := e.pool.IntegralGuarantees
	a := &IntegralAttributes{
		GuaranteeType:                  e.integral,
		AccumulatedResourceVolume:      e.vol.volume,
		AccumulatedResourceRatioVolume: minRatio(e.vol.volume, t.total),
		IntegralPoolCapacity:           t.total.Scale(e.flowRatio).Round().Scale(t.cfg.Integral.PoolCapacitySaturationPeriod.Seconds()),
		SpecifiedBurstRatio:            maxRatio(ig.BurstGuaranteeResources.OrZero(), t.total),
		SpecifiedResourceFlowRatio:     e.flowRatio,
		LastShareRatio:                 e.lastShareRatio,
	}
	if e.integral == GuaranteeRelaxed {
		a.SpecifiedBurstRatio = 0
	}
	if d := a.SpecifiedBurstRatio - a.SpecifiedResourceFlowRatio; d > largeEpsilon {
		v := a.AccumulatedResourceRatioVolume / d
		a.EstimatedBurstUsageDurationSeconds = &v
	}
	return a
}

// usageThreshold is an operation's effective non-preemptible resource usage
// threshold: the nearest pool's setting (or the tree's), lowered per resource
// by the operation's own. Once any resource is set, absent ones are
// unlimited; an empty setting protects nothing.
func (t *tree) usageThreshold(e *element) Resources {
	setting := t.cfg.NonPreemptibleResourceUsageThreshold
	for i := e.parent; i > 0; i = t.elements[i].parent {
		if p := t.elements[i].pool.NonPreemptibleResourceUsageThreshold; p != nil {
			setting = *p
			break
		}
	}
	th := thresholdResources(setting)
	if o := e.op.NonPreemptibleResourceUsageThreshold; o != nil {
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
