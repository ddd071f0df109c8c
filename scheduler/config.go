package scheduler

import (
	"fmt"
	"math"
	"time"
)

// Mode is how a pool divides its share among its children.
type Mode int

const (
	// ModeFairShare divides by weights (vector HDRF).
	ModeFairShare Mode = iota
	// ModeFIFO serves operations one after another in fifo_sort_parameters
	// order.
	ModeFIFO
)

// String returns "fair_share" or "fifo".
func (m Mode) String() string {
	if m == ModeFIFO {
		return "fifo"
	}
	return "fair_share"
}

// ParseMode maps "fair_share" or "fifo" to a Mode.
func ParseMode(name string) (Mode, error) {
	for _, m := range []Mode{ModeFairShare, ModeFIFO} {
		if m.String() == name {
			return m, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown mode %q (want fair_share or fifo)", ErrInvalidConfig, name)
}

// GuaranteeType is the kind of a pool's integral guarantee.
type GuaranteeType int

const (
	// GuaranteeNone: not an integral pool.
	GuaranteeNone GuaranteeType = iota
	// GuaranteeBurst: served first, up to burst_guarantee_resources while the
	// accumulated volume lasts.
	GuaranteeBurst
	// GuaranteeRelaxed: shares what guarantees leave free, weighted by volume.
	GuaranteeRelaxed
)

// String returns "none", "burst" or "relaxed".
func (g GuaranteeType) String() string {
	switch g {
	case GuaranteeBurst:
		return "burst"
	case GuaranteeRelaxed:
		return "relaxed"
	default:
		return "none"
	}
}

// ParseGuaranteeType maps "none", "burst" or "relaxed" to a GuaranteeType.
func ParseGuaranteeType(name string) (GuaranteeType, error) {
	for _, g := range []GuaranteeType{GuaranteeNone, GuaranteeBurst, GuaranteeRelaxed} {
		if g.String() == name {
			return g, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown guarantee_type %q (want none, burst or relaxed)", ErrInvalidConfig, name)
}

// FifoSortParameter is one key of a fifo pool's operation order.
type FifoSortParameter int

const (
	// FifoSortWeight: higher weight first.
	FifoSortWeight FifoSortParameter = iota
	// FifoSortStartTime: earlier start first.
	FifoSortStartTime
	// FifoSortPendingJobCount: fewer pending jobs first.
	FifoSortPendingJobCount
)

// String returns the wire name of the parameter.
func (p FifoSortParameter) String() string {
	switch p {
	case FifoSortStartTime:
		return "start_time"
	case FifoSortPendingJobCount:
		return "pending_job_count"
	default:
		return "weight"
	}
}

// ParseFifoSortParameter maps "weight", "start_time" or "pending_job_count"
// (alias "pending_allocation_count") to a FifoSortParameter.
func ParseFifoSortParameter(name string) (FifoSortParameter, error) {
	if name == "pending_allocation_count" {
		return FifoSortPendingJobCount, nil
	}
	for _, p := range []FifoSortParameter{FifoSortWeight, FifoSortStartTime, FifoSortPendingJobCount} {
		if p.String() == name {
			return p, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown fifo sort parameter %q (want weight, start_time or pending_job_count)", ErrInvalidConfig, name)
}

// Weight bounds for explicitly configured weights: [sqrt(eps), 1/sqrt(eps)].
var (
	MinWeight = math.Sqrt(2.220446049250313e-16)
	MaxWeight = 1 / math.Sqrt(2.220446049250313e-16)
)

// IntegralTreeConfig holds a tree's integral-guarantee settings.
type IntegralTreeConfig struct {
	// SmoothPeriod: the period over which a pool's accumulated volume is turned
	// into a share (ratio by volume = volume / total / smooth period).
	// Default 1 minute.
	SmoothPeriod time.Duration
	// PoolCapacitySaturationPeriod: a pool's volume capacity is its flow
	// times this period. Default 24 hours.
	PoolCapacitySaturationPeriod time.Duration
	// RelaxedShareMultiplierLimit: a relaxed pool gets at most this multiple of
	// its flow ratio. Default 3, range [1, 10].
	RelaxedShareMultiplierLimit float64
	// ShouldDistributeFreeVolumeAmongChildren: whether non-integral pools hand
	// their children's overflowing volume to hungry siblings. Default false.
	ShouldDistributeFreeVolumeAmongChildren bool
}

// TreeConfig is a pool tree's configuration. Build one with
// [DefaultTreeConfig] and change fields; [TreeConfig.Validate] checks it.
type TreeConfig struct {
	// MainResource: guarantees must name it; other resources are inferred
	// proportionally to it. Default cpu.
	MainResource ResourceType
	// InferWeightFromGuaranteesShareMultiplier: when set (>= 1), a pool
	// without an explicit weight gets weight = multiplier × its guarantee
	// share / its parent's guarantee share. Nil: unset.
	InferWeightFromGuaranteesShareMultiplier *float64
	// FairShareStarvationTolerance: an element is below its fair share when
	// usage is below tolerance × fair share. Default 0.8, range [0, 1].
	FairShareStarvationTolerance float64
	// FairShareStarvationTimeout: how long an element must stay below its fair
	// share to be starving. Default 30 s.
	FairShareStarvationTimeout time.Duration
	// FairShareAggressiveStarvationTimeout: the same for aggressive
	// starvation; must be >= the starvation timeout. Default 120 s.
	FairShareAggressiveStarvationTimeout time.Duration
	// EnableAggressiveStarvation: the root's value of the inherited pool
	// option. Default false.
	EnableAggressiveStarvation bool
	// EnablePoolStarvation: whether pools (not only operations) get a
	// starvation status. Default true.
	EnablePoolStarvation bool
	// PreemptionSatisfactionThreshold: jobs of an operation beyond
	// threshold × fair share are preemptible. Default 1.0, > 0.
	PreemptionSatisfactionThreshold float64
	// AggressivePreemptionSatisfactionThreshold: jobs beyond threshold × fair
	// share are aggressively preemptible. Default 0.2, in [0, preemption
	// threshold].
	AggressivePreemptionSatisfactionThreshold float64
	// NonPreemptibleResourceUsageThreshold: an operation's jobs are never
	// preemptible while its usage is strictly below this. Absent resources are
	// unlimited once any is set; empty means zero (no protection).
	NonPreemptibleResourceUsageThreshold PartialResources
	// AllocationCountPreemptionTimeoutCoefficient: an operation's starvation
	// timeouts are scaled by min(1, pending jobs / coefficient). Default 1.
	AllocationCountPreemptionTimeoutCoefficient float64
	// MaxOperationCount: running + pending operations in the whole tree.
	// Default 50000.
	MaxOperationCount int
	// MaxOperationCountPerPool: default max_operation_count of a pool.
	// Default 50.
	MaxOperationCountPerPool int
	// MaxRunningOperationCount: running operations in the whole tree.
	// Default 2000.
	MaxRunningOperationCount int
	// MaxRunningOperationCountPerPool: default max_running_operation_count of
	// a pool. Default 8 (the pool-tree documentation's default).
	MaxRunningOperationCountPerPool int
	// DefaultParentPool: the pool under which the running scheduler creates a
	// user's ephemeral pool for a submission that names no pool. "" is the
	// root. The engine and Admission do not read it: to them an operation
	// whose Pool is "" is in the root.
	DefaultParentPool PoolID
	// EnableStepFunctionForGangOperations: gang operations get all of their
	// demand or nothing. Default false.
	EnableStepFunctionForGangOperations bool
	// Integral: integral-guarantee settings.
	Integral IntegralTreeConfig
	// FairShareUpdatePeriod: how often the running scheduler recomputes fair
	// shares. Default 200 ms, range [10 ms, 60 s]. Not used by the engine.
	FairShareUpdatePeriod time.Duration
	// PreemptiveSchedulingBackoff: the minimum time between preemptive
	// scheduling passes on one node. Default 5 s.
	PreemptiveSchedulingBackoff time.Duration
	// AllocationPreemptionTimeout: how long an interrupted job may take to
	// finish before it is aborted. Default 10 s.
	AllocationPreemptionTimeout time.Duration
	// AllocationGracefulPreemptionTimeout: the same for graceful preemption.
	// Default 60 s.
	AllocationGracefulPreemptionTimeout time.Duration
}

// DefaultTreeConfig returns the reference's defaults.
func DefaultTreeConfig() TreeConfig {
	return TreeConfig{
		MainResource:                                CPU,
		FairShareStarvationTolerance:                0.8,
		FairShareStarvationTimeout:                  30 * time.Second,
		FairShareAggressiveStarvationTimeout:        120 * time.Second,
		EnablePoolStarvation:                        true,
		PreemptionSatisfactionThreshold:             1.0,
		AggressivePreemptionSatisfactionThreshold:   0.2,
		AllocationCountPreemptionTimeoutCoefficient: 1.0,
		MaxOperationCount:                           50000,
		MaxOperationCountPerPool:                    50,
		MaxRunningOperationCount:                    2000,
		MaxRunningOperationCountPerPool:             8,
		Integral: IntegralTreeConfig{
			SmoothPeriod:                 time.Minute,
			PoolCapacitySaturationPeriod: 24 * time.Hour,
			RelaxedShareMultiplierLimit:  3,
		},
		FairShareUpdatePeriod:               200 * time.Millisecond,
		PreemptiveSchedulingBackoff:         5 * time.Second,
		AllocationPreemptionTimeout:         10 * time.Second,
		AllocationGracefulPreemptionTimeout: 60 * time.Second,
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func validResources(p PartialResources) error {
	for r := range NumResources {
		if !p.Set.Has(ResourceType(r)) {
			continue
		}
		if v := p.Values[r]; !ValidAmount(v) {
			return fmt.Errorf("%s %s, got %g", ResourceType(r), AmountRule, v)
		}
	}
	return nil
}

// Validate checks every rule of the tree configuration and names the first
// field that breaks one.
func (c *TreeConfig) Validate() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: tree %s: %s", ErrInvalidConfig, field, fmt.Sprintf(format, args...))
	}
	if c.MainResource < 0 || int(c.MainResource) >= NumResources {
		return bad("main_resource", "unknown resource %d", int(c.MainResource))
	}
	if m := c.InferWeightFromGuaranteesShareMultiplier; m != nil && (!finite(*m) || *m < 1) {
		return bad("infer_weight_from_guarantees_share_multiplier", "must be a finite number >= 1, got %g", *m)
	}
	if t := c.FairShareStarvationTolerance; !finite(t) || t < 0 || t > 1 {
		return bad("fair_share_starvation_tolerance", "must be in [0, 1], got %g", t)
	}
	if c.FairShareStarvationTimeout < 0 {
		return bad("fair_share_starvation_timeout", "must be >= 0, got %s", c.FairShareStarvationTimeout)
	}
	if c.FairShareAggressiveStarvationTimeout < c.FairShareStarvationTimeout {
		return bad("fair_share_aggressive_starvation_timeout", "%s is below fair_share_starvation_timeout %s",
			c.FairShareAggressiveStarvationTimeout, c.FairShareStarvationTimeout)
	}
	if t := c.PreemptionSatisfactionThreshold; !finite(t) || t <= 0 {
		return bad("preemption_satisfaction_threshold", "must be a finite number > 0, got %g", t)
	}
	if t := c.AggressivePreemptionSatisfactionThreshold; !finite(t) || t < 0 || t > c.PreemptionSatisfactionThreshold {
		return bad("aggressive_preemption_satisfaction_threshold", "must be in [0, preemption_satisfaction_threshold = %g], got %g",
			c.PreemptionSatisfactionThreshold, t)
	}
	if err := validResources(c.NonPreemptibleResourceUsageThreshold); err != nil {
		return bad("non_preemptible_resource_usage_threshold", "%v", err)
	}
	if k := c.AllocationCountPreemptionTimeoutCoefficient; !finite(k) || k <= 0 {
		return bad("allocation_count_preemption_timeout_coefficient", "must be a finite number > 0, got %g", k)
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"max_operation_count", c.MaxOperationCount},
		{"max_operation_count_per_pool", c.MaxOperationCountPerPool},
		{"max_running_operation_count", c.MaxRunningOperationCount},
		{"max_running_operation_count_per_pool", c.MaxRunningOperationCountPerPool},
	} {
		if f.v < 0 {
			return bad(f.name, "must be >= 0, got %d", f.v)
		}
	}
	if c.MaxRunningOperationCount > c.MaxOperationCount {
		return bad("max_running_operation_count", "%d is above max_operation_count %d", c.MaxRunningOperationCount, c.MaxOperationCount)
	}
	ig := c.Integral
	if ig.SmoothPeriod <= 0 {
		return bad("integral_guarantees.smooth_period", "must be > 0, got %s", ig.SmoothPeriod)
	}
	if ig.PoolCapacitySaturationPeriod <= 0 {
		return bad("integral_guarantees.pool_capacity_saturation_period", "must be > 0, got %s", ig.PoolCapacitySaturationPeriod)
	}
	if m := ig.RelaxedShareMultiplierLimit; !finite(m) || m < 1 || m > 10 {
		return bad("integral_guarantees.relaxed_share_multiplier_limit", "must be in [1, 10], got %g", m)
	}
	if p := c.FairShareUpdatePeriod; p < 10*time.Millisecond || p > time.Minute {
		return bad("fair_share_update_period", "must be in [10ms, 60s], got %s", p)
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{
		{"preemptive_scheduling_backoff", c.PreemptiveSchedulingBackoff},
		{"allocation_preemption_timeout", c.AllocationPreemptionTimeout},
		{"allocation_graceful_preemption_timeout", c.AllocationGracefulPreemptionTimeout},
	} {
		if f.v < 0 {
			return bad(f.name, "must be >= 0, got %s", f.v)
		}
	}
	return nil
}

// IntegralGuarantees is a pool's integral-guarantee configuration.
type IntegralGuarantees struct {
	// GuaranteeType: none, burst or relaxed. Default none.
	GuaranteeType GuaranteeType
	// ResourceFlow: resources per second added to the accumulated volume.
	ResourceFlow PartialResources
	// BurstGuaranteeResources: what a burst pool is guaranteed while its
	// volume lasts. Burst pools only.
	BurstGuaranteeResources PartialResources
	// RelaxedShareMultiplierLimit overrides the tree's value. Range [1, 10].
	RelaxedShareMultiplierLimit *float64
	// CanAcceptFreeVolume: whether the pool accepts volume overflowing from
	// siblings. Nil: true.
	CanAcceptFreeVolume *bool
	// ShouldDistributeFreeVolumeAmongChildren overrides the tree's value for
	// this pool.
	ShouldDistributeFreeVolumeAmongChildren *bool
}

// PoolConfig is one pool's configuration. Nil pointers mean "unset": the
// value is inherited from the parent or taken from the tree's default.
type PoolConfig struct {
	// Name is unique in the tree; it must not be empty or "<Root>".
	Name PoolID
	// Parent is the parent pool; "" is the root.
	Parent PoolID
	// Weight: explicit weight in [MinWeight, MaxWeight]. Nil: 1, or inferred
	// from guarantees when the tree sets the multiplier.
	Weight *float64
	// Mode: fair_share (default) or fifo.
	Mode Mode
	// StrongGuaranteeResources: the pool's strong guarantee; absent resources
	// are inferred from the tree's main resource.
	StrongGuaranteeResources PartialResources
	// ResourceLimits: absent resources are unlimited.
	ResourceLimits PartialResources
	// MaxRunningOperationCount: nil means the tree's per-pool default.
	MaxRunningOperationCount *int
	// MaxOperationCount: nil means the tree's per-pool default.
	MaxOperationCount *int
	// FifoSortParameters: order of a fifo pool's operations. Empty means
	// [weight, start_time].
	FifoSortParameters []FifoSortParameter
	// FairShareStarvationTolerance: nil inherits.
	FairShareStarvationTolerance *float64
	// FairShareStarvationTimeout: nil inherits.
	FairShareStarvationTimeout *time.Duration
	// EnableAggressiveStarvation: nil inherits.
	EnableAggressiveStarvation *bool
	// NonPreemptibleResourceUsageThreshold: nil inherits the tree's.
	NonPreemptibleResourceUsageThreshold *PartialResources
	// IntegralGuarantees: the pool's integral guarantee.
	IntegralGuarantees IntegralGuarantees
	// EnableLightweightOperations: vanilla operations in this pool, when it
	// is a fifo pool, are lightweight: they count toward
	// max_operation_count but neither use nor wait for a running slot, and
	// are counted in lightweight_running_operation_count instead. Default
	// false.
	EnableLightweightOperations bool
}

// Validate checks the rules that concern one pool on its own (tree-wide
// rules, such as children's guarantees within their parent's, are checked when
// the tree is built). mainResource is the tree's main resource.
func (p *PoolConfig) Validate(mainResource ResourceType) error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: pool %q %s: %s", ErrInvalidConfig, p.Name, field, fmt.Sprintf(format, args...))
	}
	if p.Name == "" || p.Name == RootID {
		return fmt.Errorf("%w: pool name %q is reserved or empty", ErrInvalidConfig, p.Name)
	}
	if p.Parent == p.Name {
		return bad("parent", "a pool cannot be its own parent")
	}
	if w := p.Weight; w != nil && (!finite(*w) || *w < MinWeight || *w > MaxWeight) {
		return bad("weight", "must be a finite number in [%g, %g], got %g", MinWeight, MaxWeight, *w)
	}
	if err := validResources(p.StrongGuaranteeResources); err != nil {
		return bad("strong_guarantee_resources", "%v", err)
	}
	if err := validResources(p.ResourceLimits); err != nil {
		return bad("resource_limits", "%v", err)
	}
	if v := p.MaxRunningOperationCount; v != nil && *v < 0 {
		return bad("max_running_operation_count", "must be >= 0, got %d", *v)
	}
	if v := p.MaxOperationCount; v != nil && *v < 0 {
		return bad("max_operation_count", "must be >= 0, got %d", *v)
	}
	if p.MaxRunningOperationCount != nil && p.MaxOperationCount != nil && *p.MaxRunningOperationCount > *p.MaxOperationCount {
		return bad("max_running_operation_count", "%d is above max_operation_count %d", *p.MaxRunningOperationCount, *p.MaxOperationCount)
	}
	if t := p.FairShareStarvationTolerance; t != nil && (!finite(*t) || *t < 0 || *t > 1) {
		return bad("fair_share_starvation_tolerance", "must be in [0, 1], got %g", *t)
	}
	if t := p.FairShareStarvationTimeout; t != nil && *t < 0 {
		return bad("fair_share_starvation_timeout", "must be >= 0, got %s", *t)
	}
	if t := p.NonPreemptibleResourceUsageThreshold; t != nil {
		if err := validResources(*t); err != nil {
			return bad("non_preemptible_resource_usage_threshold", "%v", err)
		}
	}
	ig := p.IntegralGuarantees
	if err := validResources(ig.ResourceFlow); err != nil {
		return bad("integral_guarantees.resource_flow", "%v", err)
	}
	if err := validResources(ig.BurstGuaranteeResources); err != nil {
		return bad("integral_guarantees.burst_guarantee_resources", "%v", err)
	}
	if ig.GuaranteeType == GuaranteeRelaxed && !ig.BurstGuaranteeResources.IsEmpty() {
		return bad("integral_guarantees.burst_guarantee_resources", "a relaxed pool cannot have a burst guarantee")
	}
	if m := ig.RelaxedShareMultiplierLimit; m != nil && (!finite(*m) || *m < 1 || *m > 10) {
		return bad("integral_guarantees.relaxed_share_multiplier_limit", "must be in [1, 10], got %g", *m)
	}
	if !p.StrongGuaranteeResources.IsEmpty() && !p.StrongGuaranteeResources.Set.Has(mainResource) {
		return bad("strong_guarantee_resources", "a guarantee must name the tree's main resource %s", mainResource)
	}
	return nil
}
