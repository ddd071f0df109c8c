package treeconf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The fuzz targets of this file feed arbitrary documents to the decoders of
// the configuration bucket's values. A tree, pool or cluster document is
// decoded when it is written (from what a user sent) and again whenever the
// bucket is read (on every start and every watch update), from the
// canonical JSON the write stored. So: a bad document is refused with a
// *RuleError naming the object, never a panic; an accepted one encodes to
// JSON that decodes to the same value and encodes to the same bytes again.

// Documents of the package's tests and of the examples, as seeds.
var (
	fuzzTreeDocs = []string{
		"",
		"{}",
		`{main_resource: gpu, nodes_filter: "gpu&!(spot)", max_ephemeral_pools_per_user: 2,
pool_config_presets: {capped: {resource_limits: {gpu: 8}}}, fair_share_preemption_timeout: 1m}`,
		`{main_resource: cpu, node_tag_filter: "!gpu"}`,
		`{node_tag_filter: "ssd & !gpu"}`,
		`{integral_guarantees: {smooth_period: 30s}, max_operation_count: 100000}`,
		`{"integral_guarantees":{"pool_capacity_saturation_period":"1h0m0s","smooth_period":"30s"}}`,
		`{"fair_share_starvation_timeout":"1m0s","main_resource":"gpu","max_ephemeral_pool_per_user":2,"node_tag_filter":"gpu & !spot","pool_config_presets":{"capped":{"resource_limits":{"gpu":8}}}}`,
		"main_resource: cpu\npool_config_presets: {small: {max_running_operation_count: 2}}\n",
		"{node_tag_filter: cloud}",
		// JSON as other writers produce it: escaped characters, 0.0.
		`{"default_parent_pool":"r\u00e9search","fair_share_starvation_tolerance":0.0,"non_preemptible_resource_usage_threshold":{"cpu":"0","memory":"1.5Gi"}}`,
		// Refused.
		"{node_tag_filter: 'a & (b'}",
		"{colour: red}",
		"{max_operation_count: -1.5}",
		"[1, 2]",
		"{a: [}",
	}
	fuzzPoolDocs = []string{
		"",
		"{}",
		"{parent: research, weight: 2, offloading_settings: {cloud: {share: 0.5}}}",
		`{create_ephemeral_subpools: true,
ephemeral_subpool_config: {mode: fifo, max_running_operation_count: 1, max_operation_count: 4, resource_limits: {cpu: 8}}}`,
		"{weight: 2}",
		"{max_running_operation_count: 5, max_operation_count: 3}",
		"{mode: fifo, create_ephemeral_subpools: true}",
		"{parent: project-root, strong_guarantee_resources: {cpu: 1}}",
		"{strong_guarantee_resources: {cpu: 100}, weight: 1, max_running_operation_count: 10, max_operation_count: 50}",
		"{integral_guarantees: {guarantee_type: burst, resource_flow: {cpu: 10}, burst_guarantee_resources: {cpu: 40}}}",
		"{integral_guarantees: {guarantee_type: relaxed, resource_flow: {cpu: 20}}, config_presets: [small]}",
		"{mode: fair_share, strong_guarantee_resources: {}, integral_guarantees: {}}",
		`{"parent":"r\u00e9search","weight":0.0,"resource_limits":{"cpu":0.0},"config_presets":["sm\u0061ll"]}`,
		// Refused.
		"{weight: {a: [}}",
		"{offloading_settings: {cloud: {pool: nope, share: 2}}}",
		"{weight: .nan}",
		"{resource_limits: {disk: 1}}",
		"{config_presets: [a, a]}",
	}
	fuzzClusterDocs = []string{"", "{}", `{"default_tree":"a"}`, "default_tree: physical", "{default_tree: null}", "{colour: red}", "{default_tree: 5}", "[a]", `{"default_tree":"ph\u00fdsical"}`}
)

// decoderRules are the rules a decoding error may carry (fromScenario).
var decoderRules = []Rule{RuleInvalidValue, RuleUnknownKey, RuleDuplicateName, RuleWeight, RuleNodeTagFilter}

// checkDecodeError fails unless err is what the decoders document: a
// *RuleError of a decoding rule, wrapping ErrInvalid, naming the object
// (tree, pool) in its fields and its text, with a message.
func checkDecodeError(t *testing.T, err error, tree, pool string) {
	t.Helper()
	var re *RuleError
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T) is not a *RuleError", err, err)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("error %v does not wrap ErrInvalid", err)
	}
	if !containsRule(decoderRules, re.Rule) {
		t.Errorf("error %v: rule %q is not a decoding rule", err, re.Rule)
	}
	if re.Tree != tree || re.Pool != pool {
		t.Errorf("error %v names tree %q pool %q, want %q %q", err, re.Tree, re.Pool, tree, pool)
	}
	if strings.TrimSpace(re.Msg) == "" {
		t.Errorf("error %v has no message", err)
	}
	text := err.Error()
	if !strings.HasPrefix(text, "treeconf: ") || strings.HasPrefix(text, "treeconf::") {
		t.Errorf("error text %q is not \"treeconf: \" and the object or the message", text)
	}
	if tree != "" && !strings.Contains(text, fmt.Sprintf("tree %q", tree)) {
		t.Errorf("error text %q does not name tree %q", text, tree)
	}
	if pool != "" && !strings.Contains(text, fmt.Sprintf("pool %q", pool)) {
		t.Errorf("error text %q does not name pool %q", text, pool)
	}
}

func containsRule(rules []Rule, r Rule) bool {
	for _, x := range rules {
		if x == r {
			return true
		}
	}
	return false
}

// checkRoundTrip checks that the canonical JSON of an accepted value v
// decodes to v again and encodes to the same bytes.
func checkRoundTrip[T any](t *testing.T, v T, encode func(T) ([]byte, error), decode func([]byte) (T, error)) {
	t.Helper()
	stored, err := encode(v)
	if err != nil {
		t.Fatalf("an accepted document does not encode: %v\nvalue: %+v", err, v)
	}
	back, err := decode(stored)
	if err != nil {
		t.Fatalf("the stored document %s does not decode: %v", stored, err)
	}
	if diff := cmp.Diff(v, back); diff != "" {
		t.Errorf("the stored document %s decodes to another value (-accepted +read back):\n%s", stored, diff)
	}
	again, err := encode(back)
	if err != nil {
		t.Fatalf("the value read back does not encode: %v", err)
	}
	if !bytes.Equal(stored, again) {
		t.Errorf("the canonical document is not stable:\nstored    %s\nre-encoded %s", stored, again)
	}
}

// scenarioTestdata reads a document of internal/scenario's tests.
func scenarioTestdata(f *testing.F, name string) []byte {
	data, err := os.ReadFile(filepath.Join("..", "scenario", "testdata", name))
	if err != nil {
		f.Fatal(err)
	}
	return data
}

// FuzzDecodeTree: DecodeTree refuses with a *RuleError naming the tree, or
// accepts a tree whose JSON round-trips (checkRoundTrip) and whose stored
// node_tag_filter parses to itself.
func FuzzDecodeTree(f *testing.F) {
	for _, d := range fuzzTreeDocs {
		f.Add([]byte(d))
	}
	f.Add(scenarioTestdata(f, "full-tree.yaml")) // every tree key
	const name = "physical"
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := DecodeTree(name, data)
		if err != nil {
			checkDecodeError(t, err, name, "")
			return
		}
		if tree.Name != name {
			t.Errorf("decoded tree is named %q, want %q", tree.Name, name)
		}
		filter, err := tree.NodeFilter()
		if err != nil {
			t.Errorf("the stored node_tag_filter %q does not parse: %v", tree.Options.NodeTagFilter, err)
		} else if filter.String() != tree.Options.NodeTagFilter {
			t.Errorf("the stored node_tag_filter %q is not canonical (%q)", tree.Options.NodeTagFilter, filter)
		}
		checkRoundTrip(t, tree, Tree.JSON, func(b []byte) (Tree, error) { return DecodeTree(name, b) })
	})
}

// FuzzDecodePool: DecodePool refuses with a *RuleError naming the tree and
// the pool, or accepts a pool named as asked whose JSON round-trips.
func FuzzDecodePool(f *testing.F) {
	for _, d := range fuzzPoolDocs {
		f.Add([]byte(d))
	}
	f.Add(scenarioTestdata(f, "full-pool.yaml")) // every pool key
	const tree, name = "physical", "research$alice"
	f.Fuzz(func(t *testing.T, data []byte) {
		pool, err := DecodePool(tree, name, data)
		if err != nil {
			checkDecodeError(t, err, tree, name)
			return
		}
		if pool.Name() != name {
			t.Errorf("decoded pool is named %q, want %q", pool.Name(), name)
		}
		checkRoundTrip(t, pool, Pool.JSON, func(b []byte) (Pool, error) { return DecodePool(tree, name, b) })
	})
}

// FuzzDecodeCluster: decodeCluster refuses with a *RuleError (the cluster
// document belongs to no tree or pool), or accepts attributes whose JSON
// round-trips.
func FuzzDecodeCluster(f *testing.F) {
	for _, d := range fuzzClusterDocs {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decodeCluster(data)
		if err != nil {
			checkDecodeError(t, err, "", "")
			return
		}
		checkRoundTrip(t, c, Cluster.JSON, decodeCluster)
	})
}
