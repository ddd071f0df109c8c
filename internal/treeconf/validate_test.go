package treeconf

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteRules(t *testing.T) {
	e := newEnv(t)
	e.applyBase(t)
	if _, err := e.admin.CreateTree(ctx(t), "spare", nil); err != nil {
		t.Fatal(err)
	}
	e.ops.set("physical", "burst", 3)
	e.ops.set("spare", "", 2)
	type tc struct {
		name  string
		op    func(a *Admin) error
		want  RuleError
		parts []string
	}
	set := func(tree, pool, key, value string) func(a *Admin) error {
		return func(a *Admin) error {
			if pool == "" {
				_, err := a.SetTree(ctx(t), tree, Set(key, value))
				return err
			}
			_, err := a.SetPool(ctx(t), tree, pool, Set(key, value))
			return err
		}
	}
	create := func(tree, pool, doc string) func(a *Admin) error {
		return func(a *Admin) error {
			if pool == "" {
				_, err := a.CreateTree(ctx(t), tree, []byte(doc))
				return err
			}
			_, err := a.CreatePool(ctx(t), tree, pool, []byte(doc))
			return err
		}
	}
	cases := []tc{
		{"children's guarantees above the parent's", set("physical", "project-backup", "strong_guarantee_resources", "{cpu: 30}"),
			RuleError{Rule: RuleGuaranteeSum, Tree: "physical", Pool: "project-root", Key: "strong_guarantee_resources.cpu"},
			[]string{"sum to 110", "project-adhoc 80", "project-backup 30", "above the pool's 100"}},
		{"new child above the parent's guarantee", create("physical", "extra", "{parent: project-root, strong_guarantee_resources: {cpu: 1}}"),
			RuleError{Rule: RuleGuaranteeSum, Tree: "physical", Pool: "project-root", Key: "strong_guarantee_resources.cpu"},
			[]string{"sum to 101", "extra 1"}},
		{"child guarantee under a parent without one", create("cloud", "team", "{parent: research, strong_guarantee_resources: {cpu: 5}}"),
			RuleError{Rule: RuleGuaranteeSum, Tree: "cloud", Pool: "research", Key: "strong_guarantee_resources.cpu"},
			[]string{"sum to 5", "0 (it has no strong guarantee)"}},
		{"running above total, inherited total", set("physical", "project-adhoc", "max_running_operation_count", "60"),
			RuleError{Rule: RuleRunningAboveTotal, Tree: "physical", Pool: "project-adhoc", Key: "max_running_operation_count"},
			[]string{"60 is above max_operation_count 50 (the tree's max_operation_count_per_pool)"}},
		{"running above total, both set", func(a *Admin) error {
			_, err := a.SetPool(ctx(t), "physical", "burst", Replace([]byte(`{max_running_operation_count: 5, max_operation_count: 3}`), 0))
			return err
		}, RuleError{Rule: RuleRunningAboveTotal, Tree: "physical", Pool: "burst", Key: "max_running_operation_count"},
			[]string{"5 is above max_operation_count 3"}},
		{"running above total, inherited by a pool after a tree change", set("physical", "", "max_operation_count_per_pool", "9"),
			RuleError{Rule: RuleRunningAboveTotal, Tree: "physical", Pool: "project-root", Key: "max_running_operation_count"},
			[]string{"10 is above max_operation_count 9 (the tree's max_operation_count_per_pool)"}},
		{"tree running above total", set("physical", "", "max_running_operation_count", "60000"),
			RuleError{Rule: RuleRunningAboveTotal, Tree: "physical", Key: "max_running_operation_count"},
			[]string{"60000 is above max_operation_count 50000"}},
		{"tree per-pool defaults", set("physical", "", "max_running_operation_count_per_pool", "100"),
			RuleError{Rule: RuleRunningAboveTotal, Tree: "physical", Key: "max_running_operation_count_per_pool"},
			[]string{"100 is above max_operation_count_per_pool 50"}},
		{"ephemeral sub-pools running above total", set("cloud", "research", "ephemeral_subpool_config", "{max_running_operation_count: 9, max_operation_count: 3}"),
			RuleError{Rule: RuleRunningAboveTotal, Tree: "cloud", Pool: "research", Key: "ephemeral_subpool_config.max_running_operation_count"},
			[]string{"9 is above max_operation_count 3"}},
		{"guarantee lacks the main resource", set("physical", "project-adhoc", "strong_guarantee_resources", "{memory: 10Gi}"),
			RuleError{Rule: RuleMainResource, Tree: "physical", Pool: "project-adhoc", Key: "strong_guarantee_resources"},
			[]string{"{memory: 1.073741824e+10}", "main_resource cpu"}},
		{"main resource changed under guarantees", set("physical", "", "main_resource", "memory"),
			RuleError{Rule: RuleMainResource, Tree: "physical", Pool: "burst", Key: "integral_guarantees.burst_guarantee_resources"},
			[]string{"{cpu: 40}", "main_resource memory"}},
		{"burst guarantee lacks the main resource", set("physical", "burst", "integral_guarantees", "{guarantee_type: burst, burst_guarantee_resources: {gpu: 1}}"),
			RuleError{Rule: RuleMainResource, Tree: "physical", Pool: "burst", Key: "integral_guarantees.burst_guarantee_resources"},
			[]string{"{gpu: 1}"}},
		{"burst settings on a relaxed pool", set("physical", "relaxed", "integral_guarantees.burst_guarantee_resources", "{cpu: 5}"),
			RuleError{Rule: RuleBurstOnRelaxed, Tree: "physical", Pool: "relaxed", Key: "integral_guarantees.burst_guarantee_resources"},
			[]string{"relaxed pool", "{cpu: 5}"}},
		{"negative weight", set("physical", "burst", "weight", "-1"),
			RuleError{Rule: RuleWeight, Tree: "physical", Pool: "burst", Key: "weight"}, []string{"positive finite", "got -1"}},
		{"zero weight", set("physical", "burst", "weight", "0"),
			RuleError{Rule: RuleWeight, Tree: "physical", Pool: "burst", Key: "weight"}, []string{"positive finite", "got 0"}},
		{"infinite weight", set("physical", "burst", "weight", ".inf"),
			RuleError{Rule: RuleWeight, Tree: "physical", Pool: "burst", Key: "weight"}, []string{"finite", ".inf"}},
		{"NaN weight", set("physical", "burst", "weight", ".nan"),
			RuleError{Rule: RuleWeight, Tree: "physical", Pool: "burst", Key: "weight"}, []string{"finite", ".nan"}},
		{"weight as text", set("physical", "burst", "weight", "heavy"),
			RuleError{Rule: RuleWeight, Tree: "physical", Pool: "burst", Key: "weight"}, []string{"want a number", "heavy"}},
		{"unknown pool key", set("physical", "burst", "wieght", "2"),
			RuleError{Rule: RuleUnknownKey, Tree: "physical", Pool: "burst", Key: "wieght"}, []string{`unknown key "wieght"`}},
		{"unknown nested key", set("physical", "burst", "integral_guarantees.flow", "{cpu: 1}"),
			RuleError{Rule: RuleUnknownKey, Tree: "physical", Pool: "burst", Key: "integral_guarantees.flow"}, []string{`unknown key "flow"`}},
		{"unknown tree key", create("other", "", "{colour: red}"),
			RuleError{Rule: RuleUnknownKey, Tree: "other", Key: "colour"}, []string{`unknown key "colour"`}},
		{"parent does not exist", create("physical", "orphan", "{parent: nope}"),
			RuleError{Rule: RuleParentMissing, Tree: "physical", Pool: "orphan", Key: "parent"}, []string{`pool "nope" does not exist`}},
		{"parent cycle", set("physical", "project-root", "parent", "project-adhoc"),
			RuleError{Rule: RuleCycle, Tree: "physical", Pool: "project-adhoc", Key: "parent"},
			[]string{"project-adhoc → project-root → project-adhoc"}},
		{"pool name not unique", create("physical", "project-adhoc", "{}"),
			RuleError{Rule: RuleDuplicateName, Tree: "physical", Pool: "project-adhoc"}, []string{"already exists"}},
		{"tree name not unique", create("cloud", "", "{}"),
			RuleError{Rule: RuleDuplicateName, Tree: "cloud"}, []string{"already exists"}},
		{"aggressive threshold above the threshold", set("physical", "", "aggressive_preemption_satisfaction_threshold", "1.5"),
			RuleError{Rule: RuleAggressiveThreshold, Tree: "physical", Key: "aggressive_preemption_satisfaction_threshold"},
			[]string{"1.5 is above preemption_satisfaction_threshold 1"}},
		{"unknown preset", set("physical", "burst", "config_presets", "[small, huge]"),
			RuleError{Rule: RuleUnknownPreset, Tree: "physical", Pool: "burst", Key: "config_presets"}, []string{`"huge"`, `"small"`}},
		{"removing a preset in use", set("physical", "", "pool_config_presets", "null"),
			RuleError{Rule: RuleUnknownPreset, Tree: "physical", Pool: "relaxed", Key: "config_presets"}, []string{`"small" is not defined`}},
		{"preset breaks a rule", set("physical", "", "pool_config_presets.small.weight", "-2"),
			RuleError{Rule: RuleWeight, Tree: "physical", Key: "pool_config_presets.small.weight"}, []string{"got -2"}},
		{"node tag filter does not parse", set("cloud", "", "node_tag_filter", "'a & (b'"),
			RuleError{Rule: RuleNodeTagFilter, Tree: "cloud", Key: "node_tag_filter"}, []string{`missing ")"`}},
		{"default parent pool does not exist", set("physical", "", "default_parent_pool", "nope"),
			RuleError{Rule: RuleDefaultParentPool, Tree: "physical", Key: "default_parent_pool"}, []string{`"nope" does not exist`}},
		{"offloading into a missing pool", set("physical", "burst", "offloading_settings", "{cloud: {pool: nope}}"),
			RuleError{Rule: RuleOffloading, Tree: "physical", Pool: "burst", Key: "offloading_settings.cloud"}, []string{`pool "nope" does not exist in tree "cloud"`}},
		{"offloading into a missing tree", set("physical", "burst", "offloading_settings", "{gpu: {}}"),
			RuleError{Rule: RuleOffloading, Tree: "physical", Pool: "burst", Key: "offloading_settings.gpu"}, []string{`tree "gpu" does not exist`}},
		{"offloading into its own tree", set("physical", "burst", "offloading_settings", "{physical: {}}"),
			RuleError{Rule: RuleOffloading, Tree: "physical", Pool: "burst", Key: "offloading_settings.physical"}, []string{"own tree"}},
		{"fifo pool with child pools", set("physical", "project-root", "mode", "fifo"),
			RuleError{Rule: RuleTreeStructure, Tree: "physical"}, []string{`fifo pool "project-root" has child pools`}},
		{"fifo pool with ephemeral sub-pools", func(a *Admin) error {
			_, err := a.SetPool(ctx(t), "cloud", "research", Replace([]byte(`{mode: fifo, create_ephemeral_subpools: true}`), 0))
			return err
		}, RuleError{Rule: RuleTreeStructure, Tree: "cloud", Pool: "research", Key: "create_ephemeral_subpools"}, []string{"fifo"}},
		{"bad pool name", create("physical", "a.b", "{}"),
			RuleError{Rule: RuleName, Tree: "physical", Pool: "a.b"}, []string{`"a.b"`}},
		{"value does not parse", set("physical", "burst", "weight", "{a: [}"),
			RuleError{Rule: RuleInvalidValue, Tree: "physical", Pool: "burst", Key: "weight"}, []string{"does not parse"}},
		{"remove a pool with children", func(a *Admin) error { _, err := a.RemovePool(ctx(t), "physical", "project-root", 0); return err },
			RuleError{Rule: RulePoolHasChildren, Tree: "physical", Pool: "project-root"}, []string{"project-adhoc, project-backup, project-batch"}},
		{"remove a pool with operations", func(a *Admin) error { _, err := a.RemovePool(ctx(t), "physical", "burst", 0); return err },
			RuleError{Rule: RulePoolHasOperations, Tree: "physical", Pool: "burst"}, []string{"3 operations"}},
		{"remove a tree with pools", func(a *Admin) error { _, err := a.RemoveTree(ctx(t), "cloud", 0); return err },
			RuleError{Rule: RuleTreeHasPools, Tree: "cloud"}, []string{"1 pools (research)"}},
		{"remove a tree with operations", func(a *Admin) error { _, err := a.RemoveTree(ctx(t), "spare", 0); return err },
			RuleError{Rule: RuleTreeHasOperations, Tree: "spare"}, []string{"2 operations"}},
		{"default tree that does not exist", func(a *Admin) error { _, err := a.SetCluster(ctx(t), Set("default_tree", "gpu")); return err },
			RuleError{Rule: RuleDefaultTree, Key: "default_tree"}, []string{`"gpu" does not exist`, "cloud, physical, spare"}},
		{"unknown cluster key", func(a *Admin) error { _, err := a.SetCluster(ctx(t), Set("colour", "red")); return err },
			RuleError{Rule: RuleUnknownKey, Key: "colour"}, nil},
		{"duplicate pool in an applied document", func(a *Admin) error {
			_, err := a.Apply(ctx(t), []byte("version: 1\ntrees: [{name: physical, pools: [{name: a}, {name: a}]}]"), false, false)
			return err
		}, RuleError{Rule: RuleDuplicateName, Key: "trees[0].pools[1].name"}, []string{`duplicate pool name "a"`}},
	}
	before := e.dump(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantRule(t, c.op(e.admin), c.want, c.parts...)
			if diff := cmp.Diff(before, e.dump(t)); diff != "" {
				t.Errorf("a refused write changed the bucket (-before +after):\n%s", diff)
			}
		})
	}
}

func TestRemovalRulesWrapInUse(t *testing.T) {
	e := newEnv(t)
	e.applyBase(t)
	_, err := e.admin.RemovePool(ctx(t), "physical", "project-root", 0)
	if !errors.Is(err, ErrInUse) {
		t.Errorf("error %v does not wrap ErrInUse", err)
	}
	_, err = e.admin.CreatePool(ctx(t), "physical", "burst", nil)
	if !errors.Is(err, ErrExists) {
		t.Errorf("error %v does not wrap ErrExists", err)
	}
	_, err = e.admin.GetPool(ctx(t), "physical", "nope")
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("error %v does not wrap ErrNotFound", err)
	}
	_, err = e.admin.SetPool(ctx(t), "nope", "x", Set("weight", "1"))
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("error %v does not wrap ErrNotFound", err)
	}
}
