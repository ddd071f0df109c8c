package scenario

import (
	"errors"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// poolState is a pool while the steps are resolved: its configuration (with
// the tree's presets applied), its own keys as written and where it was
// defined, for messages.
type poolState struct {
	cfg  scheduler.PoolConfig
	doc  PoolDoc
	path string
	node *yaml.Node
}

// pools decodes the top-level `pools` list. It returns the pools in file
// order and their initial accumulated volumes (nil where not given). Every
// pool is validated against the tree's main resource, and the list must form
// a tree with parents listed before their children.
func (d *decoder) pools(n *yaml.Node, path string, tree TreeDoc) ([]poolState, []*scheduler.Resources, error) {
	items, err := d.sequence(n, path)
	if err != nil {
		return nil, nil, err
	}
	pools := make([]poolState, 0, len(items))
	volumes := make([]*scheduler.Resources, 0, len(items))
	for i, it := range items {
		ip := joinIndex(path, i)
		var (
			doc    PoolDoc
			volume *scheduler.Resources
		)
		fields := append([]field{
			{key: "name", set: func(v *yaml.Node, p string) error {
				s, err := d.str(v, p)
				if err == nil && d.live {
					if verr := subjects.ValidateToken("pool name", s); verr != nil {
						return d.fail(p, deref(v), "%s", causeText(verr, subjects.ErrInvalidToken))
					}
				}
				doc.Config.Name = scheduler.PoolID(s)
				return err
			}},
			d.parentField(&doc.Config),
		}, d.poolFields(&doc, &volume)...)
		present, err := d.object(it, ip, fields)
		if err != nil {
			return nil, nil, err
		}
		if !present["name"] {
			return nil, nil, d.missing(ip, it, "name")
		}
		doc.Keys = poolKeys(present)
		st := poolState{cfg: doc.Config, doc: doc, path: ip, node: deref(it)}
		if !d.noEngine {
			cfg, err := ResolvePool(tree, doc)
			if err != nil {
				if errors.Is(err, ErrUnknownPreset) {
					return nil, nil, d.fail(joinKey(ip, keyConfigPresets), deref(it), "%s", causeText(err, ErrUnknownPreset))
				}
				return nil, nil, d.fail(ip, deref(it), "%v", err)
			}
			st.cfg = cfg
			if err := d.validatePool(st, tree.Config.MainResource, ip); err != nil {
				return nil, nil, err
			}
		}
		pools = append(pools, st)
		volumes = append(volumes, volume)
	}
	if err := d.checkPoolTree(pools); err != nil {
		return nil, nil, err
	}
	return pools, volumes, nil
}

// parentField decodes a pool's `parent`.
func (d *decoder) parentField(cfg *scheduler.PoolConfig) field {
	return field{key: "parent", set: func(v *yaml.Node, p string) error {
		s, err := d.str(v, p)
		if err == nil && s != "" {
			err = d.liveName(v, p, "pool name", s)
		}
		cfg.Parent = scheduler.PoolID(s)
		return err
	}}
}

// liveName checks, in a live decoder, that a value naming a pool or a
// preset is a name the live configuration can have (a subject token, as
// pool and preset names are checked where they are defined). Besides an
// early, precise error, it keeps every accepted document encodable: the
// encoders' JSON must parse back to the same document, and the YAML reader
// does not read every string JSON writes as it was (a NEL, U+0085, reads
// as a line break, folded to a space; other C1 controls are refused).
// Scenario files, which are never encoded, keep free-form names.
func (d *decoder) liveName(v *yaml.Node, path, what, s string) error {
	if !d.live {
		return nil
	}
	if err := subjects.ValidateToken(what, s); err != nil {
		return d.fail(path, deref(v), "%s", causeText(err, subjects.ErrInvalidToken))
	}
	return nil
}

// poolKeys lists the canonical keys present other than name, parent and
// accumulated_resource_volume (which is state, not configuration).
func poolKeys(present map[string]bool) []string {
	keys := make(map[string]bool, len(present))
	for k := range present {
		switch k {
		case "name", "parent", "accumulated_resource_volume":
		default:
			keys[k] = true
		}
	}
	return sortedSet(keys)
}

// poolFields are the keys of a pool other than name and parent: the keys a
// step's `set.pools` entry may give. volume, when not nil, receives
// accumulated_resource_volume (absent resources 0); when nil, that key is
// not accepted. A live decoder adds the pool options.
func (d *decoder) poolFields(doc *PoolDoc, volume **scheduler.Resources) []field {
	cfg := &doc.Config
	fields := []field{
		d.numberPtrTo("weight", &cfg.Weight),
		{key: "mode", set: func(v *yaml.Node, p string) error {
			s, err := d.str(v, p)
			if err != nil {
				return err
			}
			if cfg.Mode, err = scheduler.ParseMode(s); err != nil {
				return d.fail(p, deref(v), "%s", causeText(err, scheduler.ErrInvalidConfig))
			}
			return nil
		}},
		d.resourcesTo("strong_guarantee_resources", &cfg.StrongGuaranteeResources),
		alias("min_share_resources", d.resourcesTo("strong_guarantee_resources", &cfg.StrongGuaranteeResources)),
		d.resourcesTo("resource_limits", &cfg.ResourceLimits),
		d.intPtrTo("max_running_operation_count", &cfg.MaxRunningOperationCount),
		d.intPtrTo("max_operation_count", &cfg.MaxOperationCount),
		{key: "fifo_sort_parameters", set: func(v *yaml.Node, p string) (err error) {
			cfg.FifoSortParameters, err = d.fifoSortParameters(v, p)
			return err
		}},
		d.numberPtrTo("fair_share_starvation_tolerance", &cfg.FairShareStarvationTolerance),
		d.durationPtrTo("fair_share_starvation_timeout", &cfg.FairShareStarvationTimeout),
		d.boolPtrTo("enable_aggressive_starvation", &cfg.EnableAggressiveStarvation),
		d.resourcesPtrTo("non_preemptible_resource_usage_threshold", &cfg.NonPreemptibleResourceUsageThreshold),
		// integral_guarantees is replaced as a whole: the sub-map given (in
		// `pools` or in a step's `set.pools`) is the pool's complete integral
		// configuration, and keys it omits take their zero values (type none,
		// no flow, no burst guarantee, unset overrides). A step that changes
		// only the flow must therefore repeat guarantee_type.
		{key: "integral_guarantees", set: func(v *yaml.Node, p string) error {
			var ig scheduler.IntegralGuarantees
			if err := d.integralGuarantees(v, p, &ig); err != nil {
				return err
			}
			cfg.IntegralGuarantees = ig
			return nil
		}},
	}
	if volume != nil {
		fields = append(fields, field{key: "accumulated_resource_volume", set: func(v *yaml.Node, p string) error {
			r, err := d.volumes(v, p)
			if err != nil {
				return err
			}
			full := r.OrZero()
			*volume = &full
			return nil
		}})
	}
	if d.live {
		fields = append(fields, d.poolOptionFields(&doc.Options, &doc.Config)...)
	}
	return fields
}

// poolFragment decodes a mapping of pool keys that allow accepts (by
// canonical name): a preset or an ephemeral_subpool_config.
func (d *decoder) poolFragment(n *yaml.Node, path string, allow func(string) bool) (PoolDoc, error) {
	var doc PoolDoc
	var fields []field
	for _, f := range d.poolFields(&doc, nil) {
		canon := f.key
		if f.canon != "" {
			canon = f.canon
		}
		if allow(canon) {
			fields = append(fields, f)
		}
	}
	present, err := d.object(n, path, fields)
	if err != nil {
		return PoolDoc{}, err
	}
	doc.Keys = poolKeys(present)
	return doc, nil
}

// integralGuarantees decodes a pool's `integral_guarantees` into ig.
func (d *decoder) integralGuarantees(n *yaml.Node, path string, ig *scheduler.IntegralGuarantees) error {
	_, err := d.object(n, path, []field{
		{key: "guarantee_type", set: func(v *yaml.Node, p string) error {
			s, err := d.str(v, p)
			if err != nil {
				return err
			}
			if ig.GuaranteeType, err = scheduler.ParseGuaranteeType(s); err != nil {
				return d.fail(p, deref(v), "%s", causeText(err, scheduler.ErrInvalidConfig))
			}
			return nil
		}},
		d.resourcesTo("resource_flow", &ig.ResourceFlow),
		d.resourcesTo("burst_guarantee_resources", &ig.BurstGuaranteeResources),
		d.numberPtrTo("relaxed_share_multiplier_limit", &ig.RelaxedShareMultiplierLimit),
		d.boolPtrTo("can_accept_free_volume", &ig.CanAcceptFreeVolume),
		d.boolPtrTo("should_distribute_free_volume_among_children", &ig.ShouldDistributeFreeVolumeAmongChildren),
	})
	return err
}

// fifoSortParameters decodes a list of weight, start_time and
// pending_job_count (alias pending_allocation_count).
func (d *decoder) fifoSortParameters(n *yaml.Node, path string) ([]scheduler.FifoSortParameter, error) {
	names, err := d.stringList(n, path)
	if err != nil {
		return nil, err
	}
	items, _ := d.sequence(n, path)
	var out []scheduler.FifoSortParameter
	for i, s := range names {
		fp, err := scheduler.ParseFifoSortParameter(s)
		if err != nil {
			return nil, d.fail(joinIndex(path, i), deref(items[i]), "%s", causeText(err, scheduler.ErrInvalidConfig))
		}
		out = append(out, fp)
	}
	return out, nil
}

// setPool applies a step's `set.pools` entry to a copy of st's configuration
// (only the keys it names change) and returns the volume it sets, if any.
func (d *decoder) setPool(st *poolState, n *yaml.Node, path string) (*scheduler.Resources, error) {
	doc := PoolDoc{Config: clonePoolConfig(st.cfg)}
	var volume *scheduler.Resources
	if _, err := d.object(n, path, d.poolFields(&doc, &volume)); err != nil {
		return nil, err
	}
	st.cfg = doc.Config
	return volume, nil
}

// validatePool runs PoolConfig.Validate and reports a failure at path.
func (d *decoder) validatePool(st poolState, main scheduler.ResourceType, path string) error {
	if err := st.cfg.Validate(main); err != nil {
		return d.fail(path, st.node, "%s", causeText(err, scheduler.ErrInvalidConfig))
	}
	return nil
}

// checkPoolTree checks the tree-wide rules of the pools list: unique names,
// parents that exist and are listed before their children, no cycles.
func (d *decoder) checkPoolTree(pools []poolState) error {
	index := make(map[scheduler.PoolID]int, len(pools))
	for i, p := range pools {
		if j, dup := index[p.cfg.Name]; dup {
			err := d.fail(joinKey(p.path, "name"), p.node, "duplicate pool name %q (first at %s)", p.cfg.Name, pools[j].path)
			err.Kind = ErrDuplicateName
			return err
		}
		index[p.cfg.Name] = i
	}
	if d.noEngine {
		return nil
	}
	for i, p := range pools {
		if p.cfg.Parent == "" {
			continue
		}
		j, ok := index[p.cfg.Parent]
		switch {
		case !ok:
			return d.fail(joinKey(p.path, "parent"), p.node, "parent %q does not exist", p.cfg.Parent)
		case j > i:
			return d.fail(joinKey(p.path, "parent"), p.node, "parent %q must be listed before its child (it is %s)", p.cfg.Parent, pools[j].path)
		}
	}
	if c, _, ok := fifoParent(pools, index); ok {
		p := pools[c]
		return d.fail(joinKey(p.path, "parent"), p.node, "parent %q is a fifo pool; a fifo pool holds operations only, not child pools", p.cfg.Parent)
	}
	// Parents listed first rule cycles out; this guard only protects against
	// a future relaxation of that rule.
	for _, p := range pools {
		cur := p.cfg.Parent
		for hops := 0; cur != ""; hops++ {
			if hops > len(pools) {
				return d.fail(joinKey(p.path, "parent"), p.node, "pool %q is in a parent cycle", p.cfg.Name)
			}
			cur = pools[index[cur]].cfg.Parent
		}
	}
	return nil
}

// fifoParent finds the first pool (in list order) whose parent is in fifo
// mode, which the engine refuses: it returns the child's and the parent's
// indexes in pools. index maps a pool name to its index.
func fifoParent(pools []poolState, index map[scheduler.PoolID]int) (child, parent int, ok bool) {
	for i, p := range pools {
		if p.cfg.Parent == "" {
			continue
		}
		if j, found := index[p.cfg.Parent]; found && pools[j].cfg.Mode == scheduler.ModeFIFO {
			return i, j, true
		}
	}
	return 0, 0, false
}

// clonePtr returns a copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// clonePoolConfig returns a deep copy of c, so steps never share pointers.
func clonePoolConfig(c scheduler.PoolConfig) scheduler.PoolConfig {
	c.Weight = clonePtr(c.Weight)
	c.MaxRunningOperationCount = clonePtr(c.MaxRunningOperationCount)
	c.MaxOperationCount = clonePtr(c.MaxOperationCount)
	c.FifoSortParameters = slices.Clone(c.FifoSortParameters)
	c.FairShareStarvationTolerance = clonePtr(c.FairShareStarvationTolerance)
	c.FairShareStarvationTimeout = clonePtr(c.FairShareStarvationTimeout)
	c.EnableAggressiveStarvation = clonePtr(c.EnableAggressiveStarvation)
	c.NonPreemptibleResourceUsageThreshold = clonePtr(c.NonPreemptibleResourceUsageThreshold)
	ig := &c.IntegralGuarantees
	ig.RelaxedShareMultiplierLimit = clonePtr(ig.RelaxedShareMultiplierLimit)
	ig.CanAcceptFreeVolume = clonePtr(ig.CanAcceptFreeVolume)
	ig.ShouldDistributeFreeVolumeAmongChildren = clonePtr(ig.ShouldDistributeFreeVolumeAmongChildren)
	return c
}
