package treeconf

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/internal/treeconf/tagfilter"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// checked is a tree that passed validation: its pools parents first
// (siblings by name) and their effective configurations.
type checked struct {
	order     []string
	effective map[string]scheduler.PoolConfig
	filter    tagfilter.Filter
}

// checkTree validates one existing tree of st with every rule that concerns
// the tree on its own (its configuration, presets, pools, their tree shape
// and guarantees) and its offloading targets in st. It returns the first
// broken rule, checking in a fixed order.
func checkTree(st *state, name string) (*checked, error) {
	ts, ok := st.tree(name)
	if !ok {
		return nil, fmt.Errorf("%w: tree %q", ErrNotFound, name)
	}
	if ts.err != nil {
		return nil, ts.err
	}
	if err := subjects.ValidateToken("tree name", name); err != nil {
		return nil, ruleErr(RuleName, name, "", "", "%s", trimSentinel(err, subjects.ErrInvalidToken))
	}
	tc := ts.tree.Config
	if err := checkTreeConfig(name, tc); err != nil {
		return nil, err
	}
	filter, err := tagfilter.Parse(ts.tree.Options.NodeTagFilter)
	if err != nil {
		return nil, ruleErr(RuleNodeTagFilter, name, "", "node_tag_filter", "%s", trimSentinel(err, tagfilter.ErrInvalid))
	}
	for _, pn := range sortedKeys(ts.tree.Options.PoolConfigPresets) {
		preset := ts.tree.Options.PoolConfigPresets[pn].Config
		preset.Name = scheduler.PoolID("preset-" + pn)
		if err := checkPoolConfig(name, "", "pool_config_presets."+pn+".", preset, tc); err != nil {
			return nil, err
		}
	}
	order, err := poolOrder(ts)
	if err != nil {
		return nil, err
	}
	if dp := string(tc.DefaultParentPool); dp != "" {
		if _, ok := ts.pools[dp]; !ok {
			return nil, ruleErr(RuleDefaultParentPool, name, "", "default_parent_pool", "pool %q does not exist in the tree", dp)
		}
	}
	c := &checked{order: order, effective: make(map[string]scheduler.PoolConfig, len(order)), filter: filter}
	for _, pn := range order {
		p := ts.pools[pn].pool
		eff, err := scenario.ResolvePool(ts.tree.TreeDoc, p.PoolDoc)
		if err != nil {
			if errors.Is(err, scenario.ErrUnknownPreset) {
				return nil, ruleErr(RuleUnknownPreset, name, pn, "config_presets", "%s", trimSentinel(err, scenario.ErrUnknownPreset))
			}
			return nil, fromScenario(err, name, pn)
		}
		if err := checkPoolConfig(name, pn, "", eff, tc); err != nil {
			return nil, err
		}
		if err := checkPoolOptions(st, name, p, eff, tc); err != nil {
			return nil, err
		}
		c.effective[pn] = eff
	}
	if err := checkGuaranteeSums(name, c); err != nil {
		return nil, err
	}
	if err := checkEngine(name, tc, c); err != nil {
		return nil, err
	}
	return c, nil
}

// checkTreeConfig checks the tree's own keys.
func checkTreeConfig(tree string, tc scheduler.TreeConfig) error {
	if a, p := tc.AggressivePreemptionSatisfactionThreshold, tc.PreemptionSatisfactionThreshold; a > p {
		return ruleErr(RuleAggressiveThreshold, tree, "", "aggressive_preemption_satisfaction_threshold",
			"%g is above preemption_satisfaction_threshold %g", a, p)
	}
	if r, t := tc.MaxRunningOperationCount, tc.MaxOperationCount; r > t {
		return ruleErr(RuleRunningAboveTotal, tree, "", "max_running_operation_count", "%d is above max_operation_count %d", r, t)
	}
	if r, t := tc.MaxRunningOperationCountPerPool, tc.MaxOperationCountPerPool; r > t {
		return ruleErr(RuleRunningAboveTotal, tree, "", "max_running_operation_count_per_pool",
			"%d is above max_operation_count_per_pool %d", r, t)
	}
	if err := tc.Validate(); err != nil {
		key, msg := engineField(err, "tree ")
		return ruleErr(RuleInvalidValue, tree, "", key, "%s", msg)
	}
	return nil
}

// checkPoolConfig checks one pool's effective configuration (or a preset's)
// on its own. prefix goes before the keys in errors.
func checkPoolConfig(tree, pool, prefix string, cfg scheduler.PoolConfig, tc scheduler.TreeConfig) error {
	if w := cfg.Weight; w != nil {
		if math.IsNaN(*w) || math.IsInf(*w, 0) || *w <= 0 {
			return ruleErr(RuleWeight, tree, pool, prefix+"weight", "must be a positive finite number, got %g", *w)
		}
		if *w < scheduler.MinWeight || *w > scheduler.MaxWeight {
			return ruleErr(RuleWeight, tree, pool, prefix+"weight", "%g is outside [%g, %g]", *w, scheduler.MinWeight, scheduler.MaxWeight)
		}
	}
	main := tc.MainResource
	if sg := cfg.StrongGuaranteeResources; !sg.IsEmpty() && !sg.Set.Has(main) {
		return ruleErr(RuleMainResource, tree, pool, prefix+"strong_guarantee_resources",
			"%s does not name the tree's main_resource %s", sg.String(), main)
	}
	ig := cfg.IntegralGuarantees
	if bg := ig.BurstGuaranteeResources; !bg.IsEmpty() {
		if ig.GuaranteeType == scheduler.GuaranteeRelaxed {
			return ruleErr(RuleBurstOnRelaxed, tree, pool, prefix+"integral_guarantees.burst_guarantee_resources",
				"a relaxed pool cannot have a burst guarantee (%s)", bg.String())
		}
		if !bg.Set.Has(main) {
			return ruleErr(RuleMainResource, tree, pool, prefix+"integral_guarantees.burst_guarantee_resources",
				"%s does not name the tree's main_resource %s", bg.String(), main)
		}
	}
	if err := checkRunning(tree, pool, prefix, cfg, tc); err != nil {
		return err
	}
	if err := cfg.Validate(main); err != nil {
		key, msg := engineField(err, fmt.Sprintf("pool %q ", cfg.Name))
		return ruleErr(RuleInvalidValue, tree, pool, prefix+key, "%s", msg)
	}
	return nil
}

// checkRunning checks max_running_operation_count against
// max_operation_count, each the pool's own or the tree's per-pool default.
func checkRunning(tree, pool, prefix string, cfg scheduler.PoolConfig, tc scheduler.TreeConfig) error {
	running, runFrom := tc.MaxRunningOperationCountPerPool, " (the tree's max_running_operation_count_per_pool)"
	if cfg.MaxRunningOperationCount != nil {
		running, runFrom = *cfg.MaxRunningOperationCount, ""
	}
	total, totalFrom := tc.MaxOperationCountPerPool, " (the tree's max_operation_count_per_pool)"
	if cfg.MaxOperationCount != nil {
		total, totalFrom = *cfg.MaxOperationCount, ""
	}
	if running > total {
		return ruleErr(RuleRunningAboveTotal, tree, pool, prefix+"max_running_operation_count",
			"%d%s is above max_operation_count %d%s", running, runFrom, total, totalFrom)
	}
	return nil
}

// checkPoolOptions checks the options of a pool: its ephemeral sub-pools'
// configuration and its offloading targets.
func checkPoolOptions(st *state, tree string, p Pool, eff scheduler.PoolConfig, tc scheduler.TreeConfig) error {
	o := p.Options
	if o.CreateEphemeralSubpools && eff.Mode == scheduler.ModeFIFO {
		return ruleErr(RuleTreeStructure, tree, p.Name(), "create_ephemeral_subpools",
			"a fifo pool holds operations only and cannot create ephemeral sub-pools")
	}
	if e := o.EphemeralSubpoolConfig; e != nil {
		cfg := e.Config
		cfg.Name = scheduler.PoolID(p.Name() + "$ephemeral")
		if err := checkRunning(tree, p.Name(), "ephemeral_subpool_config.", cfg, tc); err != nil {
			return err
		}
		if err := cfg.Validate(tc.MainResource); err != nil {
			key, msg := engineField(err, fmt.Sprintf("pool %q ", cfg.Name))
			return ruleErr(RuleInvalidValue, tree, p.Name(), "ephemeral_subpool_config."+key, "%s", msg)
		}
	}
	for _, off := range o.OffloadingSettings {
		if err := checkOffloading(st, tree, p.Name(), off); err != nil {
			return err
		}
	}
	return nil
}

// checkOffloading checks that an offloading target exists.
func checkOffloading(st *state, tree, pool string, off scenario.Offloading) error {
	key := "offloading_settings." + off.Tree
	if off.Tree == tree {
		return ruleErr(RuleOffloading, tree, pool, key, "a pool cannot offload into its own tree")
	}
	target, ok := st.tree(off.Tree)
	if !ok {
		return ruleErr(RuleOffloading, tree, pool, key, "tree %q does not exist", off.Tree)
	}
	tp := off.Pool
	if tp == "" {
		tp = pool
	}
	if _, ok := target.pools[tp]; !ok {
		return ruleErr(RuleOffloading, tree, pool, key, "pool %q does not exist in tree %q", tp, off.Tree)
	}
	return nil
}

// poolOrder checks the pool tree's shape (decodable pools, valid names,
// existing parents, no cycles) and returns the pools parents first,
// siblings by name.
func poolOrder(ts *treeState) ([]string, error) {
	names := sortedKeys(ts.pools)
	children := map[string][]string{}
	for _, pn := range names {
		ps := ts.pools[pn]
		if ps.err != nil {
			return nil, ps.err
		}
		if err := subjects.ValidateToken("pool name", pn); err != nil {
			return nil, ruleErr(RuleName, ts.name, pn, "", "%s", trimSentinel(err, subjects.ErrInvalidToken))
		}
		parent := ps.pool.Parent()
		if parent != "" {
			if _, ok := ts.pools[parent]; !ok {
				return nil, ruleErr(RuleParentMissing, ts.name, pn, "parent", "pool %q does not exist in the tree", parent)
			}
		}
		children[parent] = append(children[parent], pn)
	}
	order := make([]string, 0, len(names))
	var walk func(parent string)
	walk = func(parent string) {
		for _, c := range children[parent] {
			order = append(order, c)
			walk(c)
		}
	}
	walk("")
	if len(order) == len(names) {
		return order, nil
	}
	reached := make(map[string]bool, len(order))
	for _, pn := range order {
		reached[pn] = true
	}
	for _, pn := range names {
		if reached[pn] {
			continue
		}
		// Follow the parents until a pool repeats: that is the cycle.
		seen := map[string]int{}
		var path []string
		for cur := pn; ; cur = ts.pools[cur].pool.Parent() {
			if i, ok := seen[cur]; ok {
				cycle := append(path[i:], cur)
				return nil, ruleErr(RuleCycle, ts.name, cycle[0], "parent", "pool is its own ancestor: %s", strings.Join(cycle, " → "))
			}
			seen[cur] = len(path)
			path = append(path, cur)
		}
	}
	return order, nil
}

// checkGuaranteeSums checks, for every pool with children and every
// resource the children's strong guarantees name, that their sum does not
// exceed the parent's guarantee: the parent's value when it names the
// resource, 0 when it has no strong guarantee at all (a resource the
// parent leaves to inference from its main resource is not compared).
func checkGuaranteeSums(tree string, c *checked) error {
	kids := map[string][]string{}
	for _, pn := range c.order {
		parent := string(c.effective[pn].Parent)
		kids[parent] = append(kids[parent], pn)
	}
	for _, parent := range c.order {
		ch := kids[parent]
		if len(ch) == 0 {
			continue
		}
		pg := c.effective[parent].StrongGuaranteeResources
		for r := range scheduler.NumResources {
			res := scheduler.ResourceType(r)
			var sum float64
			var parts []string
			for _, k := range ch {
				if g := c.effective[k].StrongGuaranteeResources; g.Set.Has(res) {
					sum += g.Values[r]
					parts = append(parts, fmt.Sprintf("%s %g", k, g.Values[r]))
				}
			}
			if len(parts) == 0 {
				continue
			}
			limit, what := pg.Values[r], fmt.Sprintf("%g", pg.Values[r])
			switch {
			case pg.IsEmpty():
				limit, what = 0, "0 (it has no strong guarantee)"
			case !pg.Set.Has(res):
				continue
			}
			if sum > limit+float64(1e-9*max(1, math.Abs(limit))) {
				return ruleErr(RuleGuaranteeSum, tree, parent, "strong_guarantee_resources."+res.String(),
					"children's strong guarantees of %s sum to %g (%s), above the pool's %s", res, sum, strings.Join(parts, ", "), what)
			}
		}
	}
	return nil
}

// checkEngine builds the tree the way scheduler.Update does, so every rule
// the engine enforces on a tree (a fifo pool with child pools, ...) refuses
// the write too.
func checkEngine(tree string, tc scheduler.TreeConfig, c *checked) error {
	pools := make([]scheduler.PoolConfig, 0, len(c.order))
	for _, pn := range c.order {
		pools = append(pools, c.effective[pn])
	}
	_, err := scheduler.Update(&scheduler.Snapshot{Tree: tc, Pools: pools}, nil)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, scheduler.ErrInvalidTree):
		return ruleErr(RuleTreeStructure, tree, "", "", "%s", trimSentinel(err, scheduler.ErrInvalidTree))
	default:
		return ruleErr(RuleInvalidValue, tree, "", "", "%s", trimSentinel(err, scheduler.ErrInvalidConfig))
	}
}

// checkCluster checks the cluster attributes against the trees: default_tree
// names an existing tree, and is set whenever a tree exists.
func checkCluster(st *state) error {
	if st.clusterErr != nil {
		return st.clusterErr
	}
	names := st.treeNames()
	dt := st.cluster.DefaultTree
	switch {
	case dt == "" && len(names) > 0:
		return ruleErr(RuleDefaultTree, "", "", keyDefaultTree, "must name one of the trees (%s)", strings.Join(names, ", "))
	case dt != "" && !slices.Contains(names, dt):
		if len(names) == 0 {
			return ruleErr(RuleDefaultTree, "", "", keyDefaultTree, "tree %q does not exist (there are no trees)", dt)
		}
		return ruleErr(RuleDefaultTree, "", "", keyDefaultTree, "tree %q does not exist (trees: %s)", dt, strings.Join(names, ", "))
	}
	return nil
}

// checkReferences checks that every offloading_settings entry of every tree
// that points into one of the trees still finds its target.
func checkReferences(st *state, trees map[string]bool) error {
	for _, tn := range st.treeNames() {
		ts := st.trees[tn]
		for _, pn := range sortedKeys(ts.pools) {
			ps := ts.pools[pn]
			if ps.err != nil {
				continue
			}
			for _, off := range ps.pool.Options.OffloadingSettings {
				if trees[off.Tree] {
					if err := checkOffloading(st, tn, pn, off); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// engineField splits a scheduler validation error ("scheduler: invalid
// configuration: <subject>field: message") into the field and the message.
func engineField(err error, subject string) (string, string) {
	msg := trimSentinel(err, scheduler.ErrInvalidConfig)
	rest, ok := strings.CutPrefix(msg, subject)
	if !ok {
		return "", msg
	}
	field, m, ok := strings.Cut(rest, ": ")
	if !ok || strings.ContainsAny(field, " ") {
		return "", msg
	}
	return field, m
}

// trimSentinel drops the sentinel's text from the front of err's message.
func trimSentinel(err, sentinel error) string {
	return strings.TrimPrefix(err.Error(), sentinel.Error()+": ")
}
