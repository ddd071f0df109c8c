package scenario

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
)

// publicDir holds the acceptance scenarios; CI runs from a clone with shared/
// beside the module.
const publicDir = "../../../shared/scenarios/public"

func publicFile(t *testing.T, name string) *File {
	t.Helper()
	path := filepath.Join(publicDir, name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("public scenarios not available: %v", err)
	}
	f, err := ParseFile(path)
	if err != nil {
		t.Fatalf("ParseFile(%s): %v", name, err)
	}
	return f
}

func mustParse(t *testing.T, src string) *File {
	t.Helper()
	f, err := Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return f
}

func ptr[T any](v T) *T { return &v }

func res(pairs ...any) scheduler.Resources {
	return partial(pairs...).Values
}

func partial(pairs ...any) scheduler.PartialResources {
	var p scheduler.PartialResources
	for i := 0; i < len(pairs); i += 2 {
		p = p.With(pairs[i].(scheduler.ResourceType), toFloat(pairs[i+1]))
	}
	return p
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	panic("bad number")
}

func opIDs(ops []Operation) []scheduler.OperationID {
	var ids []scheduler.OperationID
	for _, op := range ops {
		ids = append(ids, op.Spec.ID)
	}
	return ids
}

func TestParsePublicFiles(t *testing.T) {
	entries, err := os.ReadDir(publicDir)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s is absent", publicDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		t.Fatalf("no files in %s", publicDir)
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			f, err := ParseFile(filepath.Join(publicDir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Steps) == 0 {
				t.Fatal("no steps")
			}
			expects := 0
			for i, s := range f.Steps {
				if s.Update.Repeat < 1 {
					t.Errorf("step %d: repeat %d", i, s.Update.Repeat)
				}
				expects += len(s.Expect)
				for _, x := range s.Expect {
					set := 0
					for _, b := range []bool{x.Number != nil, x.String != nil, x.Share != nil} {
						if b {
							set++
						}
					}
					if set != 1 || x.Element == "" || x.Attribute == "" {
						t.Errorf("%s: malformed expectation %+v", x.Path, x)
					}
				}
			}
			if expects == 0 {
				t.Error("no expectations")
			}
			if f.Tolerance <= 0 {
				t.Errorf("tolerance %g", f.Tolerance)
			}
		})
	}
}

func TestPublicProjectPoolsSteps(t *testing.T) {
	f := publicFile(t, "seeds-project-pools.yaml")
	if len(f.Steps) != 2 {
		t.Fatalf("%d steps, want 2", len(f.Steps))
	}
	s0, s1 := f.Steps[0], f.Steps[1]
	if diff := cmp.Diff([]scheduler.OperationID{"adhoc-big", "batch-1", "backup-1"}, opIDs(s0.AddOperations)); diff != "" {
		t.Errorf("step 0 adds (-want +got):\n%s", diff)
	}
	if len(s0.RemoveOperations) != 0 {
		t.Errorf("step 0 removes %v", s0.RemoveOperations)
	}
	if diff := cmp.Diff([]scheduler.OperationID{"adhoc-big"}, s1.RemoveOperations); diff != "" {
		t.Errorf("step 1 removes (-want +got):\n%s", diff)
	}
	wantAdd := []Operation{{Spec: scheduler.Operation{
		ID: "adhoc-small", Pool: "project-adhoc", StartTime: time.Unix(0, 0).UTC(),
		Demand: res(scheduler.CPU, 10), PendingJobCount: 1,
	}}}
	if diff := cmp.Diff(wantAdd, s1.AddOperations); diff != "" {
		t.Errorf("step 1 adds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]scheduler.OperationID{"batch-1", "backup-1", "adhoc-small"}, opIDs(s1.Operations)); diff != "" {
		t.Errorf("step 1 operations (-want +got):\n%s", diff)
	}
	var parents []scheduler.PoolID
	for _, p := range s1.Pools {
		parents = append(parents, p.Config.Parent)
	}
	if diff := cmp.Diff([]scheduler.PoolID{"", "project-root", "project-root", "project-root"}, parents); diff != "" {
		t.Errorf("parents (-want +got):\n%s", diff)
	}
	batch := s0.Pools[2].Config
	if batch.Name != "project-batch" || *batch.Weight != 10 || *batch.MaxRunningOperationCount != 4 ||
		batch.StrongGuaranteeResources != partial(scheduler.CPU, 0) {
		t.Errorf("project-batch = %+v", batch)
	}
	if len(s0.Expect) != 5 || len(s1.Expect) != 6 || s1.Expect[2].Path != "steps[1].expect[2]" {
		t.Errorf("expect counts %d, %d; path %q", len(s0.Expect), len(s1.Expect), s1.Expect[2].Path)
	}
	if got := s1.Expect[2].Share; got == nil || *got != partial(scheduler.CPU, 0.06363636363636363) {
		t.Errorf("share = %v", got)
	}
}

func TestPublicNodesExpanded(t *testing.T) {
	f := publicFile(t, "yt-integ-vector-sg-explicit.json")
	node := res(scheduler.UserSlots, 10, scheduler.CPU, 10, scheduler.Network, 100)
	want := scheduler.Cluster{
		Total: res(scheduler.UserSlots, 30, scheduler.CPU, 30, scheduler.Network, 300),
		Nodes: []scheduler.Node{
			{ID: "node-1", Resources: node},
			{ID: "node-2", Resources: node},
			{ID: "node-3", Resources: node},
		},
	}
	if diff := cmp.Diff(want, f.Cluster); diff != "" {
		t.Errorf("cluster (-want +got):\n%s", diff)
	}
	op1 := f.Steps[0].Operations[1].Spec
	if op1.ID != "op1" || op1.Demand != res(scheduler.UserSlots, 20, scheduler.CPU, 10) ||
		op1.JobResources != res(scheduler.UserSlots, 1, scheduler.CPU, 0.5) || op1.PendingJobCount != 20 || len(op1.Jobs) != 0 {
		t.Errorf("op1 = %+v", op1)
	}
	if f.Tolerance != 0.001 {
		t.Errorf("tolerance %g", f.Tolerance)
	}
}

func TestPublicBinarySuffixAndUpdate(t *testing.T) {
	f := publicFile(t, "seeds-dominant-resource.yaml")
	if got, want := f.Cluster.Total[scheduler.Memory], 180*float64(1<<40); got != want {
		t.Errorf("memory = %g, want %g", got, want)
	}
	if got := f.Steps[0].Operations[0].Spec.Demand[scheduler.Memory]; got != 2*float64(1<<40) {
		t.Errorf("op memory = %g", got)
	}
	if f.Tolerance != 1e-9 {
		t.Errorf("tolerance = %g", f.Tolerance)
	}
	if diff := cmp.Diff(Update{Repeat: 1}, f.Steps[0].Update); diff != "" {
		t.Errorf("default update (-want +got):\n%s", diff)
	}

	g := publicFile(t, "yt-integ-ig-min-share-vs-burst.json")
	if diff := cmp.Diff(Update{Elapsed: 500 * time.Millisecond, HasElapsed: true, Repeat: 2000}, g.Steps[0].Update); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
	if got := g.Steps[0].Tree.Integral.SmoothPeriod; got != 500*time.Millisecond {
		t.Errorf("smooth period %v", got)
	}

	h := publicFile(t, "seeds-integral-attributes.yaml")
	want := res(scheduler.CPU, 60000)
	if got := h.Steps[0].Pools[0].AccumulatedResourceVolume; got == nil || *got != want {
		t.Errorf("volume = %v", got)
	}
	if ig := h.Steps[0].Pools[0].Config.IntegralGuarantees; ig.GuaranteeType != scheduler.GuaranteeBurst ||
		ig.BurstGuaranteeResources != partial(scheduler.CPU, 500) {
		t.Errorf("integral = %+v", ig)
	}
}

func TestParseSingleStepResolved(t *testing.T) {
	f := mustParse(t, `
version: 1
name: small
cluster: {resources: {cpu: 10, memory: 1000Mi, user_slots: "20"}}
tree: {main_resource: cpu, fair_share_preemption_timeout: 45, job_interrupt_timeout: 1m}
pools:
  - {name: a, weight: 2, mode: fifo, fifo_sort_parameters: [pending_allocation_count, weight],
     min_share_resources: {cpu: 5}, accumulated_resource_volume: {cpu: 60}}
operations:
  - id: op
    pool: a
    start_time: 1.5
    jobs:
      - {count: 2, resources: {cpu: 2, memory: 1Gi}, running: 1}
      - {count: 0, resources: {cpu: 0.5}}
      - {count: 3, resources: {cpu: 1, memory: 2Gi}, running: 2}
update: {elapsed: 0.5s}
tolerance: "1e-3"
expect:
  - {element: op, attribute: state, value: running}
  - {element: a, attribute: weight, value: 2}
`)
	start := time.Unix(0, 1500*int64(time.Millisecond)).UTC()
	tree := scheduler.DefaultTreeConfig()
	tree.FairShareStarvationTimeout = 45 * time.Second
	tree.AllocationPreemptionTimeout = time.Minute
	gi := float64(1 << 30)
	op := Operation{
		StartOffset: 1500 * time.Millisecond,
		Spec: scheduler.Operation{
			ID: "op", Pool: "a", StartTime: start,
			Demand:          res(scheduler.CPU, 7, scheduler.Memory, 8*gi),
			Usage:           res(scheduler.CPU, 4, scheduler.Memory, 5*gi),
			JobResources:    res(scheduler.CPU, 1, scheduler.Memory, gi),
			PendingJobCount: 2,
			Jobs: []scheduler.Job{
				{ID: "op/0", Usage: res(scheduler.CPU, 2, scheduler.Memory, gi), StartTime: start},
				{ID: "op/1", Usage: res(scheduler.CPU, 1, scheduler.Memory, 2*gi), StartTime: start},
				{ID: "op/2", Usage: res(scheduler.CPU, 1, scheduler.Memory, 2*gi), StartTime: start},
			},
		},
	}
	want := &File{
		Path: "test.yaml",
		Name: "small",
		Cluster: scheduler.Cluster{
			Total: res(scheduler.CPU, 10, scheduler.Memory, 1000*float64(1<<20), scheduler.UserSlots, 20),
		},
		Tolerance: 1e-3,
		Steps: []Step{{
			Tree: tree,
			Pools: []Pool{{
				Config: scheduler.PoolConfig{
					Name: "a", Weight: ptr(2.0), Mode: scheduler.ModeFIFO,
					FifoSortParameters:       []scheduler.FifoSortParameter{scheduler.FifoSortPendingJobCount, scheduler.FifoSortWeight},
					StrongGuaranteeResources: partial(scheduler.CPU, 5),
				},
				AccumulatedResourceVolume: ptr(res(scheduler.CPU, 60)),
			}},
			AddOperations: []Operation{op},
			Operations:    []Operation{op},
			Update:        Update{Elapsed: 500 * time.Millisecond, HasElapsed: true, Repeat: 1},
			Expect: []Expectation{
				{Path: "expect[0]", Element: "op", Attribute: "state", String: ptr("running")},
				{Path: "expect[1]", Element: "a", Attribute: "weight", Number: ptr(2.0)},
			},
		}},
	}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseStepsResolved(t *testing.T) {
	f := mustParse(t, `
version: 1
cluster: {nodes: [{resources: {cpu: 4}, tags: [ssd]}, {count: 2, resources: {cpu: 8}}]}
pools:
  - {name: p, strong_guarantee_resources: {cpu: 1}, accumulated_resource_volume: {cpu: 10}}
  - {name: q, parent: p, integral_guarantees: {guarantee_type: relaxed, resource_flow: {cpu: 1}}}
operations:
  - {id: a, pool: p, demand: {cpu: 4}, usage: {cpu: 1}}
  - {id: b, pool: q, demand: {cpu: 2}}
update: {elapsed: 10s, repeat: 3}
expect:
  - {element: a, attribute: demand_share, value: {cpu: 0.2}}
steps:
  - remove_operations: [b]
    set:
      operations: {a: {weight: 3}}
    add_operations: [{id: c, demand: {cpu: 1}}]
  - set:
      tree: {max_operation_count: 100, max_running_operation_count: 10}
      pools: {q: {integral_guarantees: {resource_flow: {cpu: 2}}, accumulated_resource_volume: {memory: 1Ki, network: 8.64e18}}}
      operations: {c: {jobs: [{count: 2, resources: {cpu: 1}, running: 2}]}}
    update: {repeat: 2}
    expect: [{element: c, attribute: state, value: running}]
  - set:
      operations: {c: {demand: {cpu: 5}}}
    remove_operations: [a]
    add_operations: [{id: a, pool: q, demand: {cpu: 1}}]
`)
	if len(f.Cluster.Nodes) != 3 || f.Cluster.Nodes[0].Tags[0] != "ssd" || f.Cluster.Nodes[2].ID != "node-3" ||
		f.Cluster.Total != res(scheduler.CPU, 20) {
		t.Errorf("cluster = %+v", f.Cluster)
	}
	if len(f.Steps) != 3 {
		t.Fatalf("%d steps", len(f.Steps))
	}
	s0, s1, s2 := f.Steps[0], f.Steps[1], f.Steps[2]

	// Step 0: the top-level b is removed before it was ever added, so it is
	// neither added nor removed; a carries the set weight.
	if diff := cmp.Diff([]scheduler.OperationID{"a", "c"}, opIDs(s0.AddOperations)); diff != "" {
		t.Errorf("step 0 adds (-want +got):\n%s", diff)
	}
	if len(s0.RemoveOperations) != 0 {
		t.Errorf("step 0 removes %v", s0.RemoveOperations)
	}
	if w := s0.AddOperations[0].Spec.Weight; w == nil || *w != 3 {
		t.Errorf("a weight = %v", w)
	}
	if s0.AddOperations[0].Spec.PendingJobCount != 1 || s0.AddOperations[0].Spec.Usage != res(scheduler.CPU, 1) {
		t.Errorf("a = %+v", s0.AddOperations[0].Spec)
	}
	if v := s0.Pools[0].AccumulatedResourceVolume; v == nil || *v != res(scheduler.CPU, 10) {
		t.Errorf("step 0 volume of p = %v", v)
	}
	if diff := cmp.Diff(Update{Elapsed: 10 * time.Second, HasElapsed: true, Repeat: 3}, s0.Update); diff != "" {
		t.Errorf("step 0 update (-want +got):\n%s", diff)
	}
	if len(s0.Expect) != 0 {
		t.Errorf("step 0 expect = %v", s0.Expect)
	}

	// Step 1: sets only.
	if len(s1.AddOperations) != 0 || len(s1.RemoveOperations) != 0 {
		t.Errorf("step 1 adds %v removes %v", s1.AddOperations, s1.RemoveOperations)
	}
	if s1.Tree.MaxOperationCount != 100 || s1.Tree.MaxRunningOperationCount != 10 || s2.Tree.MaxOperationCount != 100 {
		t.Errorf("tree not carried: %d %d", s1.Tree.MaxOperationCount, s2.Tree.MaxOperationCount)
	}
	if s1.Pools[0].AccumulatedResourceVolume != nil {
		t.Errorf("step 1 carries p's initial volume")
	}
	// A volume may pass the largest amount (1e18): 8.64e18 is a day of a
	// 1e14 flow.
	if v := s1.Pools[1].AccumulatedResourceVolume; v == nil || *v != (scheduler.Resources{scheduler.Memory: 1024, scheduler.Network: 8.64e18}) {
		t.Errorf("step 1 volume of q = %v", v)
	}
	// integral_guarantees is replaced as a whole: guarantee_type falls back to none.
	wantIG := scheduler.IntegralGuarantees{ResourceFlow: partial(scheduler.CPU, 2)}
	if diff := cmp.Diff(wantIG, s1.Pools[1].Config.IntegralGuarantees); diff != "" {
		t.Errorf("q integral (-want +got):\n%s", diff)
	}
	if s0.Pools[1].Config.IntegralGuarantees.GuaranteeType != scheduler.GuaranteeRelaxed {
		t.Errorf("step 0 q changed by a later step")
	}
	if diff := cmp.Diff(Update{Repeat: 2}, s1.Update); diff != "" {
		t.Errorf("step 1 update (-want +got):\n%s", diff)
	}
	c := s1.Operations[1].Spec
	if c.ID != "c" || c.Usage != res(scheduler.CPU, 2) || c.PendingJobCount != 0 || len(c.Jobs) != 2 || c.Jobs[1].ID != "c/1" {
		t.Errorf("c = %+v", c)
	}
	if len(s1.Expect) != 1 || s1.Expect[0].Path != "steps[1].expect[0]" {
		t.Errorf("step 1 expect = %+v", s1.Expect)
	}

	// Step 2: c switches to absolute demand, keeping its usage; a is
	// removed and added again in another pool.
	if diff := cmp.Diff([]scheduler.OperationID{"a"}, s2.RemoveOperations); diff != "" {
		t.Errorf("step 2 removes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]scheduler.OperationID{"c", "a"}, opIDs(s2.Operations)); diff != "" {
		t.Errorf("step 2 operations (-want +got):\n%s", diff)
	}
	c2 := s2.Operations[0].Spec
	if c2.Demand != res(scheduler.CPU, 5) || c2.Usage != res(scheduler.CPU, 2) || len(c2.Jobs) != 0 || !c2.JobResources.IsZero() {
		t.Errorf("c at step 2 = %+v", c2)
	}
	if s2.Operations[1].Spec.Pool != "q" || s2.AddOperations[0].Spec.Pool != "q" {
		t.Errorf("re-added a = %+v", s2.Operations[1].Spec)
	}
	// The top-level expect goes to the last step.
	if len(s2.Expect) != 1 || s2.Expect[0].Path != "expect[0]" {
		t.Errorf("step 2 expect = %+v", s2.Expect)
	}
	if diff := cmp.Diff(Update{Elapsed: 10 * time.Second, HasElapsed: true, Repeat: 3}, s2.Update); diff != "" {
		t.Errorf("step 2 update (-want +got):\n%s", diff)
	}

	// Steps share no memory.
	*s0.AddOperations[0].Spec.Weight = 0
	for _, w := range []*float64{s0.Operations[0].Spec.Weight, s1.Operations[0].Spec.Weight} {
		if w == nil || *w != 3 {
			t.Errorf("steps share pointers: weight %v", w)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	e := &Error{File: "f.yaml", Path: "pools[0].weight", Msg: "line 3: bad"}
	if got := e.Error(); got != "f.yaml: pools[0].weight: line 3: bad" {
		t.Errorf("Error() = %q", got)
	}
	if got := (&Error{File: "f.yaml", Msg: "empty document"}).Error(); got != "f.yaml: empty document" {
		t.Errorf("Error() = %q", got)
	}
	if !errors.Is(e, ErrInvalidScenario) {
		t.Error("not ErrInvalidScenario")
	}

	_, err := Parse("x.yaml", []byte("version: 1\ncluster: {resources: {cpu: 1}}\npools:\n  - {name: a, wieght: 1}\n"))
	want := `x.yaml: pools[0].wieght: line 4: unknown key "wieght" (want one of name, parent, weight,`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %v, want prefix %q", err, want)
	}
}

func TestParseFileMissing(t *testing.T) {
	_, err := ParseFile(filepath.Join(t.TempDir(), "absent.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("error = %v, want fs.ErrNotExist", err)
	}
	var se *Error
	if errors.As(err, &se) || errors.Is(err, ErrInvalidScenario) {
		t.Errorf("a read failure is reported as an invalid scenario: %v", err)
	}
}

func TestParseValueForms(t *testing.T) {
	f := mustParse(t, `
version: 1.0
cluster:
  resources: {cpu: "1.5Ki", memory: 2Ti, gpu: 0, network: 1e3}
tree:
  fair_share_starvation_timeout: 1m
  fair_share_aggressive_starvation_timeout: 90.5
  infer_weight_from_guarantees_share_multiplier: 10
  non_preemptible_resource_usage_threshold: {cpu: 1}
  integral_guarantees: {pool_capacity_saturation_period: 24h, relaxed_share_multiplier_limit: 2}
pools:
  - {name: a, resource_limits: &lim {cpu: 3}, max_operation_count: 10.0}
  - {name: b, resource_limits: *lim}
operations: []
`)
	if got := f.Cluster.Total; got != res(scheduler.CPU, 1536, scheduler.Memory, 2*float64(1<<40), scheduler.Network, 1000) {
		t.Errorf("total = %v", got)
	}
	tr := f.Steps[0].Tree
	if tr.FairShareStarvationTimeout != time.Minute || tr.FairShareAggressiveStarvationTimeout != 90500*time.Millisecond ||
		*tr.InferWeightFromGuaranteesShareMultiplier != 10 || tr.NonPreemptibleResourceUsageThreshold != partial(scheduler.CPU, 1) ||
		tr.Integral.RelaxedShareMultiplierLimit != 2 || tr.Integral.SmoothPeriod != time.Minute {
		t.Errorf("tree = %+v", tr)
	}
	if f.Steps[0].Pools[1].Config.ResourceLimits != partial(scheduler.CPU, 3) || *f.Steps[0].Pools[0].Config.MaxOperationCount != 10 {
		t.Errorf("pools = %+v", f.Steps[0].Pools)
	}
	if len(f.Steps[0].Operations) != 0 || f.Tolerance != defaultTolerance {
		t.Errorf("operations %v tolerance %g", f.Steps[0].Operations, f.Tolerance)
	}
}
