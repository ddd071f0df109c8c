package sim

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/sharetree/sharetree/internal/scenario"
)

// FuzzSim parses simulation files and runs the small ones. Properties:
// nothing panics; a refusal is an *scenario.Error wrapping
// ErrInvalidScenario; a parsed file's workload is ordered by submit time
// with unique ids; a run never fails (ErrSimulation would be the
// scheduler's code refusing what the file's checks let through), never
// uses more than the cluster, and accounts for every job.
func FuzzSim(f *testing.F) {
	example, err := os.ReadFile("../../cmd/sharetree/examples/sim.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	for _, s := range []string{
		strings.Replace(guaranteedDoc, "%s", "", 1),
		"version: 1\ncluster: {nodes: [{resources: {cpu: 4}}]}\nworkload: [{id: a, tasks: [{jobs: 8, resources: {cpu: 1}, duration: 10s}]}]\nsimulation: {duration: 1m}\n",
		"version: 1\ncluster: {nodes: [{count: 2, resources: {cpu: 2, user_slots: 2}}]}\npools: [{name: p, max_running_operation_count: 1, mode: fifo}]\n" +
			"workload: [{id: a, pool: p, repeat: {count: 3, every: 1s}, preemption_mode: graceful, tasks: [{jobs: 3, resources: {cpu: 1}, duration: 2s}]}]\nsimulation: {duration: 30s, heartbeat_period: 100ms}\n",
		"version: 1\ncluster: {resources: {cpu: 4}}\n",
		"{}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := scenario.ParseSim("fuzz.yaml", data)
		if err != nil {
			var se *scenario.Error
			if !errors.Is(err, scenario.ErrInvalidScenario) || !errors.As(err, &se) {
				t.Fatalf("refusal %T %v is not a *scenario.Error wrapping ErrInvalidScenario", err, err)
			}
			return
		}
		ids := map[string]bool{}
		jobs := 0
		for k, op := range file.Workload {
			if ids[string(op.ID)] {
				t.Fatalf("operation id %s twice", op.ID)
			}
			ids[string(op.ID)] = true
			if k > 0 && op.SubmitAt < file.Workload[k-1].SubmitAt {
				t.Fatalf("workload out of order at %d", k)
			}
			for _, task := range op.Tasks {
				jobs += task.Jobs
			}
		}
		// Run only what is quick: a fuzzer's file may ask for hours.
		passes := int64(file.Simulation.Duration/file.Simulation.HeartbeatPeriod) * int64(len(file.Cluster.Nodes))
		if passes > 20_000 || jobs > 2_000 || len(file.Cluster.Nodes) > 64 || len(file.Workload) > 200 || file.Simulation.Duration/file.Tree.FairShareUpdatePeriod > 5_000 ||
			file.Simulation.Duration/file.Simulation.SamplePeriod > 5_000 {
			return
		}
		res, err := Run(file)
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		done := 0
		for _, o := range res.Operations {
			done += o.Completed
			if o.Completed > o.Jobs {
				t.Fatalf("operation %s completed %d of %d jobs", o.ID, o.Completed, o.Jobs)
			}
		}
		if done != res.Counts.JobCompletions || res.Counts.JobStarts < done {
			t.Fatalf("%d completions counted, %d by the operations, %d starts", res.Counts.JobCompletions, done, res.Counts.JobStarts)
		}
		for _, s := range res.Samples {
			if !res.Total.Dominates(s.Pools[0].Usage) {
				t.Fatalf("at %s usage %v exceeds the cluster %v", s.At, s.Pools[0].Usage, res.Total)
			}
		}
	})
}
