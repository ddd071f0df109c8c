package main

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
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
)

// clockStepEnv enables TestWallClockStepsChangeNothing, which steps this
// machine's wall clock (it needs CAP_SYS_TIME, and every other program on
// the machine sees the steps): SHARETREE_CLOCK_STEP_TEST=1 go test
// ./cmd/sharetree -run WallClockSteps.
const clockStepEnv = "SHARETREE_CLOCK_STEP_TEST"

// clockStep is reliability test 21's scheduler clock jump.
const clockStep = 30 * time.Second

// TestWallClockStepsChangeNothing (reliability test 21, the scheduler's
// clock jumping ±30 s) runs a scheduler process with two agents whose
// jobs run through steps of the machine's wall clock, as an NTP
// correction or an operator's `date -s` makes them (the monotonic clock,
// which every timeout is measured on, does not move):
//
//   - 30 s forward, past the 2 s node offline and 4 s node lost timeouts
//     and the 10 s lease: no node goes offline, no job is aborted, the
//     leader keeps its lease and epoch;
//   - 60 s back just after one agent goes silent: that node is taken
//     offline after the offline timeout as measured on the monotonic
//     clock (the poll's bound, 20 s, is shorter than the step: stamps on
//     the wall clock kept it online a minute longer), and the other node
//     stays online with its jobs;
//
// and the clock is stepped back to where it was, also when the test fails.
// The agents' own clocks are also off (one 5 minutes ahead and 10 % fast,
// one 5 minutes behind and 10 % slow), which only the times they report
// show.
func TestWallClockStepsChangeNothing(t *testing.T) {
	if os.Getenv(clockStepEnv) == "" {
		t.Skipf("steps the machine's wall clock; set %s=1 to run it", clockStepEnv)
	}
	step := stepWallClock(t)

	dir, port := t.TempDir(), freePort(t)
	trees := writeFile(t, "trees.yaml", "version: 1\ntrees:\n  - name: physical\n    config: {fair_share_update_period: 50ms}\n    pools:\n      - {name: a}\n")
	sched := launchChild(t, "server", "--data-dir", dir, "--port", strconv.Itoa(port), "--http-addr", "",
		"--pools", trees, "--heartbeat-period", "50ms", "--node-offline-timeout", "2s", "--node-lost-timeout", "4s",
		"--lease-ttl", "10s", "--log-level", "info")
	sched.waitServing(t, 30*time.Second)

	steady, _ := startSkewedAgent(t, sched.url, "steady", 5*time.Minute, 1.1)
	silent, silence := startSkewedAgent(t, sched.url, "silent", -5*time.Minute, 0.9)

	nc, err := nats.Connect(sched.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cl := client.New(nc, 5*time.Second)
	// Four jobs of a minute on 2 + 2 slots: they run through every step.
	id, err := cl.Submit(context.Background(), &pb.OperationSpec{Pool: "a", Tasks: []*pb.TaskSpec{{
		Name: "main", JobCount: 4, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
		Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(time.Minute)},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, "four jobs running on the two nodes", func() bool {
		return steady.Stats().RunningJobs == 2 && silent.Stats().RunningJobs == 2
	})

	// heartbeats waits until both agents have had n more heartbeats
	// answered: the scheduler has seen the wall clock's new time.
	heartbeats := func(n uint64, agents ...*nodeagent.Agent) {
		t.Helper()
		var from []uint64
		for _, a := range agents {
			from = append(from, a.Stats().HeartbeatsOK)
		}
		testutil.WaitFor(t, 20*time.Second, "heartbeats answered after the step", func() bool {
			for k, a := range agents {
				if a.Stats().HeartbeatsOK < from[k]+n {
					return false
				}
			}
			return true
		})
	}
	unchanged := func(when string) {
		t.Helper()
		for _, a := range []*nodeagent.Agent{steady, silent} {
			if st := a.Stats(); st.JobsAborted != 0 || st.RunningJobs != 2 || st.LeaderEpoch != sched.epoch {
				t.Fatalf("%s: agent %s: %d aborted, %d running, leader epoch %d; want 0 aborted, 2 running, epoch %d\n%s",
					when, a.NodeID(), st.JobsAborted, st.RunningJobs, st.LeaderEpoch, sched.epoch, sched.stderr())
			}
		}
		for _, bad := range []string{"node offline", "node lost", "leader lease lost"} {
			if log := sched.stderr(); strings.Contains(log, bad) {
				t.Fatalf("%s: the scheduler logged %q:\n%s", when, bad, log)
			}
		}
		op, err := cl.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("%s: get %s: %v", when, id, err)
		}
		if op.GetState() != pb.OperationState_OPERATION_STATE_RUNNING || op.GetJobs().GetRunning() != 4 {
			t.Fatalf("%s: operation %s is %s with %d running jobs, want running with 4", when, id, op.GetState(), op.GetJobs().GetRunning())
		}
	}

	step(clockStep)
	// 100 heartbeats of 50 ms: 5 s on the monotonic clock, past the
	// offline and lost timeouts.
	heartbeats(100, steady, silent)
	unchanged("after stepping the clock 30s forward")

	// The second agent goes silent, and the clock steps 60 s back (30 s
	// behind where it started): the node is taken offline after 2 s of
	// silence on the monotonic clock, though by the wall clock it was
	// heard 60 s in the future (the poll's bound, 20 s, is shorter than
	// that; stamps on the wall clock kept the node online 62 s). The other
	// node, which goes on heartbeating, stays online with its jobs.
	silence()
	step(-2 * clockStep)
	testutil.WaitFor(t, 20*time.Second, "the silent node taken offline", func() bool {
		return strings.Contains(sched.stderr(), "node offline")
	})
	heartbeats(100, steady)
	if log := sched.stderr(); strings.Contains(log, `msg="node offline" node=steady`) || strings.Contains(log, "leader lease lost") {
		t.Fatalf("after stepping the clock back: the steady node went offline or the lease was lost:\n%s", log)
	}
	if st := steady.Stats(); st.JobsAborted != 0 || st.RunningJobs != 2 || st.LeaderEpoch != sched.epoch {
		t.Fatalf("after stepping the clock back: agent steady: %d aborted, %d running, leader epoch %d; want 0, 2, epoch %d",
			st.JobsAborted, st.RunningJobs, st.LeaderEpoch, sched.epoch)
	}
	step(clockStep) // back to where it was
}

// startSkewedAgent runs an agent with 2 slots whose clock is off by skew
// and runs at rate (1.1: 10 % fast) from the agent's start, until the test
// ends; the function it returns stops the agent's heartbeats (and closes
// its connection) sooner.
func startSkewedAgent(t *testing.T, url, id string, skew time.Duration, rate float64) (*nodeagent.Agent, func()) {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	cfg := nodeagent.DefaultConfig(id, scheduler.Resources{scheduler.CPU: 2, scheduler.UserSlots: 2})
	cfg.HeartbeatPeriod, cfg.WorkDir = 50*time.Millisecond, t.TempDir()
	origin := time.Now()
	cfg.Now = func() time.Time {
		return origin.Add(skew + time.Duration(rate*float64(time.Since(origin))))
	}
	return servertest.RunAgent(t, nc, cfg)
}

// stepWallClock steps this machine's wall clock by d for the rest of the
// test (it needs CAP_SYS_TIME); the test's cleanup steps it back.
func stepWallClock(t *testing.T) func(d time.Duration) {
	t.Helper()
	var stepped time.Duration
	step := func(d time.Duration) {
		t.Helper()
		tv := syscall.NsecToTimeval(time.Now().Add(d).UnixNano())
		if err := syscall.Settimeofday(&tv); err != nil {
			t.Fatalf("step the wall clock by %s: %v (needs CAP_SYS_TIME)", d, err)
		}
		stepped += d
		t.Logf("stepped the wall clock by %s", d)
	}
	step(0) // permission check
	t.Cleanup(func() {
		if stepped != 0 {
			step(-stepped)
		}
	})
	return step
}

// TestWallClockStepKeepsOneLeader (reliability test 21, lease
// double-ownership): a leader and a standby share a NATS server on this
// machine (lease TTL 3 s) while an agent runs jobs; the wall clock steps
// 30 s forward, then back. The NATS server times the lease key's TTL on
// the wall clock, the schedulers on their monotonic clocks: the standby
// never serves, the leader never loses its lease, and the agent stays on
// the leader's epoch with no job aborted. Whether the NATS server expired
// the key early (the leader then writes it again, the standby waits out
// the TTL since the last renewal it saw) is logged.
func TestWallClockStepKeepsOneLeader(t *testing.T) {
	if os.Getenv(clockStepEnv) == "" {
		t.Skipf("steps the machine's wall clock; set %s=1 to run it", clockStepEnv)
	}
	step := stepWallClock(t)
	f := startFailoverPair(t)
	a, b, agent := f.a, f.b, f.agent
	takenAgain := regexp.MustCompile(`lease was gone before its TTL ran out .*; taken again`)
	waited := regexp.MustCompile(`lease is gone before its TTL ran out since its last renewal`)
	oneLeader := func(when string, d time.Duration) {
		t.Helper()
		// Through four TTLs on the monotonic clock, and 40 heartbeats.
		from, ok := time.Now(), agent.Stats().HeartbeatsOK
		testutil.WaitFor(t, 60*time.Second, when+": four lease TTLs and 40 heartbeats", func() bool {
			return time.Since(from) >= d && agent.Stats().HeartbeatsOK >= ok+40
		})
		if b.logged(servingLine, nil) || b.logged(regexp.MustCompile(`leader lease taken`), nil) {
			t.Fatalf("%s: the standby took the lease while the leader led:\n%s", when, b.stderr())
		}
		if strings.Contains(a.stderr(), "leader lease lost") {
			t.Fatalf("%s: the leader lost its lease:\n%s", when, a.stderr())
		}
		if st := agent.Stats(); st.LeaderEpoch != a.epoch || st.JobsAborted != 0 {
			t.Fatalf("%s: agent on epoch %d with %d jobs aborted; want epoch %d, none aborted", when, st.LeaderEpoch, st.JobsAborted, a.epoch)
		}
		t.Logf("%s: the leader wrote the expired key again: %v; the standby waited out a grace: %v",
			when, a.logged(takenAgain, nil), b.logged(waited, nil))
	}
	step(clockStep)
	oneLeader("after stepping the clock 30s forward", 12*time.Second)
	step(-clockStep)
	oneLeader("after stepping it back", 12*time.Second)
}
