package scenario

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
)

// fullTree gives every tree key, options included (testdata/full-tree.yaml).
var fullTree = readTestdata("full-tree.yaml")

// fullPool gives every pool key, options included (testdata/full-pool.yaml).
var fullPool = readTestdata("full-pool.yaml")

// readTestdata returns a file of testdata/ (internal/treeconf's fuzz
// targets seed with the same documents).
func readTestdata(name string) string {
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		panic(err)
	}
	return string(data)
}

func TestParseTreeDocAllKeys(t *testing.T) {
	doc, err := ParseTreeDoc("tree", []byte(fullTree))
	if err != nil {
		t.Fatal(err)
	}
	c := doc.Config
	got := []any{c.MainResource, *c.InferWeightFromGuaranteesShareMultiplier, c.FairShareStarvationTimeout, c.AllocationPreemptionTimeout,
		c.Integral.SmoothPeriod, c.Integral.PoolCapacitySaturationPeriod, doc.Options.NodeTagFilter, doc.Options.MaxEphemeralPoolsPerUser,
		doc.Options.ForbidImmediateOperationsInRoot, len(doc.Options.PoolConfigPresets), doc.Options.PoolConfigPresets["fifo"].Config.Mode}
	want := []any{scheduler.Memory, 2.0, 40 * time.Second, 7 * time.Second, 30 * time.Second, 24 * time.Hour, "gpu & (rack1 | rack2)", 3,
		false, 2, scheduler.ModeFIFO}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(doc.Keys) != 27 || !strings.Contains(strings.Join(doc.Keys, ","), "integral_guarantees.smooth_period") {
		t.Errorf("keys = %v", doc.Keys)
	}
}

func TestTreeDocRoundTrip(t *testing.T) {
	for name, in := range map[string]string{"full": fullTree, "empty": "", "one key": "{max_operation_count: 7}",
		"ig only": "{integral_guarantees: {should_distribute_free_volume_among_children: true}}"} {
		t.Run(name, func(t *testing.T) {
			doc, err := ParseTreeDoc("tree", []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			data, err := json.Marshal(EncodeTreeDoc(doc))
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseTreeDoc("encoded", data)
			if err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			if diff := cmp.Diff(doc, back); diff != "" {
				t.Errorf("round trip of %s (-want +got):\n%s", data, diff)
			}
			again, _ := json.Marshal(EncodeTreeDoc(back))
			if string(again) != string(data) {
				t.Errorf("canonical form is not stable:\n%s\n%s", data, again)
			}
		})
	}
}

func TestPoolDocRoundTrip(t *testing.T) {
	for name, in := range map[string]string{"full": fullPool, "empty": "", "root child": "{weight: 1}",
		"explicit defaults": "{mode: fair_share, strong_guarantee_resources: {}, integral_guarantees: {}}"} {
		t.Run(name, func(t *testing.T) {
			doc, err := ParsePoolDoc("pool", []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			data, err := json.Marshal(EncodePoolDoc(doc))
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParsePoolDoc("encoded", data)
			if err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			if diff := cmp.Diff(doc, back); diff != "" {
				t.Errorf("round trip of %s (-want +got):\n%s", data, diff)
			}
		})
	}
}

func TestPoolDocCanonicalJSON(t *testing.T) {
	doc, err := ParsePoolDoc("pool", []byte(`{parent: a, min_share_resources: {cpu: 5, memory: 1Ki}, offloading_settings: {z: {}, b: {pool: p, share: 0.5}}, weight: 2}`))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(EncodePoolDoc(doc))
	want := `{"offloading_settings":{"b":{"pool":"p","share":0.5},"z":{"share":1}},"parent":"a","strong_guarantee_resources":{"cpu":5,"memory":1024},"weight":2}`
	if string(data) != want {
		t.Errorf("canonical JSON\n got %s\nwant %s", data, want)
	}
}

func TestResolvePool(t *testing.T) {
	tree, err := ParseTreeDoc("tree", []byte(`pool_config_presets:
  a: {weight: 3, max_running_operation_count: 2, resource_limits: {cpu: 10}}
  b: {max_running_operation_count: 4, mode: fifo}`))
	if err != nil {
		t.Fatal(err)
	}
	pool, err := ParsePoolDoc("pool", []byte(`{config_presets: [a, b], resource_limits: {gpu: 1}, mode: fair_share}`))
	if err != nil {
		t.Fatal(err)
	}
	pool.Config.Name = "p"
	cfg, err := ResolvePool(tree, pool)
	if err != nil {
		t.Fatal(err)
	}
	got := []any{cfg.Name, *cfg.Weight, *cfg.MaxRunningOperationCount, cfg.Mode, cfg.ResourceLimits.Set.Has(scheduler.CPU), cfg.ResourceLimits.Values[scheduler.GPU]}
	want := []any{scheduler.PoolID("p"), 3.0, 4, scheduler.ModeFairShare, false, 1.0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("effective config (-want +got):\n%s", diff)
	}
	pool.Options.ConfigPresets = []string{"a", "nope"}
	if _, err := ResolvePool(tree, pool); !errors.Is(err, ErrUnknownPreset) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown preset: %v", err)
	}
}

func TestDocErrors(t *testing.T) {
	cases := map[string]struct {
		tree           bool
		in, path, want string
		unknown        bool
	}{
		"unknown tree key":      {tree: true, in: "{colour: red}", path: "colour", want: `unknown key "colour"`, unknown: true},
		"bad filter":            {tree: true, in: "{node_tag_filter: 'a &'}", path: "node_tag_filter", want: "expression ends"},
		"negative per user":     {tree: true, in: "{max_ephemeral_pool_per_user: -1}", path: "max_ephemeral_pool_per_user", want: ">= 0"},
		"preset with parent":    {tree: true, in: "{pool_config_presets: {a: {parent: x}}}", path: "pool_config_presets.a.parent", want: "unknown key", unknown: true},
		"nested presets":        {tree: true, in: "{pool_config_presets: {a: {config_presets: [b]}}}", path: "pool_config_presets.a.config_presets", want: "unknown key", unknown: true},
		"bad preset name":       {tree: true, in: "{pool_config_presets: {a.b: {}}}", path: "pool_config_presets.a.b", want: "preset name"},
		"unknown pool key":      {in: "{wieght: 1}", path: "wieght", want: "unknown key", unknown: true},
		"name is not a key":     {in: "{name: x}", path: "name", want: "unknown key", unknown: true},
		"volume is state":       {in: "{accumulated_resource_volume: {cpu: 1}}", path: "accumulated_resource_volume", want: "unknown key", unknown: true},
		"ephemeral weight":      {in: "{ephemeral_subpool_config: {weight: 2}}", path: "ephemeral_subpool_config.weight", want: "unknown key", unknown: true},
		"offloading share":      {in: "{offloading_settings: {cloud: {share: 2}}}", path: "offloading_settings.cloud.share", want: "(0, 1]"},
		"offloading tree":       {in: "{offloading_settings: {'a b': {}}}", path: "offloading_settings.a b", want: "tree name"},
		"duplicate preset":      {in: "{config_presets: [a, a]}", path: "config_presets[1]", want: "listed twice"},
		"infinite weight":       {in: "{weight: .inf}", path: "weight", want: "finite"},
		"wrong type":            {in: "{max_operation_count: many}", path: "max_operation_count", want: "want an integer"},
		"not a mapping":         {in: "[1, 2]", path: "", want: "mapping"},
		"two documents":         {in: "a: 1\n---\nb: 2\n", path: "", want: "more than one"},
		"lightweight not bool":  {in: "{enable_lightweight_operations: 1}", path: "enable_lightweight_operations", want: "true or false"},
		"forbid not bool":       {in: "{forbid_immediate_operations: yes please}", path: "forbid_immediate_operations", want: "true or false"},
		"ephemeral not mapping": {in: "{ephemeral_subpool_config: 3}", path: "ephemeral_subpool_config", want: "mapping"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var err error
			if tc.tree {
				_, err = ParseTreeDoc("doc", []byte(tc.in))
			} else {
				_, err = ParsePoolDoc("doc", []byte(tc.in))
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error = %v, want *Error", err)
			}
			if e.Path != tc.path || !strings.Contains(e.Msg, tc.want) {
				t.Errorf("error at %q: %q; want at %q containing %q", e.Path, e.Msg, tc.path, tc.want)
			}
			if got := errors.Is(err, ErrUnknownKey); got != tc.unknown {
				t.Errorf("errors.Is(ErrUnknownKey) = %v, want %v", got, tc.unknown)
			}
		})
	}
}

func TestScenarioFilesRejectLiveKeys(t *testing.T) {
	for _, in := range []string{
		"version: 1\ncluster: {resources: {cpu: 1}}\ntree: {node_tag_filter: gpu}\n",
		"version: 1\ncluster: {resources: {cpu: 1}}\npools: [{name: a, config_presets: [x]}]\n",
		"version: 1\ncluster: {resources: {cpu: 1}}\npools: [{name: a}]\nsteps: [{set: {pools: {a: {forbid_immediate_operations: true}}}}]\n",
	} {
		if _, err := Parse("s.yaml", []byte(in)); !errors.Is(err, ErrUnknownKey) {
			t.Errorf("%q: error = %v, want an unknown key", in, err)
		}
	}
}

func TestTreesFileOptionsAndPresets(t *testing.T) {
	f, err := ParseTrees("trees.yaml", []byte(`
version: 1
trees:
  - name: physical
    config:
      node_tag_filter: "!gpu"
      pool_config_presets: {capped: {resource_limits: {cpu: 5}, max_running_operation_count: 1}}
    pools:
      - {name: research, config_presets: [capped], create_ephemeral_subpools: true}
      - {name: research$alice, parent: research, max_running_operation_count: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	tr := f.Trees[0]
	if tr.Doc.Options.NodeTagFilter != "!gpu" || !tr.PoolDocs[0].Options.CreateEphemeralSubpools {
		t.Errorf("options lost: %+v", tr.Doc.Options)
	}
	if got := tr.Pools[0].ResourceLimits.Values[scheduler.CPU]; got != 5 {
		t.Errorf("preset not applied to the effective config: limit cpu %v", got)
	}
	if tr.PoolDocs[0].Config.ResourceLimits.Set != 0 {
		t.Errorf("preset leaked into the pool's own keys")
	}
	for _, bad := range []struct{ in, want string }{
		{"version: 1\ntrees: [{name: a, pools: [{name: x, config_presets: [nope]}]}]", "trees[0].pools[0].config_presets"},
		{"version: 1\ntrees: [{name: a, pools: [{name: 'x y'}]}]", "trees[0].pools[0].name"},
		{"version: 1\ntrees: [{name: a, config: {pool_config_presets: {p: {weight: -1}}}, pools: [{name: x, config_presets: [p]}]}]", "weight"},
	} {
		if _, err := ParseTrees("t.yaml", []byte(bad.in)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v does not name %q", bad.in, err, bad.want)
		}
	}
}

func TestConfigDocs(t *testing.T) {
	if keys := TreeConfigDoc(scheduler.DefaultTreeConfig()).Keys; keys != nil {
		t.Errorf("default tree config gives keys %v", keys)
	}
	doc, err := ParseTreeDoc("tree", []byte(`{max_operation_count: 7, integral_guarantees: {smooth_period: 10s}, main_resource: cpu}`))
	if err != nil {
		t.Fatal(err)
	}
	got := TreeConfigDoc(doc.Config)
	if diff := cmp.Diff([]string{"integral_guarantees.smooth_period", "max_operation_count"}, got.Keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	data, _ := json.Marshal(EncodeTreeDoc(got))
	back, err := ParseTreeDoc("back", data)
	if err != nil || !cmp.Equal(back.Config, doc.Config) {
		t.Errorf("TreeConfigDoc does not round-trip: %s %v", data, err)
	}
	pool, err := ParsePoolDoc("pool", []byte(fullPool))
	if err != nil {
		t.Fatal(err)
	}
	pd := PoolConfigDoc(pool.Config)
	data, _ = json.Marshal(EncodePoolDoc(pd))
	pback, err := ParsePoolDoc("back", data)
	if err != nil || !cmp.Equal(pback.Config, pool.Config) {
		t.Errorf("PoolConfigDoc does not round-trip: %s %v\n%s", data, err, cmp.Diff(pool.Config, pback.Config))
	}
	if keys := PoolConfigDoc(scheduler.PoolConfig{Name: "x"}).Keys; keys != nil {
		t.Errorf("empty pool gives keys %v", keys)
	}
}
