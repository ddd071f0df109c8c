package scheduler

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// validateCase is an edit of a valid configuration or operation and what
// Validate says of the result: "" when it is valid, otherwise the whole message.
type validateCase[T any] struct {
	name string
	edit func(*T)
	err  string
}

// checkValidate runs one table of Validate cases (see checkError).
func checkValidate[T any](t *testing.T, sentinel error, cases []validateCase[T], base func() *T, validate func(*T) error) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := base()
			c.edit(v)
			checkError(t, "Validate", validate(v), sentinel, c.err)
		})
	}
}

// checkError checks what how returned: no error when want is "", otherwise
// an error wrapping sentinel whose whole message is want.
func checkError(t *testing.T, how string, err, sentinel error, want string) {
	t.Helper()
	got := ""
	if err != nil {
		got = err.Error()
		if !errors.Is(err, sentinel) {
			t.Errorf("%s: error %q does not wrap %v", how, got, sentinel)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s: message (-want +got):\n%s", how, d)
	}
}

// Every rule of TreeConfig.Validate, at the first value that breaks it and
// at the edge values it allows: the error wraps ErrInvalidConfig and names
// the field, the rule and the value.
func TestTreeConfigValidate(t *testing.T) {
	const pre = "scheduler: invalid configuration: tree "
	cases := []validateCase[TreeConfig]{
		{"defaults", func(*TreeConfig) {},
			""},
		{"main resource unknown", func(c *TreeConfig) { c.MainResource = NumResources },
			pre + "main_resource: unknown resource 5"},
		{"main resource negative", func(c *TreeConfig) { c.MainResource = -1 },
			pre + "main_resource: unknown resource -1"},
		{"main resource last", func(c *TreeConfig) { c.MainResource = NumResources - 1 },
			""},
		{"infer multiplier below 1", func(c *TreeConfig) { c.InferWeightFromGuaranteesShareMultiplier = ptr(0.5) },
			pre + "infer_weight_from_guarantees_share_multiplier: must be a finite number >= 1, got 0.5"},
		{"infer multiplier NaN", func(c *TreeConfig) { c.InferWeightFromGuaranteesShareMultiplier = ptr(math.NaN()) },
			pre + "infer_weight_from_guarantees_share_multiplier: must be a finite number >= 1, got NaN"},
		{"infer multiplier infinite", func(c *TreeConfig) { c.InferWeightFromGuaranteesShareMultiplier = ptr(math.Inf(1)) },
			pre + "infer_weight_from_guarantees_share_multiplier: must be a finite number >= 1, got +Inf"},
		{"infer multiplier 1", func(c *TreeConfig) { c.InferWeightFromGuaranteesShareMultiplier = ptr(1.0) },
			""},
		{"tolerance above 1", func(c *TreeConfig) { c.FairShareStarvationTolerance = 1.5 },
			pre + "fair_share_starvation_tolerance: must be in [0, 1], got 1.5"},
		{"tolerance negative", func(c *TreeConfig) { c.FairShareStarvationTolerance = -0.1 },
			pre + "fair_share_starvation_tolerance: must be in [0, 1], got -0.1"},
		{"tolerance NaN", func(c *TreeConfig) { c.FairShareStarvationTolerance = math.NaN() },
			pre + "fair_share_starvation_tolerance: must be in [0, 1], got NaN"},
		{"tolerance 0", func(c *TreeConfig) { c.FairShareStarvationTolerance = 0 },
			""},
		{"tolerance 1", func(c *TreeConfig) { c.FairShareStarvationTolerance = 1 },
			""},
		{"starvation timeout negative", func(c *TreeConfig) { c.FairShareStarvationTimeout = -time.Second },
			pre + "fair_share_starvation_timeout: must be >= 0, got -1s"},
		{"aggressive timeout below", func(c *TreeConfig) { c.FairShareAggressiveStarvationTimeout = 10 * time.Second },
			pre + "fair_share_aggressive_starvation_timeout: 10s is below fair_share_starvation_timeout 30s"},
		{"aggressive timeout equal", func(c *TreeConfig) { c.FairShareAggressiveStarvationTimeout = c.FairShareStarvationTimeout },
			""},
		{"preemption threshold 0", func(c *TreeConfig) { c.PreemptionSatisfactionThreshold = 0 },
			pre + "preemption_satisfaction_threshold: must be a finite number > 0, got 0"},
		{"preemption threshold infinite", func(c *TreeConfig) { c.PreemptionSatisfactionThreshold = math.Inf(1) },
			pre + "preemption_satisfaction_threshold: must be a finite number > 0, got +Inf"},
		{"aggressive threshold above", func(c *TreeConfig) { c.AggressivePreemptionSatisfactionThreshold = 1.1 },
			pre + "aggressive_preemption_satisfaction_threshold: must be in [0, preemption_satisfaction_threshold = 1], got 1.1"},
		{"aggressive threshold negative", func(c *TreeConfig) { c.AggressivePreemptionSatisfactionThreshold = -1 },
			pre + "aggressive_preemption_satisfaction_threshold: must be in [0, preemption_satisfaction_threshold = 1], got -1"},
		{"aggressive threshold equal", func(c *TreeConfig) { c.AggressivePreemptionSatisfactionThreshold = 1 },
			""},
		{"non-preemptible threshold NaN", func(c *TreeConfig) {
			c.NonPreemptibleResourceUsageThreshold = PartialResources{}.With(CPU, math.NaN())
		},
			pre + "non_preemptible_resource_usage_threshold: cpu " + AmountRule + ", got NaN"},
		{"timeout coefficient 0", func(c *TreeConfig) { c.AllocationCountPreemptionTimeoutCoefficient = 0 },
			pre + "allocation_count_preemption_timeout_coefficient: must be a finite number > 0, got 0"},
		{"max operation count negative", func(c *TreeConfig) { c.MaxOperationCount = -1 },
			pre + "max_operation_count: must be >= 0, got -1"},
		{"per-pool operations negative", func(c *TreeConfig) { c.MaxOperationCountPerPool = -1 },
			pre + "max_operation_count_per_pool: must be >= 0, got -1"},
		{"max running negative", func(c *TreeConfig) { c.MaxRunningOperationCount = -1 },
			pre + "max_running_operation_count: must be >= 0, got -1"},
		{"per-pool running negative", func(c *TreeConfig) { c.MaxRunningOperationCountPerPool = -1 },
			pre + "max_running_operation_count_per_pool: must be >= 0, got -1"},
		{"running above operations", func(c *TreeConfig) { c.MaxRunningOperationCount = c.MaxOperationCount + 1 },
			pre + "max_running_operation_count: 50001 is above max_operation_count 50000"},
		{"smooth period 0", func(c *TreeConfig) { c.Integral.SmoothPeriod = 0 },
			pre + "integral_guarantees.smooth_period: must be > 0, got 0s"},
		{"saturation period negative", func(c *TreeConfig) { c.Integral.PoolCapacitySaturationPeriod = -time.Hour },
			pre + "integral_guarantees.pool_capacity_saturation_period: must be > 0, got -1h0m0s"},
		{"relaxed multiplier below 1", func(c *TreeConfig) { c.Integral.RelaxedShareMultiplierLimit = 0.99 },
			pre + "integral_guarantees.relaxed_share_multiplier_limit: must be in [1, 10], got 0.99"},
		{"relaxed multiplier above 10", func(c *TreeConfig) { c.Integral.RelaxedShareMultiplierLimit = 10.5 },
			pre + "integral_guarantees.relaxed_share_multiplier_limit: must be in [1, 10], got 10.5"},
		{"relaxed multiplier 10", func(c *TreeConfig) { c.Integral.RelaxedShareMultiplierLimit = 10 },
			""},
		{"update period below 10ms", func(c *TreeConfig) { c.FairShareUpdatePeriod = 9 * time.Millisecond },
			pre + "fair_share_update_period: must be in [10ms, 60s], got 9ms"},
		{"update period above 60s", func(c *TreeConfig) { c.FairShareUpdatePeriod = time.Minute + 1 },
			pre + "fair_share_update_period: must be in [10ms, 60s], got 1m0.000000001s"},
		{"update period 10ms", func(c *TreeConfig) { c.FairShareUpdatePeriod = 10 * time.Millisecond },
			""},
		{"update period 60s", func(c *TreeConfig) { c.FairShareUpdatePeriod = time.Minute },
			""},
		{"preemptive backoff negative", func(c *TreeConfig) { c.PreemptiveSchedulingBackoff = -1 },
			pre + "preemptive_scheduling_backoff: must be >= 0, got -1ns"},
		{"preemption timeout negative", func(c *TreeConfig) { c.AllocationPreemptionTimeout = -1 },
			pre + "allocation_preemption_timeout: must be >= 0, got -1ns"},
		{"graceful timeout negative", func(c *TreeConfig) { c.AllocationGracefulPreemptionTimeout = -1 },
			pre + "allocation_graceful_preemption_timeout: must be >= 0, got -1ns"},
		{"every duration 0 but the period", func(c *TreeConfig) { *c = zeroDurations(*c) },
			""},
	}
	checkValidate(t, ErrInvalidConfig, cases, func() *TreeConfig {
		c := DefaultTreeConfig()
		return &c
	}, func(c *TreeConfig) error { return c.Validate() })
}

// zeroDurations is c with every duration that may be 0 set to 0.
func zeroDurations(c TreeConfig) TreeConfig {
	c.FairShareStarvationTimeout = 0
	c.FairShareAggressiveStarvationTimeout = 0
	c.PreemptiveSchedulingBackoff = 0
	c.AllocationPreemptionTimeout = 0
	c.AllocationGracefulPreemptionTimeout = 0
	return c
}

// Every rule of PoolConfig.Validate, as for the tree's.
func TestPoolConfigValidate(t *testing.T) {
	cpu := func(v float64) PartialResources { return PartialResources{}.With(CPU, v) }
	const pre = `scheduler: invalid configuration: pool "batch" `
	cases := []validateCase[PoolConfig]{
		{"plain", func(*PoolConfig) {},
			""},
		{"empty name", func(p *PoolConfig) { p.Name = "" },
			`scheduler: invalid configuration: pool name "" is reserved or empty`},
		{"root name", func(p *PoolConfig) { p.Name = RootID },
			`scheduler: invalid configuration: pool name "<Root>" is reserved or empty`},
		{"own parent", func(p *PoolConfig) { p.Parent = p.Name },
			pre + "parent: a pool cannot be its own parent"},
		{"weight below min", func(p *PoolConfig) { p.Weight = ptr(MinWeight / 2) },
			pre + "weight: must be a finite number in [1.4901161193847656e-08, 6.7108864e+07], got 7.450580596923828e-09"},
		{"weight above max", func(p *PoolConfig) { p.Weight = ptr(MaxWeight * 2) },
			pre + "weight: must be a finite number in [1.4901161193847656e-08, 6.7108864e+07], got 1.34217728e+08"},
		{"weight NaN", func(p *PoolConfig) { p.Weight = ptr(math.NaN()) },
			pre + "weight: must be a finite number in [1.4901161193847656e-08, 6.7108864e+07], got NaN"},
		{"weight min", func(p *PoolConfig) { p.Weight = ptr(MinWeight) },
			""},
		{"weight max", func(p *PoolConfig) { p.Weight = ptr(MaxWeight) },
			""},
		{"guarantee negative", func(p *PoolConfig) { p.StrongGuaranteeResources = cpu(-1) },
			pre + "strong_guarantee_resources: cpu " + AmountRule + ", got -1"},
		{"guarantee above max", func(p *PoolConfig) { p.StrongGuaranteeResources = cpu(MaxAmount * 2) },
			pre + "strong_guarantee_resources: cpu " + AmountRule + ", got 2e+18"},
		{"guarantee without main", func(p *PoolConfig) { p.StrongGuaranteeResources = PartialResources{}.With(GPU, 1) },
			pre + "strong_guarantee_resources: a guarantee must name the tree's main resource cpu"},
		{"guarantee with main", func(p *PoolConfig) { p.StrongGuaranteeResources = cpu(4).With(GPU, 1) },
			""},
		{"limit below min", func(p *PoolConfig) { p.ResourceLimits = cpu(MinAmount / 2) },
			pre + "resource_limits: cpu " + AmountRule + ", got 5e-10"},
		{"limit 0", func(p *PoolConfig) { p.ResourceLimits = cpu(0) },
			""},
		{"max running negative", func(p *PoolConfig) { p.MaxRunningOperationCount = ptr(-1) },
			pre + "max_running_operation_count: must be >= 0, got -1"},
		{"max operations negative", func(p *PoolConfig) { p.MaxOperationCount = ptr(-2) },
			pre + "max_operation_count: must be >= 0, got -2"},
		{"running above operations", func(p *PoolConfig) { p.MaxRunningOperationCount, p.MaxOperationCount = ptr(3), ptr(2) },
			pre + "max_running_operation_count: 3 is above max_operation_count 2"},
		{"running equal operations", func(p *PoolConfig) { p.MaxRunningOperationCount, p.MaxOperationCount = ptr(2), ptr(2) },
			""},
		{"tolerance above 1", func(p *PoolConfig) { p.FairShareStarvationTolerance = ptr(1.01) },
			pre + "fair_share_starvation_tolerance: must be in [0, 1], got 1.01"},
		{"tolerance infinite", func(p *PoolConfig) { p.FairShareStarvationTolerance = ptr(math.Inf(-1)) },
			pre + "fair_share_starvation_tolerance: must be in [0, 1], got -Inf"},
		{"starvation timeout negative", func(p *PoolConfig) { p.FairShareStarvationTimeout = ptr(-time.Millisecond) },
			pre + "fair_share_starvation_timeout: must be >= 0, got -1ms"},
		{"starvation timeout 0", func(p *PoolConfig) { p.FairShareStarvationTimeout = ptr(time.Duration(0)) },
			""},
		{"non-preemptible negative", func(p *PoolConfig) {
			th := PartialResources{}.With(UserSlots, -3)
			p.NonPreemptibleResourceUsageThreshold = &th
		},
			pre + "non_preemptible_resource_usage_threshold: user_slots " + AmountRule + ", got -3"},
		{"flow negative", func(p *PoolConfig) { p.IntegralGuarantees.ResourceFlow = cpu(-1) },
			pre + "integral_guarantees.resource_flow: cpu " + AmountRule + ", got -1"},
		{"burst infinite", func(p *PoolConfig) { p.IntegralGuarantees.BurstGuaranteeResources = cpu(math.Inf(1)) },
			pre + "integral_guarantees.burst_guarantee_resources: cpu " + AmountRule + ", got +Inf"},
		{"relaxed with burst", func(p *PoolConfig) {
			p.IntegralGuarantees.GuaranteeType = GuaranteeRelaxed
			p.IntegralGuarantees.BurstGuaranteeResources = cpu(1)
		},
			pre + "integral_guarantees.burst_guarantee_resources: a relaxed pool cannot have a burst guarantee"},
		{"burst with burst", func(p *PoolConfig) {
			p.IntegralGuarantees.GuaranteeType = GuaranteeBurst
			p.IntegralGuarantees.BurstGuaranteeResources = cpu(1)
		},
			""},
		{"relaxed multiplier below 1", func(p *PoolConfig) { p.IntegralGuarantees.RelaxedShareMultiplierLimit = ptr(0.0) },
			pre + "integral_guarantees.relaxed_share_multiplier_limit: must be in [1, 10], got 0"},
		{"relaxed multiplier 1", func(p *PoolConfig) { p.IntegralGuarantees.RelaxedShareMultiplierLimit = ptr(1.0) },
			""},
	}
	checkValidate(t, ErrInvalidConfig, cases, func() *PoolConfig {
		return &PoolConfig{Name: "batch", Parent: "prod"}
	}, func(pc *PoolConfig) error { return pc.Validate(CPU) })
}

// Every rule of Operation.Validate, as for the configurations; the error
// wraps ErrInvalidOperation.
func TestOperationValidate(t *testing.T) {
	const pre = `scheduler: invalid operation: operation "op-1" `
	cases := []validateCase[Operation]{
		{"plain", func(*Operation) {},
			""},
		{"empty id", func(o *Operation) { o.ID = "" },
			"scheduler: invalid operation: operation id is empty"},
		{"root id", func(o *Operation) { o.ID = RootID },
			`scheduler: invalid operation: operation id "<Root>" is reserved for the root`},
		{"weight 0", func(o *Operation) { o.Weight = ptr(0.0) },
			pre + "weight: must be a finite number in [1.4901161193847656e-08, 6.7108864e+07], got 0"},
		{"demand negative", func(o *Operation) { o.Demand[Memory] = -1 },
			pre + "demand: memory " + AmountRule + ", got -1"},
		{"demand NaN", func(o *Operation) { o.Demand[GPU] = math.NaN() },
			pre + "demand: gpu " + AmountRule + ", got NaN"},
		{"usage above max", func(o *Operation) { o.Usage[CPU] = MaxAmount * 10 },
			pre + "usage: cpu " + AmountRule + ", got 1e+19"},
		{"usage above demand", func(o *Operation) { o.Usage[CPU] = 100 },
			""}, // usage may exceed demand for a moment
		{"job resources below min", func(o *Operation) { o.JobResources[Network] = MinAmount / 10 },
			pre + "job_resources: network " + AmountRule + ", got 1e-10"},
		{"limits infinite", func(o *Operation) { o.ResourceLimits = PartialResources{}.With(CPU, math.Inf(1)) },
			pre + "resource_limits: cpu " + AmountRule + ", got +Inf"},
		{"pending jobs negative", func(o *Operation) { o.PendingJobCount = -1 },
			pre + "pending_job_count: must be >= 0, got -1"},
		{"tolerance negative", func(o *Operation) { o.FairShareStarvationTolerance = ptr(-0.5) },
			pre + "fair_share_starvation_tolerance: must be in [0, 1], got -0.5"},
		{"starvation timeout negative", func(o *Operation) { o.FairShareStarvationTimeout = ptr(-time.Second) },
			pre + "fair_share_starvation_timeout: must be >= 0, got -1s"},
		{"non-preemptible NaN", func(o *Operation) {
			th := PartialResources{}.With(Memory, math.NaN())
			o.NonPreemptibleResourceUsageThreshold = &th
		},
			pre + "non_preemptible_resource_usage_threshold: memory " + AmountRule + ", got NaN"},
		{"job usage negative", func(o *Operation) {
			o.Jobs = []Job{{ID: "j0", Usage: Resources{CPU: 1}}, {ID: "j1", Usage: Resources{UserSlots: -1}}}
		},
			pre + "jobs[1].usage: user_slots " + AmountRule + ", got -1"},
		{"jobs valid", func(o *Operation) { o.Jobs = []Job{{ID: "j0", Usage: Resources{CPU: 1, UserSlots: 1}}} },
			""},
	}
	checkValidate(t, ErrInvalidOperation, cases, func() *Operation {
		return &Operation{ID: "op-1", Pool: "batch", Demand: Resources{CPU: 4, Memory: 8 << 30, UserSlots: 4}, Usage: Resources{CPU: 2, UserSlots: 2}}
	}, func(o *Operation) error { return o.Validate() })
}
