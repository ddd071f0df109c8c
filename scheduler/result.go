package scheduler

import (
	"sync"
	"time"
)

// DetailedShare splits a fair share into what strong guarantees, integral
// guarantees and weights contributed. Total = StrongGuarantee +
// IntegralGuarantee + WeightProportional.
type DetailedShare struct {
	StrongGuarantee    Share
	IntegralGuarantee  Share
	WeightProportional Share
	Total              Share
}

// Status says whether an element gets less than its fair share.
type Status int

const (
	// StatusNormal: usage is not below tolerance × fair share.
	StatusNormal Status = iota
	// StatusBelowFairShare: usage is below tolerance × fair share.
	StatusBelowFairShare
)

// String returns "normal" or "below_fair_share".
func (s Status) String() string {
	if s == StatusBelowFairShare {
		return "below_fair_share"
	}
	return "normal"
}

// StarvationStatus says how long an element has been below its fair share.
type StarvationStatus int

const (
	// NonStarving: not below fair share, or not for long enough.
	NonStarving StarvationStatus = iota
	// Starving: below fair share for longer than the starvation timeout.
	Starving
	// AggressivelyStarving: below fair share for longer than the aggressive
	// timeout, with aggressive starvation enabled.
	AggressivelyStarving
)

// String returns "non_starving", "starving" or "aggressively_starving".
func (s StarvationStatus) String() string {
	switch s {
	case Starving:
		return "starving"
	case AggressivelyStarving:
		return "aggressively_starving"
	default:
		return "non_starving"
	}
}

// IntegralAttributes are reported for pools whose guarantee type is burst or
// relaxed.
type IntegralAttributes struct {
	GuaranteeType GuaranteeType
	// AccumulatedResourceVolume is the volume after this update,
	// resource*seconds.
	AccumulatedResourceVolume Resources
	// AccumulatedResourceRatioVolume is min over resources with a positive
	// total of volume/total: cluster-share*seconds.
	AccumulatedResourceRatioVolume float64
	// IntegralPoolCapacity is round(total × flow ratio) × saturation period.
	IntegralPoolCapacity Resources
	// SpecifiedBurstRatio and SpecifiedResourceFlowRatio are the configured
	// burst guarantee and flow as scalar shares of the cluster.
	SpecifiedBurstRatio        float64
	SpecifiedResourceFlowRatio float64
	// EstimatedBurstUsageDurationSeconds is how long the volume lasts while
	// the pool consumes its burst guarantee; nil when burst <= flow.
	EstimatedBurstUsageDurationSeconds *float64
	// LastShareRatio is the integral share granted in this update (consumed
	// from the volume by the next one).
	LastShareRatio float64
}

// ElementResult is everything one update computed for one element.
type ElementResult struct {
	Kind ElementKind
	// Name is the pool name, the operation id, or RootID.
	Name string
	// Parent is the parent's name ("" for the root).
	Parent string
	// Depth is 0 for the root.
	Depth int

	DemandShare, UsageShare, LimitsShare, StrongGuaranteeShare Share
	// ProposedIntegralShare is the integral guarantee granted to the element
	// (pushed up to ancestors as well).
	ProposedIntegralShare Share
	// LimitedDemandShare is what the element would get with every suggestion
	// at 1: its demand within its limits.
	LimitedDemandShare Share
	FairShare          DetailedShare
	DominantResource   ResourceType
	// Weight is the effective weight (explicit, 1, or inferred).
	Weight float64

	ResourceDemand, ResourceUsage, ResourceLimits Resources
	// EffectiveStrongGuaranteeResources is the guarantee after main-resource
	// inference (root and pools).
	EffectiveStrongGuaranteeResources Resources

	// TotalBurstRatio and TotalResourceFlowRatio are subtree sums (root and
	// pools).
	TotalBurstRatio, TotalResourceFlowRatio float64
	// Integral is set for burst and relaxed pools.
	Integral *IntegralAttributes

	Status                                Status
	StarvationStatus                      StarvationStatus
	EffectiveFairShareStarvationTolerance float64
	EffectiveFairShareStarvationTimeout   time.Duration
	// BelowFairShareSince is zero when the element is not below its fair share.
	BelowFairShareSince time.Time
	// Satisfaction is usage relative to fair share (see LocalSatisfaction).
	Satisfaction float64
	// FifoIndex is an operation's position in its fifo pool (0 elsewhere).
	FifoIndex int

	// Jobs classifies an operation's running jobs (empty when none were
	// given).
	Jobs []JobClassification
	// Preemption counts of the jobs by class.
	NonPreemptibleJobCount, AggressivelyPreemptibleJobCount, PreemptibleJobCount int
}

// AlertCode identifies a tree-level problem found during an update.
type AlertCode string

const (
	// AlertGuaranteesOvercommit: strong guarantees plus integral flows or
	// burst guarantees of the root's children exceed the cluster.
	AlertGuaranteesOvercommit AlertCode = "pool_tree_guarantees_overcommit"
)

// Alert is a tree-level problem: the update still completes.
type Alert struct {
	Code    AlertCode
	Message string
}

// Result is the outcome of one fair-share update.
type Result struct {
	// Now is the update's time.
	Now time.Time
	// Total is the cluster total the shares are fractions of.
	Total Resources
	// Elements are the root, then every pool and operation in depth-first
	// pre-order.
	Elements []ElementResult
	// Alerts found during the update, in the order found.
	Alerts []Alert
	// State is what the next update needs.
	State State

	indexOnce sync.Once
	index     map[string]int
}

// Element returns the result of the element with the given name (RootID for
// the root).
func (r *Result) Element(name string) (*ElementResult, bool) {
	r.indexOnce.Do(func() {
		r.index = make(map[string]int, len(r.Elements))
		for i := range r.Elements {
			if _, dup := r.index[r.Elements[i].Name]; !dup {
				r.index[r.Elements[i].Name] = i
			}
		}
	})
	i, ok := r.index[name]
	if !ok {
		return nil, false
	}
	return &r.Elements[i], true
}
