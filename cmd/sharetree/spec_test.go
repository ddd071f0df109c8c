package main

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

func TestParseSpecAcceptsGoDurationsAndShortEnums(t *testing.T) {
	task := func(d time.Duration) *pb.TaskSpec {
		return &pb.TaskSpec{Name: "t", JobCount: 1, JobResources: &pb.Resources{Cpu: 1},
			Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(d)}}
	}
	cases := []struct {
		name, in string
		want     *pb.OperationSpec
	}{
		{"go duration and short enums", `{type: map, preemption_mode: graceful, tasks: [{name: t, job_count: 1, job_resources: {cpu: 1}, simulated_duration: 1h30m}]}`,
			&pb.OperationSpec{Type: pb.OperationType_OPERATION_TYPE_MAP, PreemptionMode: pb.PreemptionMode_PREEMPTION_MODE_GRACEFUL, Tasks: []*pb.TaskSpec{task(90 * time.Minute)}}},
		{"protobuf notation", `{type: OPERATION_TYPE_VANILLA, tasks: [{name: t, job_count: 1, job_resources: {cpu: 1}, simulated_duration: 0.25s}]}`,
			&pb.OperationSpec{Type: pb.OperationType_OPERATION_TYPE_VANILLA, Tasks: []*pb.TaskSpec{task(250 * time.Millisecond)}}},
		{"sub-second go duration", `{tasks: [{name: t, job_count: 1, job_resources: {cpu: 1}, simulated_duration: 250ms}]}`,
			&pb.OperationSpec{Tasks: []*pb.TaskSpec{task(250 * time.Millisecond)}}},
	}
	for _, tc := range cases {
		got, err := parseSpec("spec.yaml", []byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if d := cmp.Diff(tc.want, got, protocmp.Transform()); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
	for _, bad := range []string{`{type: teleport, tasks: []}`, `{tasks: [{simulated_duration: soon}]}`} {
		if _, err := parseSpec("spec.yaml", []byte(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// The graceful-service example's operation spec parses as `op submit -f`
// reads it, asks for graceful preemption with SIGINT, and runs the service.
func TestGracefulServiceExampleSpecParses(t *testing.T) {
	const name = "../../deploy/examples/graceful-service/clique.yaml"
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := parseSpec(name, data)
	if err != nil {
		t.Fatal(err)
	}
	if spec.GetPreemptionMode() != pb.PreemptionMode_PREEMPTION_MODE_GRACEFUL || spec.GetInterruptionSignal() != "SIGINT" {
		t.Errorf("mode %s, signal %q", spec.GetPreemptionMode(), spec.GetInterruptionSignal())
	}
	argv := spec.GetTasks()[0].GetCommand().GetArgv()
	if len(argv) == 0 || argv[0] != "graceful-service" {
		t.Errorf("argv %q", argv)
	}
}

// The short forms are the spec's own fields: a command's environment keeps
// its variables as written, whatever their names.
func TestParseSpecKeepsCommandEnv(t *testing.T) {
	in := `{type: map, tasks: [{name: t, job_count: 1, job_resources: {cpu: 1},
	  command: {argv: [env], env: {type: fast, preemption_mode: graceful, simulated_duration: 1h30m}}}]}`
	got, err := parseSpec("spec.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := &pb.OperationSpec{Type: pb.OperationType_OPERATION_TYPE_MAP, Tasks: []*pb.TaskSpec{{
		Name: "t", JobCount: 1, JobResources: &pb.Resources{Cpu: 1},
		Run: &pb.TaskSpec_Command{Command: &pb.Command{Argv: []string{"env"},
			Env: map[string]string{"type": "fast", "preemption_mode": "graceful", "simulated_duration": "1h30m"}}},
	}}}
	if d := cmp.Diff(want, got, protocmp.Transform()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// Mistakes are refused as usage errors (exit 2) naming the file, the
// place and the key; values JSON cannot carry (NaN, infinities, keys that
// are not strings) included.
func TestParseSpecNamesWhatIsWrong(t *testing.T) {
	tests := []struct{ in, want string }{
		{"weight: .nan", "spec.yaml:1:9: weight: want a finite number, got NaN"},
		{"tasks: [{name: t, job_resources: {cpu: .inf}}]", "spec.yaml:1:40: tasks[0].job_resources.cpu: want a finite number, got +Inf"},
		{"scheduling_options_per_pool_tree: {gpu: {weight: -.inf}}", "spec.yaml:1:50: scheduling_options_per_pool_tree.gpu.weight: want a finite number, got -Inf"},
		{"tasks: [{name: t, command: {env: {1: x}}}]", `spec.yaml:1:35: tasks[0].command.env: key 1 is not a string`},
		{"true: 1", `spec.yaml:1:1: key true is not a string`},
		{"pool: a\ntasks:\n  - name: map\n    job_count: ten\n", `spec.yaml:4:16: tasks[0].job_count: want a 32-bit integer, got "ten"`},
		{"tasks:\n  - job_resources: {cpu: 2, memroy: 4}\n", `spec.yaml:2:29: tasks[0].job_resources: unknown field "memroy" in Resources; did you mean "memory"?`},
		{"type: teleport", `spec.yaml:1:7: type: want one of unspecified, vanilla, map, reduce, map_reduce, sort, merge, got "teleport"`},
		{"# only a comment\n", `spec.yaml: empty spec`},
	}
	for _, tc := range tests {
		_, err := parseSpec("spec.yaml", []byte(tc.in))
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%s: error %v, want a usage error", tc.in, err)
			continue
		}
		if d := cmp.Diff(tc.want, err.Error()); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, d)
		}
	}
}

// The spec `op get -o json` prints (protojson, proto names) reads back as
// the same spec.
func TestPrintedSpecReadsBack(t *testing.T) {
	weight := 2.5
	spec := &pb.OperationSpec{
		Title: "t", Pool: "p", PoolTrees: []string{"a", "b"}, Weight: &weight,
		SchedulingOptionsPerPoolTree: map[string]*pb.PoolTreeOptions{"a": {Pool: "q", ResourceLimits: &pb.ResourceLimits{Cpu: &weight}}},
		PreemptionMode:               pb.PreemptionMode_PREEMPTION_MODE_GRACEFUL, InterruptionSignal: "SIGINT", MaxFailedJobCount: 3,
		Type: pb.OperationType_OPERATION_TYPE_MAP,
		Tasks: []*pb.TaskSpec{
			{Name: "cmd", JobCount: 2, JobResources: &pb.Resources{Cpu: 1, Memory: 1 << 30},
				Run: &pb.TaskSpec_Command{Command: &pb.Command{Argv: []string{"sh", "-c", "x"}, Env: map[string]string{"A": "1"}}}},
			{Name: "sim", JobCount: 1, JobResources: &pb.Resources{UserSlots: 1},
				Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(1500 * time.Millisecond)}},
		},
	}
	var out bytes.Buffer
	if err := writeProto(&out, spec); err != nil {
		t.Fatal(err)
	}
	got, err := parseSpec("printed.json", out.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if d := cmp.Diff(spec, got, protocmp.Transform()); d != "" {
		t.Errorf("(-printed +read):\n%s", d)
	}
}
