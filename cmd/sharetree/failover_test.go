package main

import (
	"context"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/natsembed"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// logged reports whether the child's recent stderr has a line matching re
// after one matching after (nil: anywhere).
func (c *childScheduler) logged(re, after *regexp.Regexp) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	armed := after == nil
	for _, line := range c.log {
		switch {
		case !armed && after.MatchString(line):
			armed = true
		case armed && re.MatchString(line):
			return true
		}
	}
	return false
}

var (
	standingBy  = regexp.MustCompile(`msg="standing by: another server holds the leader lease" holder=(\S+)`)
	steppedDown = regexp.MustCompile(`msg="no longer the leader; stopping, then standing by"`)
)

// failoverPair is two `sharetree server` processes on one NATS server run
// by the test (lease TTL 3 s): a leads and b stands by behind it; an
// agent runs an operation (id) of 6 jobs of 2 s under a.
type failoverPair struct {
	a, b  *childScheduler
	agent *nodeagent.Agent
	cl    *client.Client
	id    string
}

// startFailoverPair starts the pair and returns once jobs run under a.
func startFailoverPair(t *testing.T) failoverPair {
	t.Helper()
	ns := testutil.StartNATS(t)
	trees := writeFile(t, "trees.yaml", "version: 1\ntrees:\n  - name: physical\n    config: {fair_share_update_period: 50ms}\n    pools:\n      - {name: a}\n")
	args := func(name string) []string {
		return []string{"server", "--nats-url", ns.ClientURL(), "--server-name", name, "--lease-ttl", "3s", "--http-addr", "",
			"--pools", trees, "--heartbeat-period", "50ms", "--job-revival-timeout", "1s", "--log-level", "info"}
	}
	a := launchChild(t, args("a")...)
	a.waitServing(t, 30*time.Second)
	b := launchChild(t, args("b")...)
	testutil.WaitFor(t, 30*time.Second, "b to stand by behind a", func() bool {
		return b.logged(regexp.MustCompile(`holder=a\b`), nil) && b.logged(standingBy, nil)
	})

	agent := servertest.StartAgent(t, ns.ClientURL(), "node-0", scheduler.Resources{scheduler.CPU: 2, scheduler.UserSlots: 2})
	cl := client.New(testutil.Connect(t, ns), 5*time.Second)
	id, err := cl.Submit(context.Background(), &pb.OperationSpec{Pool: "a", Tasks: []*pb.TaskSpec{{
		Name: "main", JobCount: 6, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
		Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(2 * time.Second)},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "jobs to run under a", func() bool { return agent.Stats().RunningJobs > 0 })
	return failoverPair{a: a, b: b, agent: agent, cl: cl, id: id}
}

// TestPausedLeaderStepsDownAndStandsBy (reliability test 4): two scheduler
// processes share a NATS server; the leader is stopped with SIGSTOP until
// the other has taken over (its lease ran out), then continued. The new
// leader serves under a higher epoch; the old one, once continued, steps
// down and stands by behind the new one instead of acting on its stale
// lease. The operation running through all this completes, each of its
// jobs run once and none aborted, and the agent follows the new epoch.
func TestPausedLeaderStepsDownAndStandsBy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and stops scheduler processes")
	}
	f := startFailoverPair(t)
	a, b, agent, cl, id := f.a, f.b, f.agent, f.cl, f.id
	var err error

	paused := time.Now()
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	t.Cleanup(func() {
		if stopped {
			_ = a.cmd.Process.Signal(syscall.SIGCONT)
		}
	})
	b.waitServing(t, 30*time.Second)
	t.Logf("b served %s after a was stopped (lease TTL 3s)", time.Since(paused).Round(time.Millisecond))
	if b.epoch <= a.epoch {
		t.Fatalf("the new leader's epoch %d is not above the old one's %d", b.epoch, a.epoch)
	}
	// a stays stopped for twice the lease's TTL (the row's pause), until
	// the agent follows b, and for 20 heartbeats answered by b after that.
	// Stopped, a keeps its subscriptions: a heartbeat it got would go
	// unanswered (the agent waits out its 5 s timeout). None may go to it
	// once b serves; they did, one in two, while the heartbeat endpoint
	// had a queue group.
	var onB *nodeagent.Stats
	testutil.WaitFor(t, 60*time.Second, "the agent on b's epoch, 2 × TTL after the pause and 20 heartbeats after that", func() bool {
		s := agent.Stats()
		if s.LeaderEpoch != b.epoch {
			return false
		}
		if onB == nil {
			onB = &s
		}
		return time.Since(paused) >= 6*time.Second && s.HeartbeatsOK >= onB.HeartbeatsOK+20
	})
	if s := agent.Stats(); s.HeartbeatsUnanswered != onB.HeartbeatsUnanswered {
		t.Errorf("%d heartbeats went unanswered after the agent followed b, with a stopped; want none (a paused old leader must not swallow heartbeats)",
			s.HeartbeatsUnanswered-onB.HeartbeatsUnanswered)
	}
	// Nor may a request of the operation API, the orchid or the
	// configuration API: each is
	// answered at once (by b), none waits for a stopped a. While they had
	// a queue group, one in two did (the client then waits out its
	// timeout and retries).
	getSubject, err := subjects.Op(id, subjects.OpGet)
	if err != nil {
		t.Fatal(err)
	}
	getData, err := proto.Marshal(&pb.GetOperationRequest{OperationId: id})
	if err != nil {
		t.Fatal(err)
	}
	treesSubject, err := subjects.Orchid(subjects.OrchidPath{Kind: subjects.OrchidTrees})
	if err != nil {
		t.Fatal(err)
	}
	configSubject, err := subjects.Config(subjects.ConfigTrees)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		subject string
		data    []byte
	}{{getSubject, getData}, {treesSubject, nil}, {configSubject, nil}} {
		for k := range 10 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_, err := cl.Request(ctx, r.subject, r.data)
			cancel()
			if err != nil {
				t.Errorf("request %d of 10 on %s with a stopped: %v; want b's answer", k+1, r.subject, err)
			}
		}
	}
	startedUnderB, pause := agent.Stats().JobsStarted, time.Since(paused)
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stopped = false
	testutil.WaitFor(t, 30*time.Second, "the old leader to step down and stand by behind b", func() bool {
		return a.logged(regexp.MustCompile(`holder=b\b`), steppedDown) && a.logged(standingBy, steppedDown)
	})
	if l := a.stderr(); !strings.Contains(l, "leader lease lost") {
		t.Errorf("the old leader did not log why it stepped down:\n%s", l)
	}

	var st *pb.OperationStatus
	testutil.WaitFor(t, 60*time.Second, "the operation to complete under b", func() bool {
		st, err = cl.Get(context.Background(), id)
		return err == nil && st.GetState() == pb.OperationState_OPERATION_STATE_COMPLETED
	})
	if j := st.GetJobs(); j.GetCompleted() != 6 || j.GetFailed() != 0 || j.GetAborted() != 0 {
		t.Errorf("operation jobs %v, want 6 completed, none failed or aborted", j)
	}
	s := agent.Stats()
	if s.JobsStarted != 6 || s.JobsAborted != 0 || s.LeaderEpoch != b.epoch {
		t.Errorf("agent: %d jobs started, %d aborted, epoch %d; want 6 started once each, none aborted, epoch %d",
			s.JobsStarted, s.JobsAborted, s.LeaderEpoch, b.epoch)
	}
	// Whatever a sent once it woke up was refused by the agent (epoch
	// below b's): counted, never acted on.
	t.Logf("paused %s; %d of the 6 jobs had started when a woke up; the agent refused %d responses and %d signals of an older epoch",
		pause.Round(100*time.Millisecond), startedUnderB, s.StaleResponses, s.StaleSignals)
}

// TestKilledLeaderIsReplacedByTheStandby (reliability test 3): two
// scheduler processes share a NATS server run by the test; the leader is
// killed with SIGKILL while jobs run. The standby takes over once the
// lease (3 s) runs out, under a higher epoch; the operation completes,
// each of its jobs run once and none aborted (the standby adopts what the
// agent runs), and the agent follows the new epoch. The time from the
// kill to the standby serving is logged, not asserted.
func TestKilledLeaderIsReplacedByTheStandby(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills scheduler processes")
	}
	f := startFailoverPair(t)
	a, b, agent, cl, id := f.a, f.b, f.agent, f.cl, f.id
	var err error

	killed := time.Now()
	a.kill(t)
	b.waitServing(t, 30*time.Second)
	takeover := time.Since(killed)
	if b.epoch <= a.epoch {
		t.Fatalf("the new leader's epoch %d is not above the old one's %d", b.epoch, a.epoch)
	}
	var st *pb.OperationStatus
	testutil.WaitFor(t, 60*time.Second, "the operation to complete under b", func() bool {
		st, err = cl.Get(context.Background(), id)
		return err == nil && st.GetState() == pb.OperationState_OPERATION_STATE_COMPLETED
	})
	if j := st.GetJobs(); j.GetCompleted() != 6 || j.GetFailed() != 0 || j.GetAborted() != 0 {
		t.Errorf("operation jobs %v, want 6 completed, none failed or aborted", j)
	}
	if s := agent.Stats(); s.JobsStarted != 6 || s.JobsAborted != 0 || s.DuplicateStarts != 0 || s.LeaderEpoch != b.epoch {
		t.Errorf("agent: %d jobs started (%d duplicates), %d aborted, epoch %d; want 6 started once each, none aborted, epoch %d",
			s.JobsStarted, s.DuplicateStarts, s.JobsAborted, s.LeaderEpoch, b.epoch)
	}
	t.Logf("b served %s after a was killed (lease TTL 3s, renewed every 1s); epoch %d → %d", takeover.Round(time.Millisecond), a.epoch, b.epoch)
}

// TestLeaderStandsByAgainAfterNATSComesBack: the NATS server a scheduler
// joined (--nats-url) goes away for longer than the lease's renew
// deadline. The scheduler steps down (it cannot know whether another took
// the lease meanwhile), keeps trying while NATS is away instead of exiting,
// and leads again, under a new epoch, once NATS is back.
func TestLeaderStandsByAgainAfterNATSComesBack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts scheduler processes")
	}
	nc := natsembed.Default(t.TempDir())
	nc.Port = freePort(t)
	ns, err := natsembed.Start(nc, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Stop() })
	trees := writeFile(t, "trees.yaml", "version: 1\ntrees:\n  - name: physical\n    pools:\n      - {name: a}\n")
	s := launchChild(t, "server", "--nats-url", ns.ClientURL(), "--server-name", "a", "--lease-ttl", "2s", "--http-addr", "",
		"--pools", trees, "--log-level", "info")
	s.waitServing(t, 30*time.Second)
	first := s.epoch

	ns.Stop()
	testutil.WaitFor(t, 60*time.Second, "the scheduler to step down with NATS gone, and try to start again", func() bool {
		return s.logged(regexp.MustCompile(`msg="scheduler not started again; retrying"`), steppedDown)
	})
	if ns, err = natsembed.Start(nc, nil); err != nil {
		t.Fatal(err)
	}
	s.waitServing(t, 60*time.Second)
	if s.epoch <= first {
		t.Errorf("epoch after NATS came back = %d, want above %d", s.epoch, first)
	}
	select {
	case <-s.exited:
		t.Fatalf("the scheduler exited:\n%s", s.stderr())
	default:
	}
}
