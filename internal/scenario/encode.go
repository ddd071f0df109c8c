package scenario

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sharetree/sharetree/scheduler"
)

// EncodeTreeDoc returns the canonical key map of a tree configuration: the
// keys in doc.Keys (aliases under their canonical names) with their values
// as JSON-ready Go values (durations as strings such as "30s", resources as
// numbers, integral_guarantees as a nested map of the sub-keys given).
// Parsing the JSON of the map with ParseTreeDoc gives doc back.
func EncodeTreeDoc(doc TreeDoc) map[string]any {
	out := make(map[string]any, len(doc.Keys))
	c, o := &doc.Config, &doc.Options
	for _, k := range doc.Keys {
		if sub, ok := strings.CutPrefix(k, "integral_guarantees."); ok {
			ig, _ := out["integral_guarantees"].(map[string]any)
			if ig == nil {
				ig = map[string]any{}
				out["integral_guarantees"] = ig
			}
			switch sub {
			case "smooth_period":
				ig[sub] = duration(c.Integral.SmoothPeriod)
			case "pool_capacity_saturation_period":
				ig[sub] = duration(c.Integral.PoolCapacitySaturationPeriod)
			case "relaxed_share_multiplier_limit":
				ig[sub] = c.Integral.RelaxedShareMultiplierLimit
			case "should_distribute_free_volume_among_children":
				ig[sub] = c.Integral.ShouldDistributeFreeVolumeAmongChildren
			}
			continue
		}
		var v any
		switch k {
		case "main_resource":
			v = c.MainResource.String()
		case "infer_weight_from_guarantees_share_multiplier":
			if c.InferWeightFromGuaranteesShareMultiplier == nil {
				continue
			}
			v = *c.InferWeightFromGuaranteesShareMultiplier
		case "fair_share_starvation_tolerance":
			v = c.FairShareStarvationTolerance
		case "fair_share_starvation_timeout":
			v = duration(c.FairShareStarvationTimeout)
		case "fair_share_aggressive_starvation_timeout":
			v = duration(c.FairShareAggressiveStarvationTimeout)
		case "enable_aggressive_starvation":
			v = c.EnableAggressiveStarvation
		case "enable_pool_starvation":
			v = c.EnablePoolStarvation
		case "preemption_satisfaction_threshold":
			v = c.PreemptionSatisfactionThreshold
		case "aggressive_preemption_satisfaction_threshold":
			v = c.AggressivePreemptionSatisfactionThreshold
		case "non_preemptible_resource_usage_threshold":
			v = resources(c.NonPreemptibleResourceUsageThreshold)
		case "allocation_count_preemption_timeout_coefficient":
			v = c.AllocationCountPreemptionTimeoutCoefficient
		case "max_operation_count":
			v = c.MaxOperationCount
		case "max_operation_count_per_pool":
			v = c.MaxOperationCountPerPool
		case "max_running_operation_count":
			v = c.MaxRunningOperationCount
		case "max_running_operation_count_per_pool":
			v = c.MaxRunningOperationCountPerPool
		case "default_parent_pool":
			v = string(c.DefaultParentPool)
		case "enable_step_function_for_gang_operations":
			v = c.EnableStepFunctionForGangOperations
		case "fair_share_update_period":
			v = duration(c.FairShareUpdatePeriod)
		case "preemptive_scheduling_backoff":
			v = duration(c.PreemptiveSchedulingBackoff)
		case "allocation_preemption_timeout":
			v = duration(c.AllocationPreemptionTimeout)
		case "allocation_graceful_preemption_timeout":
			v = duration(c.AllocationGracefulPreemptionTimeout)
		case keyNodeTagFilter:
			v = o.NodeTagFilter
		case keyMaxEphemeralPoolsPerUser:
			v = o.MaxEphemeralPoolsPerUser
		case keyForbidImmediateOperationsInRoot:
			v = o.ForbidImmediateOperationsInRoot
		case keyPoolConfigPresets:
			m := make(map[string]any, len(o.PoolConfigPresets))
			for name, p := range o.PoolConfigPresets {
				m[name] = EncodePoolDoc(p)
			}
			v = m
		default:
			// Keys only come from the decoder; an unknown one is a bug.
			panic(fmt.Sprintf("scenario: EncodeTreeDoc: unknown key %q", k))
		}
		out[k] = v
	}
	return out
}

// EncodePoolDoc returns the canonical key map of a pool's own
// configuration: parent (when not the root) and the keys in doc.Keys, with
// JSON-ready values. The name is not part of it. Parsing the JSON of the
// map with ParsePoolDoc gives doc back (without the name).
func EncodePoolDoc(doc PoolDoc) map[string]any {
	out := make(map[string]any, len(doc.Keys)+1)
	c, o := &doc.Config, &doc.Options
	if c.Parent != "" {
		out["parent"] = string(c.Parent)
	}
	for _, k := range doc.Keys {
		var v any
		switch k {
		case "weight":
			if c.Weight == nil {
				continue
			}
			v = *c.Weight
		case "mode":
			v = c.Mode.String()
		case "strong_guarantee_resources":
			v = resources(c.StrongGuaranteeResources)
		case "resource_limits":
			v = resources(c.ResourceLimits)
		case "max_running_operation_count":
			if c.MaxRunningOperationCount == nil {
				continue
			}
			v = *c.MaxRunningOperationCount
		case "max_operation_count":
			if c.MaxOperationCount == nil {
				continue
			}
			v = *c.MaxOperationCount
		case "fifo_sort_parameters":
			names := make([]any, len(c.FifoSortParameters))
			for i, p := range c.FifoSortParameters {
				names[i] = p.String()
			}
			v = names
		case "fair_share_starvation_tolerance":
			if c.FairShareStarvationTolerance == nil {
				continue
			}
			v = *c.FairShareStarvationTolerance
		case "fair_share_starvation_timeout":
			if c.FairShareStarvationTimeout == nil {
				continue
			}
			v = duration(*c.FairShareStarvationTimeout)
		case "enable_aggressive_starvation":
			if c.EnableAggressiveStarvation == nil {
				continue
			}
			v = *c.EnableAggressiveStarvation
		case "non_preemptible_resource_usage_threshold":
			if c.NonPreemptibleResourceUsageThreshold == nil {
				continue
			}
			v = resources(*c.NonPreemptibleResourceUsageThreshold)
		case "integral_guarantees":
			v = integral(c.IntegralGuarantees)
		case keyForbidImmediateOperations:
			v = o.ForbidImmediateOperations
		case keyCreateEphemeralSubpools:
			v = o.CreateEphemeralSubpools
		case keyEphemeralSubpoolConfig:
			if o.EphemeralSubpoolConfig == nil {
				continue
			}
			v = EncodePoolDoc(*o.EphemeralSubpoolConfig)
		case keyOffloadingSettings:
			m := make(map[string]any, len(o.OffloadingSettings))
			for _, off := range o.OffloadingSettings {
				e := map[string]any{"share": off.Share}
				if off.Pool != "" {
					e["pool"] = off.Pool
				}
				m[off.Tree] = e
			}
			v = m
		case keyConfigPresets:
			names := make([]any, len(o.ConfigPresets))
			for i, p := range o.ConfigPresets {
				names[i] = p
			}
			v = names
		case keySubmitACL:
			users := make([]any, len(o.SubmitACL))
			for i, u := range o.SubmitACL {
				users[i] = u
			}
			v = users
		case keyEnableLightweightOperations:
			v = c.EnableLightweightOperations
		default:
			panic(fmt.Sprintf("scenario: EncodePoolDoc: unknown key %q", k))
		}
		out[k] = v
	}
	return out
}

// ResolvePool returns the pool's effective configuration: the tree's presets
// named in config_presets, in order, then the pool's own keys on top (each
// key replaces the preset's value as a whole; a later preset overrides an
// earlier one). Without presets it is doc.Config. A preset the tree does not
// define is an error wrapping ErrUnknownPreset.
func ResolvePool(tree TreeDoc, doc PoolDoc) (scheduler.PoolConfig, error) {
	if len(doc.Options.ConfigPresets) == 0 {
		return doc.Config, nil
	}
	merged := map[string]any{}
	for _, name := range doc.Options.ConfigPresets {
		preset, ok := tree.Options.PoolConfigPresets[name]
		if !ok {
			return scheduler.PoolConfig{}, fmt.Errorf("%w: pool %q: preset %q is not defined (the tree's pool_config_presets has %s)",
				ErrUnknownPreset, doc.Config.Name, name, presetNames(tree.Options.PoolConfigPresets))
		}
		for k, v := range EncodePoolDoc(preset) {
			merged[k] = v
		}
	}
	for k, v := range EncodePoolDoc(doc) {
		merged[k] = v
	}
	data, err := json.Marshal(merged)
	if err != nil {
		return scheduler.PoolConfig{}, fmt.Errorf("scenario: resolve pool %q: %w", doc.Config.Name, err)
	}
	eff, err := ParsePoolDoc(fmt.Sprintf("pool %q with presets", doc.Config.Name), data)
	if err != nil {
		return scheduler.PoolConfig{}, err
	}
	eff.Config.Name = doc.Config.Name
	return eff.Config, nil
}

func presetNames(m map[string]PoolDoc) string {
	if len(m) == 0 {
		return "none"
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, fmt.Sprintf("%q", k))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// duration encodes a duration as time.ParseDuration reads it back.
func duration(d time.Duration) string { return d.String() }

// resources encodes the resources a PartialResources sets.
func resources(p scheduler.PartialResources) map[string]any {
	out := map[string]any{}
	for r := range scheduler.NumResources {
		if p.Set.Has(scheduler.ResourceType(r)) {
			out[scheduler.ResourceType(r).String()] = p.Values[r]
		}
	}
	return out
}

// integral encodes a pool's integral_guarantees: guarantee_type always, the
// rest when set.
func integral(ig scheduler.IntegralGuarantees) map[string]any {
	out := map[string]any{"guarantee_type": ig.GuaranteeType.String()}
	if !ig.ResourceFlow.IsEmpty() {
		out["resource_flow"] = resources(ig.ResourceFlow)
	}
	if !ig.BurstGuaranteeResources.IsEmpty() {
		out["burst_guarantee_resources"] = resources(ig.BurstGuaranteeResources)
	}
	if ig.RelaxedShareMultiplierLimit != nil {
		out["relaxed_share_multiplier_limit"] = *ig.RelaxedShareMultiplierLimit
	}
	if ig.CanAcceptFreeVolume != nil {
		out["can_accept_free_volume"] = *ig.CanAcceptFreeVolume
	}
	if ig.ShouldDistributeFreeVolumeAmongChildren != nil {
		out["should_distribute_free_volume_among_children"] = *ig.ShouldDistributeFreeVolumeAmongChildren
	}
	return out
}

// treeKeyNames are the canonical keys of a tree, integral_guarantees' as
// "integral_guarantees.<key>", options included.
var treeKeyNames = []string{
	"main_resource", "infer_weight_from_guarantees_share_multiplier", "fair_share_starvation_tolerance",
	"fair_share_starvation_timeout", "fair_share_aggressive_starvation_timeout", "enable_aggressive_starvation",
	"enable_pool_starvation", "preemption_satisfaction_threshold", "aggressive_preemption_satisfaction_threshold",
	"non_preemptible_resource_usage_threshold", "allocation_count_preemption_timeout_coefficient",
	"max_operation_count", "max_operation_count_per_pool", "max_running_operation_count",
	"max_running_operation_count_per_pool", "default_parent_pool", "enable_step_function_for_gang_operations",
	"fair_share_update_period", "preemptive_scheduling_backoff", "allocation_preemption_timeout",
	"allocation_graceful_preemption_timeout",
	"integral_guarantees.smooth_period", "integral_guarantees.pool_capacity_saturation_period",
	"integral_guarantees.relaxed_share_multiplier_limit", "integral_guarantees.should_distribute_free_volume_among_children",
	keyNodeTagFilter, keyMaxEphemeralPoolsPerUser, keyForbidImmediateOperationsInRoot, keyPoolConfigPresets,
}

// TreeConfigDoc returns the document of a tree configuration built in code
// (no keys recorded): the keys whose values differ from the defaults, and
// default options.
func TreeConfigDoc(cfg scheduler.TreeConfig) TreeDoc {
	full := TreeDoc{Config: cfg, Options: DefaultTreeOptions(), Keys: treeKeyNames}
	def := DefaultTreeDoc()
	def.Keys = treeKeyNames
	a, b := flatten(EncodeTreeDoc(full)), flatten(EncodeTreeDoc(def))
	var keys []string
	for _, k := range treeKeyNames {
		va, okA := a[k]
		vb, okB := b[k]
		ja, _ := json.Marshal(va)
		jb, _ := json.Marshal(vb)
		if okA != okB || string(ja) != string(jb) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return TreeDoc{Config: cfg, Options: DefaultTreeOptions(), Keys: keys}
}

// flatten lifts integral_guarantees' sub-keys to "integral_guarantees.<key>".
func flatten(m map[string]any) map[string]any {
	if ig, ok := m["integral_guarantees"].(map[string]any); ok {
		delete(m, "integral_guarantees")
		for k, v := range ig {
			m["integral_guarantees."+k] = v
		}
	}
	return m
}

// PoolConfigDoc returns the document of a pool configuration built in code
// (no keys recorded): the keys it sets (non-nil pointers, non-empty
// resources and lists, mode fifo, an integral guarantee that is not all
// zero) and no options.
func PoolConfigDoc(cfg scheduler.PoolConfig) PoolDoc {
	set := map[string]bool{
		"weight":                                   cfg.Weight != nil,
		"mode":                                     cfg.Mode != scheduler.ModeFairShare,
		"strong_guarantee_resources":               !cfg.StrongGuaranteeResources.IsEmpty(),
		"resource_limits":                          !cfg.ResourceLimits.IsEmpty(),
		"max_running_operation_count":              cfg.MaxRunningOperationCount != nil,
		"max_operation_count":                      cfg.MaxOperationCount != nil,
		"fifo_sort_parameters":                     len(cfg.FifoSortParameters) > 0,
		"fair_share_starvation_tolerance":          cfg.FairShareStarvationTolerance != nil,
		"fair_share_starvation_timeout":            cfg.FairShareStarvationTimeout != nil,
		"enable_aggressive_starvation":             cfg.EnableAggressiveStarvation != nil,
		"non_preemptible_resource_usage_threshold": cfg.NonPreemptibleResourceUsageThreshold != nil,
		"integral_guarantees":                      !isZeroIntegral(cfg.IntegralGuarantees),
		keyEnableLightweightOperations:             cfg.EnableLightweightOperations,
	}
	var keys []string
	for k, ok := range set {
		if ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return PoolDoc{Config: cfg, Keys: keys}
}

func isZeroIntegral(ig scheduler.IntegralGuarantees) bool {
	return ig.GuaranteeType == scheduler.GuaranteeNone && ig.ResourceFlow.IsEmpty() && ig.BurstGuaranteeResources.IsEmpty() &&
		ig.RelaxedShareMultiplierLimit == nil && ig.CanAcceptFreeVolume == nil && ig.ShouldDistributeFreeVolumeAmongChildren == nil
}
