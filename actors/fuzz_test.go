package actors

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// The fuzz targets of this file feed operation specs and update requests
// as they arrive on the wire (protobuf bytes) to the validation the root
// and the operation actors run on them. Bad input must come back as a typed
// error naming the field, never as a panic; good input must come back in a
// form that validation accepts again unchanged, since a stored operation is
// validated again when it is revived and an update validates the whole spec
// again.

// protoOpts compare protobuf messages field by field; a NaN equals a NaN
// (refused specs and requests carry them, and "not modified" must hold for
// them too).
var protoOpts = cmp.Options{protocmp.Transform(), cmpopts.EquateNaNs()}

// fuzzSpecs are realistic submissions, shaped like the ones the actors' and
// the server's tests build, and a few the validation refuses.
func fuzzSpecs() []*pb.OperationSpec {
	sim := func(d time.Duration) *pb.TaskSpec_SimulatedDuration {
		return &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(d)}
	}
	cmd := func(argv ...string) *pb.TaskSpec_Command {
		return &pb.TaskSpec_Command{Command: &pb.Command{Argv: argv}}
	}
	nan := math.NaN()
	return []*pb.OperationSpec{
		// validSpec of validate_test.go.
		{Pool: "a", Tasks: []*pb.TaskSpec{{JobCount: 2, JobResources: &pb.Resources{Cpu: 1}, Run: sim(1)}}},
		// simulated of the server's e2e tests.
		{Pool: "light", Tasks: []*pb.TaskSpec{{Name: "main", JobCount: 10, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1}, Run: sim(50 * time.Millisecond)}}},
		// A failing command with max_failed_job_count.
		{Pool: "light", MaxFailedJobCount: 2, Tasks: []*pb.TaskSpec{{Name: "bad", JobCount: 1, JobResources: &pb.Resources{Cpu: 1},
			Run: cmd("sh", "-c", "echo boom >&2; exit 3")}}},
		// Graceful preemption with a signal.
		{Pool: "shared", PreemptionMode: pb.PreemptionMode_PREEMPTION_MODE_GRACEFUL, InterruptionSignal: "SIGINT",
			Tasks: []*pb.TaskSpec{{Name: "instance", JobCount: 8, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
				Run: &pb.TaskSpec_Command{Command: &pb.Command{Argv: []string{"server", "--work", "20ms"}, Env: map[string]string{"A": "1"}, WorkingDir: "/tmp"}}}}},
		// Two trees with per-tree options, every optional field set.
		{Title: "train", User: "alice", Pool: "research", PoolTrees: []string{"physical", "gpu"},
			SchedulingOptionsPerPoolTree: map[string]*pb.PoolTreeOptions{
				"gpu":      {Pool: "training", Weight: proto.Float64(3), ResourceLimits: &pb.ResourceLimits{Gpu: proto.Float64(8)}},
				"physical": {Weight: proto.Float64(0.5)},
			},
			Weight: proto.Float64(2), ResourceLimits: &pb.ResourceLimits{Cpu: proto.Float64(16), Memory: proto.Float64(64 << 30)},
			Type: pb.OperationType_OPERATION_TYPE_MAP_REDUCE, InterruptionSignal: "SIGTERM",
			Tasks: []*pb.TaskSpec{
				{Name: "map", JobCount: 100, JobResources: &pb.Resources{Cpu: 2, Memory: 4 << 30, UserSlots: 1}, Run: sim(time.Second)},
				{JobCount: 1, JobResources: &pb.Resources{Gpu: 1, Network: 100}, Run: cmd("reduce")},
			}},
		// Refused: no tasks, a duplicate task name, a NaN weight, a
		// negative limit, a per-tree entry for a tree not listed.
		{Pool: "light"},
		{Tasks: []*pb.TaskSpec{
			{Name: "x", JobCount: 1, JobResources: &pb.Resources{Cpu: 1}, Run: sim(1)},
			{Name: "x", JobCount: 1, JobResources: &pb.Resources{Cpu: 1}, Run: sim(1)},
		}},
		{Weight: &nan, Tasks: []*pb.TaskSpec{{JobCount: 1, JobResources: &pb.Resources{Cpu: 1}, Run: sim(1)}}},
		{ResourceLimits: &pb.ResourceLimits{Cpu: proto.Float64(-1)}, Tasks: []*pb.TaskSpec{{JobCount: 1, JobResources: &pb.Resources{Cpu: 1}, Run: sim(1)}}},
		{SchedulingOptionsPerPoolTree: map[string]*pb.PoolTreeOptions{"b": {}}, Tasks: []*pb.TaskSpec{{JobCount: 1, JobResources: &pb.Resources{Cpu: 1}, Run: sim(1)}}},
	}
}

// fuzzUpdates are update requests like the server's update tests send.
func fuzzUpdates() []*pb.UpdateOperationRequest {
	return []*pb.UpdateOperationRequest{
		{OperationId: "op-1-1", Pool: "heavy", Weight: proto.Float64(5)},
		{ResourceLimits: &pb.ResourceLimits{Cpu: proto.Float64(2)}},
		{ClearResourceLimits: true},
		{Weight: proto.Float64(-1)},
		{ResourceLimits: &pb.ResourceLimits{Cpu: proto.Float64(-1)}},
		{SchedulingOptionsPerPoolTree: map[string]*pb.PoolTreeOptions{"gpu": {Pool: "light"}}},
		{SchedulingOptionsPerPoolTree: map[string]*pb.PoolTreeOptions{"physical": {Pool: "other", Weight: proto.Float64(4), ResourceLimits: &pb.ResourceLimits{UserSlots: proto.Float64(3)}}}},
		{ClearResourceLimits: true, ResourceLimits: &pb.ResourceLimits{}},
		{Pool: "a.b"},
	}
}

func mustMarshal(f *testing.F, m proto.Message) []byte {
	f.Helper()
	data, err := proto.Marshal(m)
	if err != nil {
		f.Fatal(err)
	}
	return data
}

// checkRefusal fails unless e is what the validation documents for bad
// input: an INVALID_ARGUMENT error naming a field, with a message.
func checkRefusal(t *testing.T, what string, e *pb.Error) {
	t.Helper()
	if e.GetCode() != pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT {
		t.Errorf("%s: code %v, want INVALID_ARGUMENT (%v)", what, e.GetCode(), e)
	}
	if e.GetField() == "" {
		t.Errorf("%s: error names no field: %v", what, e)
	}
	if strings.TrimSpace(e.GetMessage()) == "" {
		t.Errorf("%s: error has no message: %v", what, e)
	}
}

// checkAccepted fails unless spec has what normalizeSpec promises of the
// specs it accepts: defaults filled in and every value in its range.
func checkAccepted(t *testing.T, spec *pb.OperationSpec) {
	t.Helper()
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	validWeight := func(w float64) bool { return finite(w) && w >= scheduler.MinWeight && w <= scheduler.MaxWeight }
	validLimits := func(l *pb.ResourceLimits) bool {
		if l == nil {
			return true
		}
		for _, p := range []*float64{l.UserSlots, l.Cpu, l.Gpu, l.Memory, l.Network} {
			if p != nil && (!finite(*p) || *p < 0) {
				return false
			}
		}
		return true
	}
	if len(spec.GetTasks()) == 0 {
		t.Errorf("accepted a spec without tasks")
	}
	names := map[string]bool{}
	for i, task := range spec.GetTasks() {
		if task.GetName() == "" || names[task.GetName()] {
			t.Errorf("tasks[%d]: name %q is empty or not unique", i, task.GetName())
		}
		names[task.GetName()] = true
		if c := task.GetJobCount(); c < 1 || c > MaxJobCount {
			t.Errorf("tasks[%d]: job_count %d", i, c)
		}
		r := task.GetJobResources()
		amounts := []float64{r.GetUserSlots(), r.GetCpu(), r.GetGpu(), r.GetMemory(), r.GetNetwork()}
		some := false
		for _, v := range amounts {
			if !finite(v) || v < 0 {
				t.Errorf("tasks[%d]: job_resources %v", i, r)
			}
			some = some || v > 0
		}
		if !some {
			t.Errorf("tasks[%d]: job_resources need nothing", i)
		}
		switch run := task.GetRun().(type) {
		case *pb.TaskSpec_Command:
			if argv := run.Command.GetArgv(); len(argv) == 0 || argv[0] == "" {
				t.Errorf("tasks[%d]: empty argv", i)
			}
		case *pb.TaskSpec_SimulatedDuration:
			if run.SimulatedDuration.CheckValid() != nil || run.SimulatedDuration.AsDuration() < 0 {
				t.Errorf("tasks[%d]: simulated_duration %v", i, run.SimulatedDuration)
			}
		default:
			t.Errorf("tasks[%d]: no run", i)
		}
	}
	if u := spec.GetUser(); u != "" && (subjects.ValidateToken("user", u) != nil || strings.Contains(u, "$")) {
		t.Errorf("user %q", u)
	}
	if spec.Weight != nil && !validWeight(spec.GetWeight()) {
		t.Errorf("weight %g", spec.GetWeight())
	}
	if !validLimits(spec.GetResourceLimits()) {
		t.Errorf("resource_limits %v", spec.GetResourceLimits())
	}
	if s := spec.GetInterruptionSignal(); s != "" && !contains(knownSignals, s) {
		t.Errorf("interruption_signal %q", s)
	}
	if _, ok := pb.OperationType_name[int32(spec.GetType())]; !ok {
		t.Errorf("type %d", spec.GetType())
	}
	if _, ok := pb.PreemptionMode_name[int32(spec.GetPreemptionMode())]; !ok {
		t.Errorf("preemption_mode %d", spec.GetPreemptionMode())
	}
	if spec.GetMaxFailedJobCount() < 0 {
		t.Errorf("max_failed_job_count %d", spec.GetMaxFailedJobCount())
	}
	if len(spec.GetPoolTrees()) == 0 {
		t.Errorf("pool_trees empty after normalization")
	}
	trees := map[string]bool{}
	for _, tree := range spec.GetPoolTrees() {
		if trees[tree] {
			t.Errorf("tree %q listed twice", tree)
		}
		trees[tree] = true
	}
	for tree, o := range spec.GetSchedulingOptionsPerPoolTree() {
		if !trees[tree] {
			t.Errorf("options for tree %q, not in pool_trees %v", tree, spec.GetPoolTrees())
		}
		if o.Weight != nil && !validWeight(o.GetWeight()) {
			t.Errorf("tree %q: weight %g", tree, o.GetWeight())
		}
		if !validLimits(o.GetResourceLimits()) {
			t.Errorf("tree %q: resource_limits %v", tree, o.GetResourceLimits())
		}
	}
}

// checkTreeOptions runs treeOptions on an accepted spec for each of its
// trees and for probe: no error (everything it converts was validated) and
// options taken from the per-tree entry where it sets them.
func checkTreeOptions(t *testing.T, spec *pb.OperationSpec, probe string) {
	t.Helper()
	for _, tree := range append(append([]string(nil), spec.GetPoolTrees()...), probe) {
		o, perr := treeOptions(spec, tree)
		if perr != nil {
			t.Errorf("treeOptions(%q) of an accepted spec: %v", tree, perr)
			continue
		}
		per := spec.GetSchedulingOptionsPerPoolTree()[tree]
		wantPool := spec.GetPool()
		if per.GetPool() != "" {
			wantPool = per.GetPool()
		}
		if string(o.pool) != wantPool {
			t.Errorf("treeOptions(%q): pool %q, want %q", tree, o.pool, wantPool)
		}
		wantWeight := spec.Weight
		if per != nil && per.Weight != nil {
			wantWeight = per.Weight
		}
		if diff := cmp.Diff(wantWeight, o.weight); diff != "" {
			t.Errorf("treeOptions(%q): weight (-want +got):\n%s", tree, diff)
		}
		wantLimits := spec.GetResourceLimits()
		if per.GetResourceLimits() != nil {
			wantLimits = per.GetResourceLimits()
		}
		lim, err := wire.Limits("", wantLimits)
		if err != nil {
			t.Errorf("treeOptions(%q): limits of an accepted spec: %v", tree, err)
		}
		if diff := cmp.Diff(lim, o.limits); diff != "" {
			t.Errorf("treeOptions(%q): limits (-want +got):\n%s", tree, diff)
		}
	}
}

// FuzzNormalizeSpec: for any payload that decodes as an OperationSpec,
// normalizeSpec does not panic and does not modify its input; it refuses
// with an INVALID_ARGUMENT error naming a field, or accepts a spec that has
// every property checkAccepted checks and is a fixed point: normalizing it
// again (with any default tree, as applyUpdate does with "") gives it back,
// also after the protobuf round trip a stored and revived operation makes.
// treeOptions of an accepted spec succeeds for every tree.
func FuzzNormalizeSpec(f *testing.F) {
	for _, s := range fuzzSpecs() {
		f.Add(mustMarshal(f, s), "physical", "gpu")
	}
	f.Add([]byte{}, "", "")
	f.Fuzz(func(t *testing.T, data []byte, defaultTree, probe string) {
		if defaultTree != "" && subjects.ValidateToken("tree name", defaultTree) != nil {
			// The root's default tree is the name of one of its trees,
			// which the configuration validates as a subject token.
			return
		}
		in := &pb.OperationSpec{}
		if err := proto.Unmarshal(data, in); err != nil {
			return // the server answers "invalid payload" before validation
		}
		before := proto.Clone(in)
		out, perr := normalizeSpec(in, defaultTree)
		if diff := cmp.Diff(before, in, protoOpts); diff != "" {
			t.Errorf("normalizeSpec modified its input (-before +after):\n%s", diff)
		}
		if perr != nil {
			if out != nil {
				t.Errorf("refused with %v but returned a spec", perr)
			}
			checkRefusal(t, "normalizeSpec", perr)
			if !strings.HasPrefix(perr.GetField(), "spec") {
				t.Errorf("field %q does not name a part of the spec", perr.GetField())
			}
			return
		}
		checkAccepted(t, out)
		if len(in.GetPoolTrees()) == 0 {
			if diff := cmp.Diff([]string{defaultTree}, out.GetPoolTrees()); diff != "" {
				t.Errorf("pool_trees of a spec naming none (-want +got):\n%s", diff)
			}
		}
		for _, dt := range []string{defaultTree, "", "other"} {
			again, perr := normalizeSpec(out, dt)
			if perr != nil {
				t.Fatalf("normalizing an accepted spec again (default tree %q): %v\nspec: %v", dt, perr, out)
			}
			if diff := cmp.Diff(out, again, protoOpts); diff != "" {
				t.Errorf("not a fixed point (default tree %q) (-first +second):\n%s", dt, diff)
			}
		}
		stored, err := proto.Marshal(out)
		if err != nil {
			t.Fatalf("marshal an accepted spec: %v", err)
		}
		revived := &pb.OperationSpec{}
		if err := proto.Unmarshal(stored, revived); err != nil {
			t.Fatalf("unmarshal a stored spec: %v", err)
		}
		again, perr := normalizeSpec(revived, "other")
		if perr != nil {
			t.Fatalf("a stored accepted spec is refused on revival: %v", perr)
		}
		if diff := cmp.Diff(out, again, protoOpts); diff != "" {
			t.Errorf("revived spec differs (-stored +revived):\n%s", diff)
		}
		checkTreeOptions(t, out, probe)
	})
}

// frozen is a spec without the fields an update may change.
func frozen(s *pb.OperationSpec) *pb.OperationSpec {
	c := proto.Clone(s).(*pb.OperationSpec)
	c.Weight, c.ResourceLimits, c.Pool, c.SchedulingOptionsPerPoolTree = nil, nil, "", nil
	return c
}

// FuzzApplyUpdate: for an accepted (normalized) spec and any payload that
// decodes as an UpdateOperationRequest, applyUpdate does not panic and
// modifies neither argument; it refuses with an INVALID_ARGUMENT error
// naming a request field (not a "spec." path), or returns a spec that
// normalizeSpec accepts unchanged, that changes only the runtime parameters
// (weight, resource limits, pool, per-tree options) and exactly as the
// request says, and that shares no memory with the request.
func FuzzApplyUpdate(f *testing.F) {
	specs, updates := fuzzSpecs(), fuzzUpdates()
	for i, u := range updates {
		f.Add(mustMarshal(f, specs[i%5]), mustMarshal(f, u))
	}
	f.Fuzz(func(t *testing.T, specData, reqData []byte) {
		in := &pb.OperationSpec{}
		if proto.Unmarshal(specData, in) != nil {
			return
		}
		spec, perr := normalizeSpec(in, "physical")
		if perr != nil {
			return // only accepted specs are ever updated
		}
		req := &pb.UpdateOperationRequest{}
		if proto.Unmarshal(reqData, req) != nil {
			return
		}
		specBefore, reqBefore := proto.Clone(spec), proto.Clone(req)
		out, perr := applyUpdate(spec, req)
		if diff := cmp.Diff(specBefore, spec, protoOpts); diff != "" {
			t.Errorf("applyUpdate modified the operation's spec (-before +after):\n%s", diff)
		}
		if diff := cmp.Diff(reqBefore, req, protoOpts); diff != "" {
			t.Errorf("applyUpdate modified the request (-before +after):\n%s", diff)
		}
		if perr != nil {
			if out != nil {
				t.Errorf("refused with %v but returned a spec", perr)
			}
			checkRefusal(t, "applyUpdate", perr)
			if strings.HasPrefix(perr.GetField(), "spec.") {
				t.Errorf("field %q names the spec, not the request", perr.GetField())
			}
			return
		}
		checkAccepted(t, out)
		again, perr := normalizeSpec(out, "")
		if perr != nil {
			t.Fatalf("normalizing an updated spec: %v", perr)
		}
		if diff := cmp.Diff(out, again, protoOpts); diff != "" {
			t.Errorf("updated spec is not a fixed point (-updated +normalized):\n%s", diff)
		}
		if diff := cmp.Diff(frozen(spec), frozen(out), protoOpts); diff != "" {
			t.Errorf("update changed more than the runtime parameters (-before +after):\n%s", diff)
		}
		checkUpdateApplied(t, spec, req, out)
		for _, tree := range out.GetPoolTrees() {
			if _, perr := treeOptions(out, tree); perr != nil {
				t.Errorf("treeOptions(%q) of an updated spec: %v", tree, perr)
			}
		}
		// The updated spec becomes the operation's; the request's memory
		// must not be part of it.
		outBefore := proto.Clone(out)
		if req.ResourceLimits != nil {
			proto.Reset(req.ResourceLimits)
		}
		for _, o := range req.GetSchedulingOptionsPerPoolTree() {
			if o != nil {
				proto.Reset(o)
			}
		}
		if diff := cmp.Diff(outBefore, out, protoOpts); diff != "" {
			t.Errorf("the updated spec shares memory with the request (-before +after reset of the request):\n%s", diff)
		}
	})
}

// checkUpdateApplied checks that out is spec with req's changes.
func checkUpdateApplied(t *testing.T, spec *pb.OperationSpec, req *pb.UpdateOperationRequest, out *pb.OperationSpec) {
	t.Helper()
	want := proto.Clone(spec).(*pb.OperationSpec)
	if req.Weight != nil {
		want.Weight = proto.Float64(req.GetWeight())
	}
	if req.GetClearResourceLimits() {
		want.ResourceLimits = nil
	}
	if req.ResourceLimits != nil {
		want.ResourceLimits = proto.Clone(req.ResourceLimits).(*pb.ResourceLimits)
	}
	if req.GetPool() != "" {
		want.Pool = req.GetPool()
	}
	for tree, o := range req.GetSchedulingOptionsPerPoolTree() {
		if want.SchedulingOptionsPerPoolTree == nil {
			want.SchedulingOptionsPerPoolTree = map[string]*pb.PoolTreeOptions{}
		}
		cur := want.SchedulingOptionsPerPoolTree[tree]
		if cur == nil {
			cur = &pb.PoolTreeOptions{}
			want.SchedulingOptionsPerPoolTree[tree] = cur
		}
		if o.GetPool() != "" {
			cur.Pool = o.GetPool()
		}
		if o.Weight != nil {
			cur.Weight = proto.Float64(o.GetWeight())
		}
		if o.ResourceLimits != nil {
			cur.ResourceLimits = proto.Clone(o.ResourceLimits).(*pb.ResourceLimits)
		}
	}
	if diff := cmp.Diff(want, out, protoOpts); diff != "" {
		t.Errorf("update not applied as requested (-want +got):\n%s", diff)
	}
}
