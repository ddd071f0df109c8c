package scenario

import (
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/sharetree/sharetree/internal/treeconf/tagfilter"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// applyTree applies the keys of a `tree` mapping to cfg (keys it does not
// name keep their values) and validates the result.
func (d *decoder) applyTree(n *yaml.Node, path string, cfg *scheduler.TreeConfig) error {
	doc := TreeDoc{Config: *cfg, Options: DefaultTreeOptions()}
	if err := d.decodeTree(n, path, &doc); err != nil {
		return err
	}
	*cfg = doc.Config
	if err := cfg.Validate(); err != nil {
		return d.fail(path, deref(n), "%s", causeText(err, scheduler.ErrInvalidConfig))
	}
	return nil
}

// decodeTree applies the keys of a tree mapping to doc without validating
// the result; doc.Keys gains the keys given. The options are keys only when
// the decoder is live.
func (d *decoder) decodeTree(n *yaml.Node, path string, doc *TreeDoc) error {
	cfg := &doc.Config
	ig := &cfg.Integral
	keys := make(map[string]bool, len(doc.Keys))
	for _, k := range doc.Keys {
		keys[k] = true
	}
	fields := []field{
		{key: "main_resource", set: func(v *yaml.Node, p string) (err error) {
			cfg.MainResource, err = d.resourceName(v, p)
			return err
		}},
		d.numberPtrTo("infer_weight_from_guarantees_share_multiplier", &cfg.InferWeightFromGuaranteesShareMultiplier),
		d.numberTo("fair_share_starvation_tolerance", &cfg.FairShareStarvationTolerance),
		d.durationTo("fair_share_starvation_timeout", &cfg.FairShareStarvationTimeout),
		alias("fair_share_preemption_timeout", d.durationTo("fair_share_starvation_timeout", &cfg.FairShareStarvationTimeout)),
		d.durationTo("fair_share_aggressive_starvation_timeout", &cfg.FairShareAggressiveStarvationTimeout),
		d.boolTo("enable_aggressive_starvation", &cfg.EnableAggressiveStarvation),
		d.boolTo("enable_pool_starvation", &cfg.EnablePoolStarvation),
		d.numberTo("preemption_satisfaction_threshold", &cfg.PreemptionSatisfactionThreshold),
		d.numberTo("aggressive_preemption_satisfaction_threshold", &cfg.AggressivePreemptionSatisfactionThreshold),
		d.resourcesTo("non_preemptible_resource_usage_threshold", &cfg.NonPreemptibleResourceUsageThreshold),
		d.numberTo("allocation_count_preemption_timeout_coefficient", &cfg.AllocationCountPreemptionTimeoutCoefficient),
		d.intTo("max_operation_count", &cfg.MaxOperationCount),
		d.intTo("max_operation_count_per_pool", &cfg.MaxOperationCountPerPool),
		d.intTo("max_running_operation_count", &cfg.MaxRunningOperationCount),
		d.intTo("max_running_operation_count_per_pool", &cfg.MaxRunningOperationCountPerPool),
		{key: "default_parent_pool", set: func(v *yaml.Node, p string) error {
			s, err := d.str(v, p)
			if err == nil && s != "" {
				err = d.liveName(v, p, "pool name", s)
			}
			cfg.DefaultParentPool = scheduler.PoolID(s)
			return err
		}},
		d.boolTo("enable_step_function_for_gang_operations", &cfg.EnableStepFunctionForGangOperations),
		d.durationTo("fair_share_update_period", &cfg.FairShareUpdatePeriod),
		d.durationTo("preemptive_scheduling_backoff", &cfg.PreemptiveSchedulingBackoff),
		d.durationTo("allocation_preemption_timeout", &cfg.AllocationPreemptionTimeout),
		alias("job_interrupt_timeout", d.durationTo("allocation_preemption_timeout", &cfg.AllocationPreemptionTimeout)),
		d.durationTo("allocation_graceful_preemption_timeout", &cfg.AllocationGracefulPreemptionTimeout),
		alias("job_graceful_interrupt_timeout", d.durationTo("allocation_graceful_preemption_timeout", &cfg.AllocationGracefulPreemptionTimeout)),
		// Unlike a pool's integral_guarantees, the tree's sub-map sets only
		// the keys it names: the tree's settings all have defaults.
		{key: "integral_guarantees", set: func(v *yaml.Node, p string) error {
			present, err := d.object(v, p, []field{
				d.durationTo("smooth_period", &ig.SmoothPeriod),
				d.durationTo("pool_capacity_saturation_period", &ig.PoolCapacitySaturationPeriod),
				d.numberTo("relaxed_share_multiplier_limit", &ig.RelaxedShareMultiplierLimit),
				d.boolTo("should_distribute_free_volume_among_children", &ig.ShouldDistributeFreeVolumeAmongChildren),
			})
			for k := range present {
				keys[joinKey("integral_guarantees", k)] = true
			}
			return err
		}},
	}
	if d.live {
		fields = append(fields, d.treeOptionFields(&doc.Options)...)
	}
	present, err := d.object(n, path, fields)
	if err != nil {
		return err
	}
	for k := range present {
		if k != "integral_guarantees" {
			keys[k] = true
		}
	}
	doc.Keys = sortedSet(keys)
	return nil
}

// treeOptionFields are the tree keys only the scheduler process reads.
func (d *decoder) treeOptionFields(o *TreeOptions) []field {
	filter := field{key: keyNodeTagFilter, set: func(v *yaml.Node, p string) error {
		s, err := d.str(v, p)
		if err != nil {
			return err
		}
		f, err := tagfilter.Parse(s)
		if err != nil {
			return d.fail(p, deref(v), "%s", causeText(err, tagfilter.ErrInvalid))
		}
		o.NodeTagFilter = f.String()
		return nil
	}}
	perUser := field{key: keyMaxEphemeralPoolsPerUser, set: func(v *yaml.Node, p string) error {
		n, err := d.integer(v, p)
		if err != nil {
			return err
		}
		if n < 0 {
			return d.fail(p, deref(v), "must be >= 0, got %d", n)
		}
		o.MaxEphemeralPoolsPerUser = n
		return nil
	}}
	return []field{
		filter,
		alias("nodes_filter", filter),
		perUser,
		alias("max_ephemeral_pools_per_user", perUser),
		d.boolTo(keyForbidImmediateOperationsInRoot, &o.ForbidImmediateOperationsInRoot),
		{key: keyPoolConfigPresets, set: func(v *yaml.Node, p string) error {
			entries, err := d.entries(v, p)
			if err != nil {
				return err
			}
			presets := make(map[string]PoolDoc, len(entries))
			for _, e := range entries {
				if err := subjects.ValidateToken("preset name", e.key); err != nil {
					return d.fail(e.path, e.keyNode, "%s", causeText(err, subjects.ErrInvalidToken))
				}
				frag, err := d.poolFragment(e.val, e.path, presetKey)
				if err != nil {
					return err
				}
				presets[e.key] = frag
			}
			o.PoolConfigPresets = presets
			return nil
		}},
	}
}

// presetKey reports whether a preset may set key: every pool key but parent
// and config_presets (presets do not nest).
func presetKey(key string) bool { return key != keyConfigPresets }

// ephemeralKey reports whether ephemeral_subpool_config may set key: the
// keys the pool-tree documentation lists for it.
func ephemeralKey(key string) bool {
	switch key {
	case "mode", "max_running_operation_count", "max_operation_count", "resource_limits":
		return true
	}
	return false
}

// sortedSet returns the members of a set, sorted (nil when empty).
func sortedSet(set map[string]bool) []string {
	if len(set) == 0 {
		return nil
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
