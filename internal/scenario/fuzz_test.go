package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
)

// The fuzz targets hold the parsers to the project's rule for bad input: a
// clear, typed error naming what was wrong, never a panic, and nothing
// corrupted; and where a document has an encoder, encoding loses nothing.

// scenarioSeeds are small hand-written scenarios: edges of the format that
// the public files do not reach.
var scenarioSeeds = []string{
	"",
	"~",
	"version: 1\n",
	"version: 1\ncluster: {resources: {cpu: 10, user_slots: 10}}\n",
	"version: 1\ncluster: {resources: {}}\noperations: [{id: o, demand: {cpu: 1}}]\n",
	"version: 1\ncluster: {nodes: [{count: 2, resources: {cpu: 4, memory: 1Gi}, tags: [ssd]}]}\n" +
		"pools: [{name: a, mode: fifo, fifo_sort_parameters: [start_time, weight]}]\n" +
		"operations: [{id: o1, pool: a, start_time: 5s, jobs: [{count: 3, running: 1, resources: {cpu: 1}}]}, " +
		"{id: o2, pool: a, demand: {cpu: 2}, usage: {cpu: 1}}]\nupdate: {elapsed: 0.5, repeat: 3}\n",
	"version: 1\ncluster: {resources: {cpu: 100}}\ntree: {main_resource: cpu, integral_guarantees: {smooth_period: 1s}}\n" +
		"pools: [{name: p, strong_guarantee_resources: {cpu: 10}, resource_limits: {cpu: 0}, " +
		"integral_guarantees: {guarantee_type: burst, resource_flow: {cpu: 1}, burst_guarantee_resources: {cpu: 5}}, " +
		"accumulated_resource_volume: {cpu: 1e300}}, {name: q, parent: p, max_running_operation_count: 0, max_operation_count: 0}]\n" +
		"operations: [{id: x, pool: q, demand: {cpu: 1}}, {id: y, pool: p, weight: 0, demand: {cpu: 1e300}}]\n",
	"version: 1\ncluster: {resources: {cpu: 10}}\npools: [{name: a, max_running_operation_count: 1}]\n" +
		"operations: [{id: o1, pool: a, demand: {cpu: 5}}, {id: o2, pool: a, demand: {cpu: 5}}]\n" +
		"steps: [{update: {elapsed: 60s}}, {remove_operations: [o1], add_operations: [{id: o3, pool: a}], " +
		"set: {pools: {a: {weight: 2, accumulated_resource_volume: {cpu: 1}}}, operations: {o2: {jobs: []}}, tree: {main_resource: memory}}}]\n",
	"version: 1\ncluster: {resources: {cpu: 1}}\npools: [{name: a}]\noperations: [{id: a}]\n",
	"version: 1\ncluster: {resources: {cpu: 1}}\noperations: [{id: \"<Root>\"}]\n",
	"{\"version\": 1, \"cluster\": {\"resources\": {\"cpu\": 1}}, \"tolerance\": \"1e-3\"}",
	"version: 1\ncluster: &c {resources: {cpu: 1}}\nname: *c\n",
	"version: 1\ncluster: {nodes: [{count: 2, resources: {cpu: 1e308}}]}\n",
	"version: 1\ncluster: {resources: {cpu: 1}}\nexpect: [{element: \"<Root>\", attribute: fair_share.total, value: {cpu: 1}}]\n",
}

// treeDocSeeds and poolDocSeeds are hand-written tree and pool documents.
var treeDocSeeds = []string{
	fullTree, "", "{}", "{max_operation_count: 7}", "{integral_guarantees: {}}",
	"{integral_guarantees: {should_distribute_free_volume_among_children: true}}",
	"{node_tag_filter: 'a & !(b | c)', nodes_filter: x}", "{pool_config_presets: {}}",
	"{pool_config_presets: {p: {ephemeral_subpool_config: {mode: fifo}, offloading_settings: {t: {share: 0.5}}}}}",
	"{fair_share_update_period: 0.000000001, fair_share_starvation_timeout: 9223372036.8547}",
	"{non_preemptible_resource_usage_threshold: {memory: 1Ti}, default_parent_pool: \"a\\tb\"}",
	"{default_parent_pool: \"a\\Nb\"}", "{default_parent_pool: research$alice}",
}

var poolDocSeeds = []string{
	fullPool, "", "{}", "{weight: 1}", "{parent: \"\"}", "{mode: fair_share, strong_guarantee_resources: {}, integral_guarantees: {}}",
	"{config_presets: []}", "{fifo_sort_parameters: []}", "{offloading_settings: {}}",
	"{ephemeral_subpool_config: {}}", "{integral_guarantees: {guarantee_type: relaxed, resource_flow: {cpu: 0}}}",
	"{weight: 1e308, max_operation_count: 9007199254740992.0}",
	"{parent: \"a\\Nb\"}", "{config_presets: [\"\\x80\"]}", "{parent: research$alice}",
}

// treesSeeds are hand-written trees files.
var treesSeeds = []string{
	"version: 1\ntrees: [{name: a}]\n",
	"version: 1\ndefault_tree: b\ntrees: [{name: a}, {name: b, config: {main_resource: memory}, pools: [{name: x, accumulated_resource_volume: {cpu: 1}}]}]\n",
	"version: 1\ntrees: [{name: a, config: {pool_config_presets: {p: {weight: 2}}}, pools: [{name: x, config_presets: [p]}, {name: x$u, parent: x}]}]\n",
	"version: 1\ntrees: [{name: a, pools: [{name: y, parent: x}, {name: x}]}]\n",
	"version: 1\ntrees: []\n",
}

// readSeeds returns the contents of the files matching pattern (none when
// the pattern matches nothing).
func readSeeds(f *testing.F, pattern string) [][]byte {
	f.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, data)
	}
	return out
}

// checkInvalid is the property of every content error of the package's
// parsers: an *Error that wraps ErrInvalidScenario, names the file given
// and says why.
func checkInvalid(t *testing.T, fn, file string, data []byte, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%s(%q) error %v (%T) is not an *Error", fn, data, err, err)
	}
	if !errors.Is(err, ErrInvalidScenario) {
		t.Fatalf("%s(%q) error %v does not wrap ErrInvalidScenario", fn, data, err)
	}
	if e.Msg == "" || e.File != file {
		t.Fatalf("%s(%q) error %#v: want file %q and a message", fn, data, e, file)
	}
}

// runBudget bounds the engine work of one fuzz input (element updates): the
// format allows a million repeats or nodes, which is legitimate input but
// would make every execution of the fuzzer take seconds.
const runBudget = 20_000

// runCost estimates the element updates Run performs for f.
func runCost(f *File) int {
	cost := 0
	for _, s := range f.Steps {
		size := 1 + len(s.Pools) + len(f.Cluster.Nodes)
		for _, op := range s.Operations {
			size += 1 + len(op.Spec.Jobs)
		}
		cost += max(s.Update.Repeat, 1) * size
		if cost > runBudget {
			break
		}
	}
	return cost
}

// checkFinite fails when any number reachable from v is NaN or infinite: the
// report promises plain JSON numbers, and its vectors would print a NaN or
// an infinity as 0, hiding it.
func checkFinite(t *testing.T, where string, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.Float64:
		if x := v.Float(); math.IsNaN(x) || math.IsInf(x, 0) {
			t.Fatalf("report: %s is %g", where, x)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			checkFinite(t, where, v.Elem())
		}
	case reflect.Array, reflect.Slice:
		for i := range v.Len() {
			checkFinite(t, where, v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			checkFinite(t, where+"."+v.Type().Field(i).Name, v.Field(i))
		}
	}
}

// FuzzParse runs scenario bytes through the code path of `sharetree
// fairshare` (see checkScenario).
func FuzzParse(f *testing.F) {
	for _, data := range readSeeds(f, "testdata/public/*") {
		f.Add(data)
	}
	for _, data := range readSeeds(f, "../../cmd/sharetree/examples/demo.yaml") {
		f.Add(data)
	}
	for _, s := range scenarioSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkScenario)
}

// FuzzRunGenerated builds a well-formed scenario from the fuzzer's bytes
// (genScenario: pools, operations and steps with extreme numbers, so that
// most inputs parse and reach the engine, which byte-level mutation of YAML
// rarely does) and holds it to checkScenario's properties.
func FuzzRunGenerated(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add([]byte("\xff\x00\xff\x00\x7f\x80\x01\xfe sharetree what-if"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkScenario(t, genScenario(data))
	})
}

// checkScenario parses data and, when it parses, runs it as `sharetree
// fairshare` does: Run, then Check, WriteTable and the JSON encoding the
// command prints. Properties: nothing panics; every Parse error is an
// *Error wrapping ErrInvalidScenario; Run fails on a parsed scenario only
// with such an *Error (configuration the engine refuses, which run.go
// documents as bad input), never with an internal failure; a report has
// one step per scenario step, unique element names per step, no NaN or
// infinity anywhere, and encodes to valid JSON; Check and WriteTable
// succeed.
func checkScenario(t *testing.T, data []byte) {
	const name = "fuzz.yaml"
	file, err := Parse(name, data)
	if err != nil {
		checkInvalid(t, "Parse", name, data, err)
		return
	}
	if file == nil || len(file.Steps) == 0 {
		t.Fatalf("Parse(%q) = %+v: no steps", data, file)
	}
	if runCost(file) > runBudget {
		return
	}
	rep, err := Run(file)
	if err != nil {
		checkInvalid(t, "Run of Parse", name, data, err)
		return
	}
	if len(rep.Steps) != len(file.Steps) {
		t.Fatalf("report has %d steps for %d scenario steps", len(rep.Steps), len(file.Steps))
	}
	for si, st := range rep.Steps {
		seen := map[string]bool{}
		for _, e := range st.Elements {
			if seen[e.Name] {
				t.Fatalf("report step %d lists element %q twice", si, e.Name)
			}
			seen[e.Name] = true
			checkFinite(t, fmt.Sprintf("steps[%d].%s", si, e.Name), reflect.ValueOf(e).Elem())
		}
	}
	for si, st := range rep.Steps {
		checkShareBounds(t, si, st)
	}
	if _, err := Check(file, rep); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if err := WriteTable(io.Discard, rep, file.Cluster.Total); err != nil {
		t.Fatalf("WriteTable: %v", err)
	}
	out, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatalf("encoding the report: %v", err)
	}
	if !json.Valid(out) {
		t.Fatalf("the report's JSON is not valid:\n%s", out)
	}
}

// fuzzShareTol is the absolute tolerance of checkShareBounds (the engine's
// per-level epsilon is 1e-9; the property tests allow 1e-6).
const fuzzShareTol = 1e-6

// checkShareBounds holds a step's report to the engine's invariants: the
// root gets at most the cluster, no element gets more than its limits, and
// the children of a pool together get at most what it gets.
func checkShareBounds(t *testing.T, si int, st StepReport) {
	t.Helper()
	sums := map[string]scheduler.Share{}
	for _, e := range st.Elements {
		fs := e.FairShare.Total
		if e.Parent != "" {
			sum := sums[e.Parent]
			for r := range sum {
				sum[r] += fs[r]
			}
			sums[e.Parent] = sum
		}
		for r, v := range fs {
			if e.Kind == "root" && v > 1+fuzzShareTol {
				t.Fatalf("step %d: the root's fair share %v exceeds the cluster in %s", si, fs, scheduler.ResourceType(r))
			}
			if v > e.LimitsShare[r]+fuzzShareTol {
				t.Fatalf("step %d: %s's fair share %v exceeds its limits share %v in %s", si, e.Name, fs, e.LimitsShare, scheduler.ResourceType(r))
			}
		}
	}
	for _, e := range st.Elements {
		sum, ok := sums[e.Name]
		if !ok {
			continue
		}
		for r, v := range sum {
			if v > e.FairShare.Total[r]+fuzzShareTol {
				t.Fatalf("step %d: the children of %s get %v, more than its fair share %v in %s", si, e.Name, sum, e.FairShare.Total, scheduler.ResourceType(r))
			}
		}
	}
}

// picker hands out choices read from the fuzzer's bytes; past their end
// every choice is the first.
type picker struct{ data []byte }

func (p *picker) pick(n int) int {
	if len(p.data) == 0 || n <= 1 {
		return 0
	}
	b := p.data[0]
	p.data = p.data[1:]
	return int(b) % n
}

func (p *picker) of(choices ...string) string { return choices[p.pick(len(choices))] }

// Values the generator draws from: the edges of each key's range. Amounts
// reach both ends of the range the engine accepts (scheduler.MinAmount,
// scheduler.MaxAmount): amounts that far apart once overflowed its
// arithmetic to infinities and NaN.
var (
	genAmounts   = []string{"0", "1", "0.5", "3", "10", "100", "0.01", "1e9", "1e15", "1Ti", "1e-9", "1e18"}
	genWeights   = []string{"1", "0.5", "2", "1.4901161193847656e-08", "67108864", "1000"}
	genDurations = []string{"0s", "1ns", "1s", "60s", "1h", "2562047h", "0.001"}
	genResources = []string{"cpu", "user_slots", "memory", "gpu", "network"}
)

// genResourceMap writes a resource map of up to three resources.
func genResourceMap(p *picker) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range p.pick(4) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s: %s", p.of(genResources...), p.of(genAmounts...))
	}
	b.WriteString("}")
	return dedupeKeys(b.String())
}

// dedupeKeys drops repeated keys of a one-line flow mapping, so the
// generator does not spend its inputs on duplicate-key errors.
func dedupeKeys(m string) string {
	inner := strings.TrimSuffix(strings.TrimPrefix(m, "{"), "}")
	if inner == "" {
		return m
	}
	seen := map[string]bool{}
	var kept []string
	for _, kv := range strings.Split(inner, ", ") {
		k, _, _ := strings.Cut(kv, ":")
		if !seen[k] {
			seen[k] = true
			kept = append(kept, kv)
		}
	}
	return "{" + strings.Join(kept, ", ") + "}"
}

// genPool writes pool i: a parent among the earlier pools, and a choice of
// the pool keys with edge values.
func genPool(p *picker, i int) string {
	var keys []string
	if i > 0 && p.pick(2) == 1 {
		keys = append(keys, fmt.Sprintf("parent: p%d", p.pick(i)))
	}
	opt := func(key, val string) {
		if p.pick(2) == 1 {
			keys = append(keys, key+": "+val)
		}
	}
	opt("weight", p.of(genWeights...))
	opt("mode", p.of("fair_share", "fifo"))
	opt("strong_guarantee_resources", "{cpu: "+p.of(genAmounts...)+"}")
	opt("resource_limits", genResourceMap(p))
	opt("max_running_operation_count", p.of("0", "1", "2", "8"))
	opt("fair_share_starvation_tolerance", p.of("0", "0.5", "1"))
	opt("fifo_sort_parameters", p.of("[start_time]", "[weight, pending_job_count]"))
	if p.pick(2) == 1 {
		ig := "{guarantee_type: " + p.of("none", "burst", "relaxed")
		ig += ", resource_flow: {cpu: " + p.of(genAmounts...) + "}"
		if strings.Contains(ig, "burst") {
			ig += ", burst_guarantee_resources: {cpu: " + p.of(genAmounts...) + "}"
		}
		if p.pick(2) == 1 {
			ig += ", relaxed_share_multiplier_limit: " + p.of("1", "3", "10")
		}
		if p.pick(2) == 1 {
			ig += ", can_accept_free_volume: " + p.of("true", "false")
		}
		keys = append(keys, "integral_guarantees: "+ig+"}")
	}
	opt("accumulated_resource_volume", genResourceMap(p))
	return fmt.Sprintf("{name: p%d%s}", i, prefixed(keys))
}

// genOperation writes an operation with id, in one of the pools or the
// root, with jobs or absolute demand and usage.
func genOperation(p *picker, id string, pools int) string {
	var keys []string
	if pools > 0 && p.pick(3) > 0 {
		keys = append(keys, fmt.Sprintf("pool: p%d", p.pick(pools)))
	}
	opt := func(key, val string) {
		if p.pick(2) == 1 {
			keys = append(keys, key+": "+val)
		}
	}
	keys = append(keys, genLoad(p)...)
	opt("weight", p.of(genWeights...))
	opt("start_time", p.of(genDurations...))
	opt("resource_limits", genResourceMap(p))
	opt("is_gang", p.of("true", "false"))
	return fmt.Sprintf("{id: %s%s}", id, prefixed(keys))
}

// genLoad writes an operation's jobs, or its demand and usage (usage a
// fraction of demand, so that the pair is valid).
func genLoad(p *picker) []string {
	switch p.pick(3) {
	case 0:
		count := p.of("0", "1", "3", "20")
		return []string{fmt.Sprintf("jobs: [{count: %s, running: %s, resources: %s}]", count,
			p.of("0", "1", count), genResourceMap(p))}
	case 1:
		d := genResourceMap(p)
		return []string{"demand: " + d, "usage: " + p.of("{}", d)}
	}
	return nil
}

func prefixed(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	return ", " + strings.Join(keys, ", ")
}

// genScenario writes a scenario from data: a cluster, up to four pools, up
// to four operations, an update and up to three steps that set, add and
// remove.
func genScenario(data []byte) []byte {
	p := &picker{data: data}
	var b strings.Builder
	b.WriteString("version: 1\n")
	if p.pick(3) == 0 {
		fmt.Fprintf(&b, "cluster: {nodes: [{count: %s, resources: %s}]}\n", p.of("1", "3"), genResourceMap(p))
	} else {
		fmt.Fprintf(&b, "cluster: {resources: %s}\n", genResourceMap(p))
	}
	if p.pick(2) == 1 {
		fmt.Fprintf(&b, "tree: {main_resource: %s, integral_guarantees: {smooth_period: %s}}\n", p.of("cpu", "memory"), p.of(genDurations...))
	}
	pools := p.pick(5)
	if pools > 0 {
		b.WriteString("pools:\n")
		for i := range pools {
			fmt.Fprintf(&b, "  - %s\n", genPool(p, i))
		}
	}
	ops := p.pick(5)
	if ops > 0 {
		b.WriteString("operations:\n")
		for i := range ops {
			fmt.Fprintf(&b, "  - %s\n", genOperation(p, fmt.Sprintf("o%d", i), pools))
		}
	}
	fmt.Fprintf(&b, "update: {elapsed: %s, repeat: %s}\n", p.of(genDurations...), p.of("1", "2", "5"))
	if steps := p.pick(4); steps > 0 {
		b.WriteString("steps:\n")
		next := ops
		for range steps {
			var keys []string
			if ops > 0 && p.pick(2) == 1 {
				keys = append(keys, fmt.Sprintf("remove_operations: [o%d]", p.pick(ops)))
			}
			if p.pick(2) == 1 {
				keys = append(keys, fmt.Sprintf("add_operations: [%s]", genOperation(p, fmt.Sprintf("o%d", next), pools)))
				next++
			}
			if pools > 0 && p.pick(2) == 1 {
				keys = append(keys, fmt.Sprintf("set: {pools: {p%d: {weight: %s, resource_limits: %s}}}", p.pick(pools),
					p.of(genWeights...), genResourceMap(p)))
			}
			if p.pick(2) == 1 {
				keys = append(keys, fmt.Sprintf("update: {elapsed: %s}", p.of(genDurations...)))
			}
			fmt.Fprintf(&b, "  - {%s}\n", strings.TrimPrefix(prefixed(keys), ", "))
		}
	}
	return []byte(b.String())
}

// roundTripTree checks that doc, encoded as JSON and parsed again, is doc.
func roundTripTree(t *testing.T, doc TreeDoc) {
	t.Helper()
	enc, err := json.Marshal(EncodeTreeDoc(doc))
	if err != nil {
		t.Fatalf("encoding %+v: %v", doc, err)
	}
	back, err := ParseTreeDoc("encoded", enc)
	if err != nil {
		t.Fatalf("parsing the encoded tree %s: %v", enc, err)
	}
	if diff := cmp.Diff(doc, back); diff != "" {
		t.Fatalf("tree round trip through %s (-parsed +reparsed):\n%s", enc, diff)
	}
}

// roundTripPool checks that doc, encoded as JSON and parsed again, is doc
// (the name is not part of the encoding).
func roundTripPool(t *testing.T, doc PoolDoc) {
	t.Helper()
	enc, err := json.Marshal(EncodePoolDoc(doc))
	if err != nil {
		t.Fatalf("encoding %+v: %v", doc, err)
	}
	back, err := ParsePoolDoc("encoded", enc)
	if err != nil {
		t.Fatalf("parsing the encoded pool %s: %v", enc, err)
	}
	back.Config.Name = doc.Config.Name
	if diff := cmp.Diff(doc, back); diff != "" {
		t.Fatalf("pool round trip through %s (-parsed +reparsed):\n%s", enc, diff)
	}
}

// FuzzParseTreeDoc checks ParseTreeDoc: no panic; errors are *Error
// wrapping ErrInvalidScenario; a document it accepts encodes
// (EncodeTreeDoc) to JSON that parses back to an equal document.
func FuzzParseTreeDoc(f *testing.F) {
	for _, s := range treeDocSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ParseTreeDoc("tree", data)
		if err != nil {
			checkInvalid(t, "ParseTreeDoc", "tree", data, err)
			return
		}
		roundTripTree(t, doc)
	})
}

// FuzzPatchTreeDoc checks PatchTreeDoc on a parsed base: no panic; errors
// are *Error wrapping ErrInvalidScenario; the base document is never
// changed, whether the patch applies or not; a patched document round-trips
// through EncodeTreeDoc.
func FuzzPatchTreeDoc(f *testing.F) {
	for _, base := range treeDocSeeds {
		for _, patch := range treeDocSeeds {
			f.Add([]byte(base), []byte(patch))
		}
	}
	f.Fuzz(func(t *testing.T, base, patch []byte) {
		doc, err := ParseTreeDoc("base", base)
		if err != nil {
			doc = DefaultTreeDoc()
		}
		// A deep copy made by encoding: the round trip property says the
		// encoding loses nothing.
		before, err := ParseTreeDoc("copy", mustJSON(t, EncodeTreeDoc(doc)))
		if err != nil {
			t.Fatalf("copying the base: %v", err)
		}
		out, err := PatchTreeDoc("patch", doc, patch)
		if diff := cmp.Diff(before, doc); diff != "" {
			t.Fatalf("PatchTreeDoc(%q) changed its base (-before +after):\n%s", patch, diff)
		}
		if err != nil {
			checkInvalid(t, "PatchTreeDoc", "patch", patch, err)
			return
		}
		roundTripTree(t, out)
	})
}

// FuzzParsePoolDoc checks ParsePoolDoc: no panic; errors are *Error
// wrapping ErrInvalidScenario; a document it accepts encodes
// (EncodePoolDoc) to JSON that parses back to an equal document.
func FuzzParsePoolDoc(f *testing.F) {
	for _, s := range poolDocSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ParsePoolDoc("pool", data)
		if err != nil {
			checkInvalid(t, "ParsePoolDoc", "pool", data, err)
			return
		}
		roundTripPool(t, doc)
	})
}

// FuzzParseTrees checks ParseTrees and DecodeTrees on the same bytes: no
// panic; errors are *Error wrapping ErrInvalidScenario; DecodeTrees, which
// checks a subset of ParseTrees' rules, accepts whatever ParseTrees accepts
// and gives the same documents; every tree and pool document it gives
// round-trips through its encoder; a parsed tree's Config is its document's.
func FuzzParseTrees(f *testing.F) {
	for _, data := range readSeeds(f, "../../cmd/sharetree/examples/pool-trees.yaml") {
		f.Add(data)
	}
	for _, s := range treesSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "trees.yaml"
		parsed, perr := ParseTrees(name, data)
		if perr != nil {
			checkInvalid(t, "ParseTrees", name, data, perr)
		}
		decoded, derr := DecodeTrees(name, data)
		if derr != nil {
			checkInvalid(t, "DecodeTrees", name, data, derr)
			if perr == nil {
				t.Fatalf("ParseTrees accepts %q but DecodeTrees rejects it: %v", data, derr)
			}
			return
		}
		for _, tr := range decoded.Trees {
			roundTripTree(t, tr.Doc)
			for _, pd := range tr.PoolDocs {
				roundTripPool(t, pd)
			}
		}
		if perr != nil {
			return
		}
		for i, tr := range parsed.Trees {
			if diff := cmp.Diff(tr.Doc.Config, tr.Config); diff != "" {
				t.Fatalf("tree %q: Config is not Doc.Config (-doc +config):\n%s", tr.Name, diff)
			}
			if diff := cmp.Diff(decoded.Trees[i].Doc, tr.Doc); diff != "" {
				t.Fatalf("tree %q: DecodeTrees and ParseTrees disagree (-decoded +parsed):\n%s", tr.Name, diff)
			}
			if diff := cmp.Diff(decoded.Trees[i].PoolDocs, tr.PoolDocs); diff != "" {
				t.Fatalf("tree %q pools: DecodeTrees and ParseTrees disagree (-decoded +parsed):\n%s", tr.Name, diff)
			}
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
