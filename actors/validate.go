package actors

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// Signals an operation may name as its interruption_signal.
var knownSignals = []string{"SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGKILL"}

// MaxJobCount bounds one task's job count.
const MaxJobCount = 1_000_000

// normalizeSpec validates a submitted spec on its own and returns a copy
// with defaults filled in (task names, the default tree). Tree- and
// node-dependent checks happen in the root.
func normalizeSpec(in *pb.OperationSpec, defaultTree string) (*pb.OperationSpec, *pb.Error) {
	invalid := func(field, format string, args ...any) (*pb.OperationSpec, *pb.Error) {
		return nil, invalidArg(field, format, args...)
	}
	if in == nil {
		return invalid("spec", "missing")
	}
	spec := proto.Clone(in).(*pb.OperationSpec)
	if len(spec.GetTasks()) == 0 {
		return invalid("spec.tasks", "an operation needs at least one task")
	}
	names := map[string]int{}
	var demand scheduler.Resources // all the jobs' resources
	for i, t := range spec.GetTasks() {
		f := fmt.Sprintf("spec.tasks[%d]", i)
		if t.GetName() == "" {
			t.Name = fmt.Sprintf("task%d", i)
		}
		if j, dup := names[t.GetName()]; dup {
			return invalid(f+".name", "%q is also the name of spec.tasks[%d]", t.GetName(), j)
		}
		names[t.GetName()] = i
		if c := t.GetJobCount(); c < 1 || c > MaxJobCount {
			return invalid(f+".job_count", "must be in [1, %d], got %d", MaxJobCount, c)
		}
		res, err := wire.Resources(f+".job_resources", t.GetJobResources())
		if err != nil {
			return invalid(f+".job_resources", "%v", err)
		}
		if res.IsZero() {
			return invalid(f+".job_resources", "a job must need some resource")
		}
		for r, v := range res {
			// The operation's demand is an amount the engine takes (see
			// scheduler.MaxAmount); past it, every update of its trees
			// would be refused.
			if demand[r] += float64(float64(t.GetJobCount()) * v); demand[r] > scheduler.MaxAmount {
				return invalid(f+".job_count", "the operation's jobs need %g %s in all (up to this task), more than the largest amount %g",
					demand[r], scheduler.ResourceType(r), scheduler.MaxAmount)
			}
		}
		switch r := t.GetRun().(type) {
		case *pb.TaskSpec_Command:
			if len(r.Command.GetArgv()) == 0 || r.Command.GetArgv()[0] == "" {
				return invalid(f+".command.argv", "empty; give the program and its arguments")
			}
			if e := checkCommand(f+".command", r.Command); e != nil {
				return nil, e
			}
		case *pb.TaskSpec_SimulatedDuration:
			if err := r.SimulatedDuration.CheckValid(); err != nil || r.SimulatedDuration.AsDuration() < 0 {
				return invalid(f+".simulated_duration", "must be a valid duration >= 0")
			}
		default:
			return invalid(f, "set command or simulated_duration")
		}
	}
	if u := spec.GetUser(); u != "" {
		if err := subjects.ValidateToken("user", u); err != nil || strings.Contains(u, "$") {
			return invalid("spec.user", "%q is not a valid user name (letters, digits, '_' and '-'; it names the user's ephemeral pools)", u)
		}
	}
	if w := spec.Weight; w != nil {
		if err := checkWeight(*w); err != "" {
			return invalid("spec.weight", "%s", err)
		}
	}
	if _, err := wire.Limits("spec.resource_limits", spec.GetResourceLimits()); err != nil {
		return invalid("spec.resource_limits", "%v", err)
	}
	if s := spec.GetInterruptionSignal(); s != "" && !contains(knownSignals, s) {
		return invalid("spec.interruption_signal", "%q is not one of %v", s, knownSignals)
	}
	if _, ok := pb.OperationType_name[int32(spec.GetType())]; !ok {
		return invalid("spec.type", "%d is not an operation type", spec.GetType())
	}
	if _, ok := pb.PreemptionMode_name[int32(spec.GetPreemptionMode())]; !ok {
		return invalid("spec.preemption_mode", "%d is not a preemption mode", spec.GetPreemptionMode())
	}
	if spec.GetMaxFailedJobCount() < 0 {
		return invalid("spec.max_failed_job_count", "must be >= 0, got %d", spec.GetMaxFailedJobCount())
	}
	// Pool and tree names become subject tokens and stored keys; a name no
	// tree could hold is refused here rather than as an unknown pool.
	if p := spec.GetPool(); p != "" {
		if err := subjects.ValidateToken("pool", p); err != nil {
			return invalid("spec.pool", "%s", causeOf(err))
		}
	}
	if len(spec.GetPoolTrees()) == 0 {
		spec.PoolTrees = []string{defaultTree}
	}
	seen := map[string]bool{}
	for i, t := range spec.GetPoolTrees() {
		f := fmt.Sprintf("spec.pool_trees[%d]", i)
		if err := subjects.ValidateToken("tree", t); err != nil {
			return invalid(f, "%s", causeOf(err))
		}
		if seen[t] {
			return invalid(f, "tree %q listed twice", t)
		}
		seen[t] = true
	}
	// Sorted, so the first error reported does not depend on map order.
	for _, tree := range slices.Sorted(maps.Keys(spec.GetSchedulingOptionsPerPoolTree())) {
		o := spec.GetSchedulingOptionsPerPoolTree()[tree]
		f := fmt.Sprintf("spec.scheduling_options_per_pool_tree[%s]", tree)
		if !seen[tree] {
			return invalid(f, "tree %q is not in spec.pool_trees %v", tree, spec.GetPoolTrees())
		}
		if o == nil {
			continue
		}
		if p := o.GetPool(); p != "" {
			if err := subjects.ValidateToken("pool", p); err != nil {
				return invalid(f+".pool", "%s", causeOf(err))
			}
		}
		if w := o.Weight; w != nil {
			if err := checkWeight(*w); err != "" {
				return invalid(f+".weight", "%s", err)
			}
		}
		if _, err := wire.Limits(f+".resource_limits", o.GetResourceLimits()); err != nil {
			return invalid(f+".resource_limits", "%v", err)
		}
	}
	return spec, nil
}

// checkCommand refuses what no process can be started with (the node
// agent's exec would fail every job of the operation): a NUL byte in an
// argument, the working directory or the environment, and an environment
// name that is empty or holds '='. The names are checked in sorted order,
// so the error names the same one every time.
func checkCommand(f string, c *pb.Command) *pb.Error {
	for i, a := range c.GetArgv() {
		if strings.IndexByte(a, 0) >= 0 {
			return invalidArg(fmt.Sprintf("%s.argv[%d]", f, i), "holds a NUL byte, which no process argument can")
		}
	}
	if strings.IndexByte(c.GetWorkingDir(), 0) >= 0 {
		return invalidArg(f+".working_dir", "holds a NUL byte, which no path can")
	}
	for _, k := range slices.Sorted(maps.Keys(c.GetEnv())) {
		switch {
		case k == "":
			return invalidArg(f+".env", "has an empty variable name")
		case strings.ContainsAny(k, "=\x00"):
			return invalidArg(f+".env", "variable name %q holds '=' or a NUL byte", k)
		case strings.IndexByte(c.GetEnv()[k], 0) >= 0:
			return invalidArg(f+".env", "variable %s's value holds a NUL byte", k)
		}
	}
	return nil
}

// invalidArg is normalizeSpec's INVALID_ARGUMENT error for a field:
// "FIELD: what is wrong".
func invalidArg(field, format string, args ...any) *pb.Error {
	return pbErr(pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, field, "%s: %s", field, fmt.Sprintf(format, args...))
}

// causeOf returns a subjects error's text without its sentinel's prefix
// (the field is named by the error's own prefix).
func causeOf(err error) string {
	return strings.TrimPrefix(err.Error(), subjects.ErrInvalidToken.Error()+": ")
}

func checkWeight(w float64) string {
	if math.IsNaN(w) || math.IsInf(w, 0) || w < scheduler.MinWeight || w > scheduler.MaxWeight {
		return fmt.Sprintf("must be a finite number in [%g, %g], got %g", scheduler.MinWeight, scheduler.MaxWeight, w)
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
