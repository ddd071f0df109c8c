package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// twoTrees: physical owns the nodes without the gpu tag, gpu the others;
// batch offloads a quarter of each operation's jobs to gpu's training.
const twoTrees = `
version: 1
default_tree: physical
trees:
  - name: physical
    config: {node_tag_filter: "!gpu"}
    pools:
      - {name: research}
      - name: batch
        offloading_settings: {gpu: {pool: training, share: 0.25}}
      - name: teams
        create_ephemeral_subpools: true
        offloading_settings: {gpu: {pool: training}}
  - name: gpu
    config: {node_tag_filter: gpu}
    pools:
      - {name: training}
`

func gpuOnOdd(i int) []string {
	if i%2 == 1 {
		return []string{"gpu"}
	}
	return nil
}

// completedOnce reads the job events of both trees and checks that every
// job of op completed exactly once; it returns how many ran in each tree.
func (c *cluster) completedOnce(t *testing.T, op string, jobs int) map[string]int {
	t.Helper()
	var perTree, done map[string]int
	// Both trees' job events are read again until they hold every job (a
	// batch of job ends may be published after the operation completed).
	filters := make([]string, 0, 2)
	for _, tree := range []string{"physical", "gpu"} {
		filter, _ := subjects.EventsFilter(tree, subjects.EventJob)
		filters = append(filters, filter)
	}
	testutil.WaitFor(t, 20*time.Second, fmt.Sprintf("job events of %d distinct completed jobs of %s", jobs, op), func() bool {
		perTree, done = map[string]int{}, map[string]int{}
		for k, tree := range []string{"physical", "gpu"} {
			for _, ev := range c.events(t, filters[k]) {
				for _, j := range ev.GetJobs().GetJobs() {
					if j.GetState() != pb.JobState_JOB_STATE_COMPLETED {
						continue
					}
					o, task, idx := splitJob(t, j.GetJobId())
					if o != op {
						continue
					}
					done[fmt.Sprintf("%s/%s", task, idx)]++
					perTree[tree]++
				}
			}
		}
		return len(done) >= jobs
	})
	if len(done) != jobs {
		t.Errorf("%d distinct jobs completed, want %d", len(done), jobs)
	}
	for k, n := range done {
		if n != 1 {
			t.Errorf("job %s completed %d times", k, n)
		}
	}
	return perTree
}

func TestOperationRunsInTwoTreesAtOnce(t *testing.T) {
	c := startClusterWith(t, twoTrees, 2, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4}, gpuOnOdd)
	testutil.WaitFor(t, 10*time.Second, "each tree to own one node", func() bool {
		p, g := c.srv.System().Result("physical"), c.srv.System().Result("gpu")
		return p != nil && g != nil && p.Total[scheduler.CPU] == 4 && g.Total[scheduler.CPU] == 4
	})
	spec := simulated("research", 40, 1, 300*time.Millisecond)
	spec.PoolTrees = []string{"physical", "gpu"}
	spec.SchedulingOptionsPerPoolTree = map[string]*pb.PoolTreeOptions{"gpu": {Pool: "training"}}
	id := c.submit(t, spec)
	// Both trees run its jobs at the same time, each on its own node.
	testutil.WaitFor(t, 20*time.Second, "the operation to run in both trees at once", func() bool {
		return c.agents[0].Stats().RunningJobs > 0 && c.agents[1].Stats().RunningJobs > 0
	})
	st := c.waitState(t, id, pb.OperationState_OPERATION_STATE_COMPLETED, 60*time.Second)
	if got := st.GetJobs().GetCompleted(); got != 40 {
		t.Errorf("%d jobs completed, want 40", got)
	}
	if got := treesOf(st); got != "[physical/research gpu/training]" {
		t.Errorf("trees = %v", got)
	}
	perTree := c.completedOnce(t, id, 40)
	if perTree["physical"] == 0 || perTree["gpu"] == 0 {
		t.Errorf("jobs per tree = %v, want some in each", perTree)
	}
	started := c.agents[0].Stats().JobsStarted + c.agents[1].Stats().JobsStarted
	if started != 40 {
		t.Errorf("the agents started %d jobs, want 40 (each once)", started)
	}
}

func TestOffloadingRunsAShareOfAPoolsJobsInAnotherTree(t *testing.T) {
	c := startClusterWith(t, twoTrees, 2, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4}, gpuOnOdd)
	testutil.WaitFor(t, 10*time.Second, "each tree to own one node", func() bool {
		p, g := c.srv.System().Result("physical"), c.srv.System().Result("gpu")
		return p != nil && g != nil && p.Total[scheduler.CPU] == 4 && g.Total[scheduler.CPU] == 4
	})
	ctx := context.Background()
	// 40 jobs, share 0.25: gpu may run at most 10 of them.
	id := c.submit(t, simulated("batch", 40, 1, 200*time.Millisecond))
	other := c.submit(t, simulated("research", 4, 1, 100*time.Millisecond))
	st := c.waitState(t, id, pb.OperationState_OPERATION_STATE_COMPLETED, 60*time.Second)
	if got := treesOf(st); got != "[physical/batch gpu/training]" {
		t.Errorf("trees = %v, want the offloading tree listed", got)
	}
	perTree := c.completedOnce(t, id, 40)
	if perTree["gpu"] == 0 || perTree["gpu"] > 10 {
		t.Errorf("gpu ran %d jobs, want 1..10 (a quarter of 40)", perTree["gpu"])
	}
	// An operation in an ephemeral sub-pool follows its parent's settings.
	team := simulated("teams", 1, 1, time.Millisecond)
	team.User = "alice"
	st = c.waitState(t, c.submit(t, team), pb.OperationState_OPERATION_STATE_COMPLETED, 20*time.Second)
	if got := treesOf(st); got != "[physical/teams$alice gpu/training]" {
		t.Errorf("ephemeral sub-pool's operation runs in %v, want teams' offloading tree too", got)
	}
	// An operation outside the offloading pool stays in its tree.
	st, err := c.client.Get(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(st.GetTrees()); n != 1 {
		t.Errorf("research operation runs in %d trees, want 1", n)
	}
}

// treesOf lists an operation's trees as tree/pool.
func treesOf(st *pb.OperationStatus) string {
	var trees []string
	for _, tr := range st.GetTrees() {
		trees = append(trees, tr.GetTree()+"/"+tr.GetPool())
	}
	return fmt.Sprint(trees)
}
