package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// TestKillWithFiveHundredRunningJobs (reliability test 1): 100 nodes run
// 500 jobs of 50 operations in two pools when the scheduler is killed
// with SIGKILL and started again on its store. The new leader (a higher
// epoch) revives every operation with its ten jobs running: the nodes,
// which kept heartbeating into the void, report them and they are adopted
// — none aborted, none started again (I1: each agent started exactly its
// jobs once) — and the pools' fair shares come back within 1 % of what
// they were before the kill. The time from the restart to the last
// operation running again is logged, not asserted.
func TestKillWithFiveHundredRunningJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills scheduler processes with 100 agents")
	}
	if testutil.RaceEnabled {
		t.Skip("100 agents and 500 jobs: the plain run covers it; the race run covers the same paths in the smaller restart tests")
	}
	const nodes, ops, jobsPerOp = 100, 50, 10
	dir, port := t.TempDir(), freePort(t)
	trees := writeFile(t, "trees.yaml", "version: 1\ntrees:\n  - name: physical\n    config: {fair_share_update_period: 100ms, max_running_operation_count_per_pool: 50}\n    pools:\n      - {name: a, weight: 3}\n      - {name: b, weight: 1}\n")
	args := []string{"server", "--data-dir", dir, "--port", strconv.Itoa(port), "--http-addr", "",
		"--pools", trees, "--heartbeat-period", "200ms", "--job-revival-timeout", "3s", "--log-level", "info"}
	first := launchChild(t, args...)
	first.waitServing(t, 30*time.Second)

	agents := make([]*nodeagent.Agent, nodes)
	for i := range agents {
		agents[i] = servertest.StartAgent(t, first.url, fmt.Sprintf("node-%03d", i), scheduler.Resources{scheduler.CPU: 5, scheduler.UserSlots: 5})
	}
	nc, err := nats.Connect(first.url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cl := client.New(nc, 5*time.Second)
	ctx := context.Background()
	for i := range ops {
		// Pool a holds more demand than pool b: 30 and 20 operations.
		pool := "a"
		if i%5 >= 3 {
			pool = "b"
		}
		_, err := cl.Submit(ctx, &pb.OperationSpec{Pool: pool, Tasks: []*pb.TaskSpec{{
			Name: "main", JobCount: jobsPerOp, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
			Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(10 * time.Minute)},
		}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	// allRunning: every operation runs its ten jobs (each asked of its
	// operation actor: a listing's counters are the stored ones).
	allRunning := func() bool {
		list, err := cl.List(ctx, &pb.ListOperationsRequest{})
		if err != nil || len(list) != ops {
			return false
		}
		for _, op := range list {
			st, err := cl.Get(ctx, op.GetId())
			if err != nil || st.GetState() != pb.OperationState_OPERATION_STATE_RUNNING || st.GetJobs().GetRunning() != jobsPerOp {
				return false
			}
		}
		return true
	}
	started := func() (n uint64) {
		for _, a := range agents {
			n += a.Stats().JobsStarted
		}
		return n
	}
	if !testutil.Poll(60*time.Second, func() bool { return started() == ops*jobsPerOp && allRunning() }) {
		list, err := cl.List(ctx, &pb.ListOperationsRequest{})
		states := map[string]int{}
		for _, op := range list {
			if st, err := cl.Get(ctx, op.GetId()); err == nil {
				op = st
			}
			states[fmt.Sprintf("%s/%d running", op.GetState(), op.GetJobs().GetRunning())]++
		}
		t.Fatalf("500 jobs did not run within 60s: the agents started %d; operations %v (%v)", started(), states, err)
	}
	// fairShare reads a pool's fair share of cpu from the orchid.
	fairShare := func(pool string) (float64, bool) {
		subj, err := subjects.Orchid(subjects.OrchidPath{Kind: subjects.OrchidPool, Tree: "physical", Name: pool, Attribute: []string{"fair_share", "total", "cpu"}})
		if err != nil {
			t.Fatal(err)
		}
		body, err := cl.Request(ctx, subj, nil)
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseFloat(string(body), 64)
		return v, err == nil && v > 0
	}
	before := map[string]float64{}
	testutil.WaitFor(t, 10*time.Second, "the pools' fair shares", func() bool {
		for _, p := range []string{"a", "b"} {
			v, ok := fairShare(p)
			if !ok {
				return false
			}
			before[p] = v
		}
		return true
	})

	first.kill(t)
	restart := time.Now()
	second := launchChild(t, args...)
	second.waitServing(t, 30*time.Second)
	if second.epoch <= first.epoch {
		t.Errorf("leader epoch after the restart %d, want above %d", second.epoch, first.epoch)
	}
	testutil.WaitFor(t, 60*time.Second, "every operation revived with its ten jobs running", allRunning)
	revived := time.Since(restart)
	testutil.WaitFor(t, 30*time.Second, "the pools' fair shares within 1% of before the kill", func() bool {
		for p, want := range before {
			got, ok := fairShare(p)
			if !ok || math.Abs(got-want) > 0.01*want {
				return false
			}
		}
		return true
	})

	var aborted, duplicates, over uint64
	for _, a := range agents {
		st := a.Stats()
		aborted, duplicates, over = aborted+st.JobsAborted, duplicates+st.DuplicateStarts, over+st.JobsOverCapacity
		if st.LeaderEpoch != second.epoch {
			t.Errorf("agent %s: leader epoch %d, want %d", a.NodeID(), st.LeaderEpoch, second.epoch)
		}
	}
	if over != 0 {
		t.Errorf("%d jobs started beyond their node's capacity (I2)", over)
	}
	if n := started(); n != ops*jobsPerOp || aborted != 0 || duplicates != 0 {
		t.Errorf("the agents started %d jobs (%d duplicates ignored) and aborted %d: want the 500 started once, none aborted", n, duplicates, aborted)
	}
	t.Logf("epoch %d → %d; every operation running again %s after the restart began (job revival timeout 3s); fair shares a %.4f, b %.4f",
		first.epoch, second.epoch, revived.Round(10*time.Millisecond), before["a"], before["b"])
}
