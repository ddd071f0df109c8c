package actors

import (
	"testing"

	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler/placement"
)

func validSpec() *pb.OperationSpec {
	return &pb.OperationSpec{Pool: "a", Tasks: []*pb.TaskSpec{{
		JobCount: 2, JobResources: &pb.Resources{Cpu: 1},
		Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(1)},
	}}}
}

func TestNormalizeSpecDefaults(t *testing.T) {
	in := validSpec()
	out, err := normalizeSpec(in, "physical")
	if err != nil {
		t.Fatal(err)
	}
	if out.GetTasks()[0].GetName() != "task0" || len(out.GetPoolTrees()) != 1 || out.GetPoolTrees()[0] != "physical" {
		t.Errorf("defaults not filled: %v", out)
	}
	if in.GetTasks()[0].GetName() != "" || len(in.GetPoolTrees()) != 0 {
		t.Errorf("the submitted spec was modified: %v", in)
	}
}

func TestNormalizeSpecRefusals(t *testing.T) {
	neg, nan := -1.0, 0.0
	nan = nan / nan
	cases := []struct {
		field  string
		mutate func(*pb.OperationSpec)
	}{
		{"spec.tasks", func(s *pb.OperationSpec) { s.Tasks = nil }},
		{"spec.tasks[0].job_count", func(s *pb.OperationSpec) { s.Tasks[0].JobCount = 0 }},
		{"spec.tasks[0].job_count", func(s *pb.OperationSpec) { s.Tasks[0].JobCount = MaxJobCount + 1 }},
		{"spec.tasks[0].job_resources", func(s *pb.OperationSpec) { s.Tasks[0].JobResources = nil }},
		{"spec.tasks[0].job_resources", func(s *pb.OperationSpec) { s.Tasks[0].JobResources.Memory = nan }},
		{"spec.tasks[0]", func(s *pb.OperationSpec) { s.Tasks[0].Run = nil }},
		{"spec.tasks[0].command.argv", func(s *pb.OperationSpec) {
			s.Tasks[0].Run = &pb.TaskSpec_Command{Command: &pb.Command{}}
		}},
		{"spec.tasks[0].command.argv[1]", func(s *pb.OperationSpec) {
			s.Tasks[0].Run = &pb.TaskSpec_Command{Command: &pb.Command{Argv: []string{"echo", "a\x00b"}}}
		}},
		{"spec.tasks[0].command.working_dir", func(s *pb.OperationSpec) {
			s.Tasks[0].Run = &pb.TaskSpec_Command{Command: &pb.Command{Argv: []string{"true"}, WorkingDir: "/tmp\x00"}}
		}},
		{"spec.tasks[0].command.env", func(s *pb.OperationSpec) {
			s.Tasks[0].Run = &pb.TaskSpec_Command{Command: &pb.Command{Argv: []string{"true"}, Env: map[string]string{"": "x"}}}
		}},
		{"spec.tasks[0].command.env", func(s *pb.OperationSpec) {
			s.Tasks[0].Run = &pb.TaskSpec_Command{Command: &pb.Command{Argv: []string{"true"}, Env: map[string]string{"A=B": "x"}}}
		}},
		{"spec.tasks[0].command.env", func(s *pb.OperationSpec) {
			s.Tasks[0].Run = &pb.TaskSpec_Command{Command: &pb.Command{Argv: []string{"true"}, Env: map[string]string{"A": "x\x00"}}}
		}},
		{"spec.tasks[0].job_count", func(s *pb.OperationSpec) {
			s.Tasks[0].JobCount, s.Tasks[0].JobResources = 1000, &pb.Resources{Memory: 2e15} // 2e18 bytes in all
		}},
		{"spec.tasks[1].job_count", func(s *pb.OperationSpec) { // 6e17 + 6e17
			s.Tasks[0].JobResources = &pb.Resources{Memory: 3e17}
			s.Tasks = append(s.Tasks, &pb.TaskSpec{JobCount: 2, JobResources: &pb.Resources{Memory: 3e17},
				Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(1)}})
		}},
		{"spec.tasks[1].name", func(s *pb.OperationSpec) {
			s.Tasks[0].Name = "x"
			s.Tasks = append(s.Tasks, &pb.TaskSpec{Name: "x", JobCount: 1, JobResources: &pb.Resources{Cpu: 1},
				Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(1)}})
		}},
		{"spec.weight", func(s *pb.OperationSpec) { s.Weight = &neg }},
		{"spec.resource_limits", func(s *pb.OperationSpec) { s.ResourceLimits = &pb.ResourceLimits{Cpu: &neg} }},
		{"spec.interruption_signal", func(s *pb.OperationSpec) { s.InterruptionSignal = "SIGFOO" }},
		{"spec.max_failed_job_count", func(s *pb.OperationSpec) { s.MaxFailedJobCount = -1 }},
		{"spec.type", func(s *pb.OperationSpec) { s.Type = 99 }},
		{"spec.preemption_mode", func(s *pb.OperationSpec) { s.PreemptionMode = 7 }},
		{"spec.scheduling_options_per_pool_tree[b]", func(s *pb.OperationSpec) {
			// Two bad entries: the first in sorted order is named, every time.
			s.SchedulingOptionsPerPoolTree = map[string]*pb.PoolTreeOptions{"b": {}, "c": {}, "d": {}, "e": {}}
		}},
		{"spec.pool_trees[1]", func(s *pb.OperationSpec) { s.PoolTrees = []string{"a", "a"} }},
		{"spec.pool", func(s *pb.OperationSpec) { s.Pool = "research.ml" }},
		{"spec.pool", func(s *pb.OperationSpec) { s.Pool = "$sys" }},
		{"spec.pool_trees[1]", func(s *pb.OperationSpec) { s.PoolTrees = []string{"a", "gpu*"} }},
		{"spec.pool_trees[0]", func(s *pb.OperationSpec) { s.PoolTrees = []string{""} }},
		{"spec.scheduling_options_per_pool_tree[a].pool", func(s *pb.OperationSpec) {
			s.SchedulingOptionsPerPoolTree = map[string]*pb.PoolTreeOptions{"a": {Pool: "x y"}}
		}},
		{"spec.scheduling_options_per_pool_tree[b]", func(s *pb.OperationSpec) {
			s.SchedulingOptionsPerPoolTree = map[string]*pb.PoolTreeOptions{"b": {}}
		}},
	}
	for _, tc := range cases {
		s := validSpec()
		tc.mutate(s)
		_, err := normalizeSpec(s, "a")
		if err == nil || err.GetField() != tc.field || err.GetCode() != pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT {
			t.Errorf("want INVALID_ARGUMENT on %s, got %v", tc.field, err)
		}
	}
	if _, err := normalizeSpec(nil, "a"); err == nil || err.GetField() != "spec" {
		t.Errorf("nil spec: %v", err)
	}
}

func TestJobIDFormat(t *testing.T) {
	ref := jobRef{key: placement.JobKey{Operation: "op-3-17", Task: 1, Index: 42}, attempt: 2}
	if got, want := ref.String(), "op-3-17.1.42.2"; got != want {
		t.Errorf("job id = %q, want %q", got, want)
	}
}
