package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
)

// flappingTrees: "guaranteed" is promised half of the three nodes' 12
// cores; starvation and the preemption timeout are short.
const flappingTrees = `
version: 1
trees:
  - name: physical
    config:
      fair_share_update_period: 50ms
      fair_share_starvation_timeout: 300ms
      fair_share_aggressive_starvation_timeout: 300ms
      preemptive_scheduling_backoff: 100ms
      allocation_preemption_timeout: 300ms
    pools:
      - {name: guaranteed, strong_guarantee_resources: {cpu: 6}}
      - {name: other}
`

// TestPreemptionUnderNodeFlapping (reliability test 20): an operation of
// process jobs that ignore their interruption signal fills three nodes;
// a starving operation with a guarantee makes the scheduler preempt them
// while one node flaps — cut off behind its proxy until the scheduler
// takes it offline, then back until it is heard again, five times. Every
// job the agents interrupt is interrupted exactly once, however often the
// scheduler repeats the interrupt (in every response, and after the node
// comes back), and is then killed by its agent after the preemption
// timeout and reported aborted; each interruption has one preemption
// event; no job starts twice. Once the flapping stops, the guaranteed
// operation runs at least its guarantee.
func TestPreemptionUnderNodeFlapping(t *testing.T) {
	if testing.Short() {
		t.Skip("runs process jobs on three agents behind proxies")
	}
	srv, nc := servertest.Start(t, flappingTrees, func(c *server.Config) {
		c.HTTPAddr = ""
		c.Actors.HeartbeatPeriod = 50 * time.Millisecond
		c.Actors.NodeOfflineTimeout, c.Actors.NodeLostTimeout = 300*time.Millisecond, time.Minute
	})
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	interrupts := map[string]int{} // job id → interrupts its agent delivered
	agents := make([]*nodeagent.Agent, 3)
	proxies := make([]*chaosProxy, 3)
	for i := range agents {
		id := fmt.Sprintf("node-%d", i)
		proxies[i] = startChaosProxy(t, id, u.Host)
		anc, err := nats.Connect(proxies[i].url(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond), nats.Timeout(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		cfg := nodeagent.DefaultConfig(id, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4})
		cfg.HeartbeatPeriod, cfg.HeartbeatTimeout, cfg.WorkDir = 50*time.Millisecond, time.Second, t.TempDir()
		cfg.OnJobInterrupt = func(in nodeagent.JobInterrupt) {
			mu.Lock()
			defer mu.Unlock()
			interrupts[in.ID]++
		}
		agents[i], _ = servertest.RunAgent(t, anc, cfg)
	}
	cl := client.New(nc, 5*time.Second)
	ctx := context.Background()
	running := func(id string) int64 {
		st, err := cl.Get(ctx, id)
		if err != nil {
			return -1
		}
		return st.GetJobs().GetRunning()
	}
	heavy, err := cl.Submit(ctx, &pb.OperationSpec{Pool: "other", InterruptionSignal: "SIGINT", Tasks: []*pb.TaskSpec{{
		Name: "loop", JobCount: 100, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
		Run: &pb.TaskSpec_Command{Command: &pb.Command{Argv: []string{"sh", "-c", `trap '' INT; while true; do sleep 0.05; done`}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, "the heavy operation to fill the 12 cores", func() bool { return running(heavy) == 12 })

	guaranteed, err := cl.Submit(ctx, &pb.OperationSpec{Pool: "guaranteed", Tasks: []*pb.TaskSpec{{
		Name: "main", JobCount: 1000, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
		Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(time.Hour)},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	// node-2 flaps: cut off until the scheduler takes it offline, then
	// back until its agent is answered twice.
	const flaps = 5
	for k := range flaps {
		off, _ := srv.System().NodeTransitions()
		proxies[2].partition(false)
		testutil.WaitFor(t, 10*time.Second, fmt.Sprintf("node-2 offline (flap %d)", k+1), func() bool {
			o, _ := srv.System().NodeTransitions()
			return o > off
		})
		ok := agents[2].Stats().HeartbeatsOK
		proxies[2].heal()
		testutil.WaitFor(t, 10*time.Second, fmt.Sprintf("node-2 heard again (flap %d)", k+1), func() bool {
			return agents[2].Stats().HeartbeatsOK >= ok+2
		})
	}
	testutil.WaitFor(t, 30*time.Second, "the guaranteed operation to run its guarantee", func() bool { return running(guaranteed) >= 6 })

	// A consistent moment (preemption may go on towards the fair share):
	// every job an agent interrupted was killed after the timeout and
	// reported aborted, and has its preemption event.
	var (
		told   map[string]int // job id → interrupts its agent delivered
		st     nodeagent.Stats
		events map[string]int // job id → preemption events
	)
	testutil.WaitFor(t, 30*time.Second, "every interrupted job killed, reported and in a preemption event", func() bool {
		st = nodeagent.Stats{}
		for _, a := range agents {
			s := a.Stats()
			st.JobsInterrupted += s.JobsInterrupted
			st.InterruptRepeats += s.InterruptRepeats
			st.DuplicateStarts += s.DuplicateStarts
			st.JobsAborted += s.JobsAborted
		}
		mu.Lock()
		told = maps.Clone(interrupts)
		mu.Unlock()
		events = preemptionEvents(t, srv.URL(), heavy, guaranteed)
		n := uint64(len(told))
		return n > 0 && st.JobsAborted == n && st.JobsInterrupted == n && len(events) == len(told)
	})
	for id, n := range told {
		if n != 1 || events[id] != 1 {
			t.Errorf("job %s: interrupted %d times by its agent, %d preemption events; want 1 and 1", id, n, events[id])
		}
	}
	if st.DuplicateStarts != 0 {
		t.Errorf("%d duplicate starts, want none", st.DuplicateStarts)
	}
	jobs := len(told)
	t.Logf("%d flaps of node-2; %d jobs interrupted once each (%d repeated interrupts ignored), %d aborted after the timeout; guaranteed runs %d",
		flaps, jobs, st.InterruptRepeats, st.JobsAborted, running(guaranteed))
}

// preemptionEvents counts the preemption events of each job in the events
// stream, checking that each is of operation from's job for operation for.
func preemptionEvents(t *testing.T, natsURL, from, forOp string) map[string]int {
	t.Helper()
	code, out, errOut := runCLI(t, "events", "--nats-url", natsURL, "--kind", "preemption")
	if code != 0 {
		t.Fatalf("events: exit %d: %s", code, errOut)
	}
	events := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var ev struct {
			Preemption struct {
				JobID          string `json:"job_id"`
				OperationID    string `json:"operation_id"`
				ForOperationID string `json:"for_operation_id"`
			} `json:"preemption"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		if p := ev.Preemption; p.OperationID != from || p.ForOperationID != forOp {
			t.Errorf("preemption event %+v, want %s's job for %s", p, from, forOp)
		}
		events[ev.Preemption.JobID]++
	}
	return events
}
