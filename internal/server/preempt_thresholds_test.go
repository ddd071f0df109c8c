package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// thresholdTrees pins both pools' fair shares at 4 of the 8 cores with
// strong guarantees; each case adds tree keys (a flow mapping's entries).
const thresholdTrees = `
version: 1
trees:
  - name: physical
    config: {fair_share_update_period: 50ms, fair_share_starvation_timeout: 200ms,
      fair_share_aggressive_starvation_timeout: 300ms, preemptive_scheduling_backoff: 100ms%s}
    pools:
      - {name: guaranteed, strong_guarantee_resources: {cpu: 4}}
      - {name: other, strong_guarantee_resources: {cpu: 4}}
`

// Each threshold changes whether a starving guaranteed operation gets its
// cores back: the heavy operation in "other" (real processes) uses 8 cores
// against a fair share of 4 (the default thresholds make its newest 4 jobs
// preemptible).
func TestPreemptionThresholdsChangeTheOutcome(t *testing.T) {
	for _, tc := range []struct {
		name    string
		config  string
		status  string
		preempt bool
	}{
		{"default thresholds: preempted", "", "starving", true},
		{"non_preemptible_resource_usage_threshold above the usage: nothing preemptible",
			", non_preemptible_resource_usage_threshold: {cpu: 100}", "starving", false},
		{"preemption threshold 2: jobs only aggressively preemptible, a starving operation takes none",
			", preemption_satisfaction_threshold: 2, aggressive_preemption_satisfaction_threshold: 0.5", "starving", false},
		{"aggressive threshold 0.5: an aggressively starving operation takes them",
			", preemption_satisfaction_threshold: 2, aggressive_preemption_satisfaction_threshold: 0.5, enable_aggressive_starvation: true", "aggressively_starving", true},
		{"aggressive threshold 2: the same jobs are non-preemptible",
			", preemption_satisfaction_threshold: 2, aggressive_preemption_satisfaction_threshold: 2, enable_aggressive_starvation: true", "aggressively_starving", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := fmt.Sprintf(thresholdTrees, tc.config)
			c := startClusterWith(t, doc, 2, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4}, nil)
			ctx := context.Background()
			// Real processes that exit on the interruption signal.
			heavy := c.submit(t, processSpec("other", 100, true))
			testutil.WaitFor(t, 10*time.Second, "the heavy operation to fill the cluster", func() bool {
				st, err := c.client.Get(ctx, heavy)
				return err == nil && st.GetJobs().GetRunning() == 8
			})
			guaranteed := c.submit(t, simulated("guaranteed", 1000, 1, time.Hour))
			if tc.preempt {
				testutil.WaitFor(t, 20*time.Second, "the guaranteed operation to get its cores by preemption", func() bool {
					st, err := c.client.Get(ctx, guaranteed)
					return err == nil && st.GetJobs().GetRunning() >= 4
				})
				// The victims' processes got the signal and exited.
				testutil.WaitFor(t, 10*time.Second, "four heavy jobs interrupted and completed", func() bool {
					hs, err := c.client.Get(ctx, heavy)
					return err == nil && hs.GetJobs().GetInterrupted() >= 4
				})
				return
			}
			testutil.WaitFor(t, 20*time.Second, "the guaranteed operation to be "+tc.status, func() bool {
				st, err := c.client.Get(ctx, guaranteed)
				return err == nil && len(st.GetTrees()) == 1 && st.GetTrees()[0].GetStarvationStatus() == tc.status
			})
			// Twenty more heartbeats of every node (preemption is tried every
			// 100ms per node, heartbeats come every 50ms).
			var base []uint64
			for _, a := range c.agents {
				base = append(base, a.Stats().HeartbeatsOK)
			}
			testutil.WaitFor(t, 20*time.Second, "twenty more heartbeats of every node", func() bool {
				for i, a := range c.agents {
					if a.Stats().HeartbeatsOK < base[i]+20 {
						return false
					}
				}
				return true
			})
			st, err := c.client.Get(ctx, guaranteed)
			if err != nil || st.GetJobs().GetRunning() != 0 {
				t.Errorf("guaranteed operation runs %d jobs (%v); want none: nothing may be preempted", st.GetJobs().GetRunning(), err)
			}
			filter, _ := subjects.EventsFilter("physical", subjects.EventPreemption)
			if evs := c.events(t, filter); len(evs) != 0 {
				t.Errorf("%d preemption events, want none; first: %v", len(evs), evs[0].GetPreemption())
			}
			if hs, _ := c.client.Get(ctx, heavy); hs.GetJobs().GetRunning() != 8 {
				t.Errorf("heavy operation runs %d jobs, want 8", hs.GetJobs().GetRunning())
			}
		})
	}
}
