package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// preemptTrees: "guaranteed" is promised half of the cluster; "other" has
// no guarantee. Starvation and the backoff are short so that the test
// sees preemption within seconds.
const preemptTrees = `
version: 1
trees:
  - name: physical
    config:
      fair_share_update_period: 50ms
      fair_share_starvation_timeout: 300ms
      fair_share_aggressive_starvation_timeout: 300ms
      preemptive_scheduling_backoff: 100ms
      allocation_preemption_timeout: %s
    pools:
      - {name: guaranteed, strong_guarantee_resources: {cpu: 4}}
      - {name: other}
`

// processSpec runs count jobs of one core that loop until signalled; with
// obey they exit 0 on SIGINT, otherwise they ignore it.
func processSpec(pool string, count int32, obey bool) *pb.OperationSpec {
	script := `trap 'exit 0' INT; while true; do sleep 0.05; done`
	if !obey {
		script = `trap '' INT; while true; do sleep 0.05; done`
	}
	return &pb.OperationSpec{Pool: pool, InterruptionSignal: "SIGINT", Tasks: []*pb.TaskSpec{{
		Name: "loop", JobCount: count, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
		Run: &pb.TaskSpec_Command{Command: &pb.Command{Argv: []string{"sh", "-c", script}}},
	}}}
}

func TestStarvingGuaranteedPoolPreemptsAndInterruptedJobsComplete(t *testing.T) {
	for _, tc := range []struct {
		name    string
		obey    bool
		timeout string
	}{
		{"jobs exit in time: completed", true, "10s"},
		{"jobs ignore the signal: killed and aborted", false, "300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startClusterWith(t, fmt.Sprintf(preemptTrees, tc.timeout), 2, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4}, nil)
			ctx := context.Background()
			heavy := c.submit(t, processSpec("other", 100, tc.obey))
			testutil.WaitFor(t, 20*time.Second, "the heavy operation to fill the cluster", func() bool {
				st, err := c.client.Get(ctx, heavy)
				return err == nil && st.GetJobs().GetRunning() == 8
			})
			w := watchHeartbeats(t, c)
			guaranteed := c.submit(t, simulated("guaranteed", 1000, 1, time.Hour))
			w.track(guaranteed, 4)
			testutil.WaitFor(t, 30*time.Second, "the guaranteed pool to get its 4 cores back", func() bool {
				st, err := c.client.Get(ctx, guaranteed)
				return err == nil && st.GetJobs().GetRunning() >= 4
			})
			// Within the starvation timeout and a few heartbeats: counted
			// in the heartbeats each node sent between the operation's
			// starvation event (or its first job start, if that came
			// first) and the job start that made four of its jobs
			// running, as one NATS subscriber saw them (an order, not a
			// clock). A job that ignores the signal adds the preemption
			// timeout's worth.
			bound := 8
			if !tc.obey {
				bound += 8 // allocation_preemption_timeout 300ms: 6 heartbeats of 50ms, and 2 for the timers' jitter
			}
			for node, n := range w.counts(t, 30*time.Second) {
				if n > bound {
					t.Errorf("%s sent %d heartbeats between the starvation and four jobs running, want at most %d", node, n, bound)
				}
				t.Logf("%s: %d heartbeats from starving to four jobs running", node, n)
			}
			st, err := c.client.Get(ctx, heavy)
			if err != nil {
				t.Fatal(err)
			}
			if tc.obey && st.GetJobs().GetInterrupted() < 4 {
				t.Errorf("heavy operation: %d jobs interrupted and completed, want >= 4 (jobs %v)", st.GetJobs().GetInterrupted(), st.GetJobs())
			}
			if !tc.obey && st.GetJobs().GetAborted() < 4 {
				t.Errorf("heavy operation: %d jobs aborted, want >= 4 (jobs %v)", st.GetJobs().GetAborted(), st.GetJobs())
			}
			if st.GetJobs().GetFailed() != 0 {
				t.Errorf("heavy operation: %d jobs failed, want 0", st.GetJobs().GetFailed())
			}
			// Every preemption names the starving operation and why.
			filter, _ := subjects.EventsFilter("physical", subjects.EventPreemption)
			var n int
			for _, ev := range c.events(t, filter) {
				p := ev.GetPreemption()
				if p.GetOperationId() != heavy || p.GetForOperationId() != guaranteed || !strings.Contains(p.GetReason(), "preemption_satisfaction_threshold") {
					t.Errorf("preemption event %v", p)
				}
				n++
			}
			if n < 4 {
				t.Errorf("%d preemption events, want >= 4", n)
			}
			// The guaranteed operation's starvation was an event.
			sf, _ := subjects.EventsFilter("physical", subjects.EventStarvation)
			starved := false
			for _, ev := range c.events(t, sf) {
				if s := ev.GetStarvation(); s.GetOperationId() == guaranteed && s.GetTo() == "starving" && s.GetPool() == "guaranteed" {
					starved = true
				}
			}
			if !starved {
				t.Errorf("no starvation event of operation %s", guaranteed)
			}
			// The job events say how each interrupted job ended.
			jf, _ := subjects.EventsFilter("physical", subjects.EventJob)
			heavyEnded := func(evs []*pb.Event) bool {
				n := 0
				for _, ev := range evs {
					for _, j := range ev.GetJobs().GetJobs() {
						if j.GetOperationId() == heavy && j.GetState() != pb.JobState_JOB_STATE_RUNNING {
							n++
						}
					}
				}
				return n >= 4
			}
			var ended int
			for _, ev := range c.eventsWhen(t, jf, "the events of 4 ended heavy jobs", heavyEnded) {
				for _, j := range ev.GetJobs().GetJobs() {
					if j.GetOperationId() != heavy || j.GetState() == pb.JobState_JOB_STATE_RUNNING {
						continue
					}
					want := pb.JobState_JOB_STATE_COMPLETED
					if !tc.obey {
						want = pb.JobState_JOB_STATE_ABORTED
					}
					if j.GetState() != want || !strings.Contains(j.GetReason(), "preemption") || j.GetCause() != pb.JobEndCause_JOB_END_CAUSE_PREEMPTION {
						t.Errorf("heavy job ended %s (%q, cause %s), want %s with cause PREEMPTION and a reason naming it", j.GetState(), j.GetReason(), j.GetCause(), want)
					}
					ended++
				}
			}
			if ended < 4 {
				t.Errorf("%d heavy jobs ended, want >= 4", ended)
			}
		})
	}
}

// heartbeatWatch counts the heartbeats each node sends in an operation's
// preemption window, as one subscriber sees heartbeats and events: both
// subscriptions feed one channel from the connection's reader, so their
// order is the order the NATS server delivered them in. The window opens
// at the first of the operation's starvation event and its first job
// start, and closes at the job event that makes n of its jobs running.
type heartbeatWatch struct {
	msgs chan *nats.Msg
	subs []*nats.Subscription
	op   string
	n    int

	open    bool            // the window opened
	running map[string]bool // the operation's running jobs, by id
	out     map[string]int  // heartbeats per node in the window
}

func watchHeartbeats(t *testing.T, c *cluster) *heartbeatWatch {
	t.Helper()
	w := &heartbeatWatch{msgs: make(chan *nats.Msg, 1<<16), running: map[string]bool{}, out: map[string]int{}}
	for _, subj := range []string{subjects.NodeHeartbeatAll(), subjects.EventsAll()} {
		sub, err := c.nc.ChanSubscribe(subj, w.msgs)
		if err != nil {
			t.Fatal(err)
		}
		w.subs = append(w.subs, sub)
	}
	if err := c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return w
}

// track names the operation and the number of its jobs to wait for.
func (w *heartbeatWatch) track(op string, n int) { w.op, w.n = op, n }

// counts waits until the window closed, then stops watching and returns
// the heartbeats per node in it; it fails the test if the window has not
// closed within timeout. It waits for the events themselves: the
// scheduler publishes job events asynchronously, after it counts the jobs
// in the operation's status, so a status of n running jobs does not mean
// the subscriber has seen the n-th start yet.
func (w *heartbeatWatch) counts(t *testing.T, timeout time.Duration) map[string]int {
	t.Helper()
	closed := testutil.Poll(timeout, func() bool { return w.read(t) })
	for _, s := range w.subs {
		_ = s.Unsubscribe()
	}
	if !closed {
		t.Fatalf("the window never closed within %s: opened %v, %d of %d jobs of %s running", timeout, w.open, len(w.running), w.n, w.op)
	}
	return w.out
}

// read takes the messages delivered so far, in order, and reports whether
// the window closed; the messages after the one that closed it are left.
func (w *heartbeatWatch) read(t *testing.T) bool {
	t.Helper()
	for {
		var m *nats.Msg
		select {
		case m = <-w.msgs:
		default:
			return false
		}
		if node, err := subjects.ParseNodeHeartbeat(m.Subject); err == nil {
			if w.open {
				w.out[node]++
			}
			continue
		}
		ev := &pb.Event{}
		if err := proto.Unmarshal(m.Data, ev); err != nil {
			t.Fatalf("event on %s: %v", m.Subject, err)
		}
		if s := ev.GetStarvation(); s.GetOperationId() == w.op && s.GetTo() == "starving" {
			w.open = true
		}
		for _, j := range ev.GetJobs().GetJobs() {
			if j.GetOperationId() != w.op {
				continue
			}
			if j.GetState() != pb.JobState_JOB_STATE_RUNNING {
				delete(w.running, j.GetJobId())
				continue
			}
			// A start the starvation event has not preceded opens the
			// window: the events of two actors have no order between them.
			w.open = true
			if w.running[j.GetJobId()] = true; len(w.running) >= w.n {
				return true
			}
		}
	}
}
