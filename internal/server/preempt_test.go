package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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
			guaranteed := c.submit(t, simulated("guaranteed", 1000, 1, time.Hour))
			testutil.WaitFor(t, 30*time.Second, "the guaranteed pool to get its 4 cores back", func() bool {
				st, err := c.client.Get(ctx, guaranteed)
				return err == nil && st.GetJobs().GetRunning() >= 4
			})
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
			var ended int
			for _, ev := range c.events(t, jf) {
				for _, j := range ev.GetJobs().GetJobs() {
					if j.GetOperationId() != heavy || j.GetState() == pb.JobState_JOB_STATE_RUNNING {
						continue
					}
					want := pb.JobState_JOB_STATE_COMPLETED
					if !tc.obey {
						want = pb.JobState_JOB_STATE_ABORTED
					}
					if j.GetState() != want || !strings.Contains(j.GetReason(), "preemption") {
						t.Errorf("heavy job ended %s (%q), want %s with reason naming preemption", j.GetState(), j.GetReason(), want)
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
