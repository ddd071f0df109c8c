package preemption

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sharetree/sharetree/scheduler"
)

// gJobs are n 10-cpu jobs of operation g started in order.
func gJobs(n int) []Job {
	var out []Job
	for i := 1; i <= n; i++ {
		out = append(out, job("g"+string(rune('0'+i)), "g", uint64(i), 10, P))
	}
	return out
}

func node100() Node { return Node{ID: "n1", Total: cpu(100), Free: cpu(50)} }

func interrupt(j Job, usage, after, fair float64) GracefulInterrupt {
	return GracefulInterrupt{Job: j.ID, Operation: j.Operation, Resources: j.Resources, Seq: j.Seq,
		Reason: GracefulReason{Resource: scheduler.CPU, UsageShare: usage, UsageShareAfter: after, FairShare: fair, Tolerance: DefaultGracefulTolerance}}
}

func TestGracefulRules(t *testing.T) {
	approx := cmpopts.EquateApprox(0, 1e-12)
	cases := map[string]struct {
		view View
		want []GracefulInterrupt
	}{
		"newest jobs until usage reaches fair share": {
			view: View{Node: node100(), Total: cluster, Thresholds: defaultThresholds, Jobs: gJobs(5),
				Operations: []Operation{op("g", 0.3, 50).graceful().build()}},
			want: []GracefulInterrupt{interrupt(gJobs(5)[4], 0.5, 0.4, 0.3), interrupt(gJobs(5)[3], 0.4, 0.3, 0.3)},
		},
		"never below fair share": {
			view: View{Node: node100(), Total: cluster, Thresholds: defaultThresholds, Jobs: gJobs(5),
				Operations: []Operation{op("g", 0.25, 50).graceful().build()}},
			want: []GracefulInterrupt{interrupt(gJobs(5)[4], 0.5, 0.4, 0.25), interrupt(gJobs(5)[3], 0.4, 0.3, 0.25)},
		},
		"within the tolerance nothing happens": {
			view: View{Node: node100(), Total: cluster, Thresholds: defaultThresholds, Jobs: gJobs(5),
				Operations: []Operation{op("g", 0.49995, 50).graceful().build()}},
		},
		"a configured tolerance": {
			view: View{Node: node100(), Total: cluster, Thresholds: defaultThresholds, Jobs: gJobs(5), GracefulTolerance: 0.15,
				Operations: []Operation{op("g", 0.36, 50).graceful().build()}},
		},
		"jobs already being interrupted are not counted again": {
			view: View{Node: node100(), Total: cluster, Thresholds: defaultThresholds,
				Jobs:       append(gJobs(4), interrupting(job("g5", "g", 5, 10, P))),
				Operations: []Operation{op("g", 0.3, 40).graceful().build()}},
			want: []GracefulInterrupt{interrupt(gJobs(4)[3], 0.4, 0.3, 0.3)},
		},
		"a newer job too big for the excess is skipped for an older smaller one": {
			view: View{Node: node100(), Total: cluster, Thresholds: defaultThresholds,
				Jobs:       []Job{job("g1", "g", 1, 5, P), job("g2", "g", 2, 20, P)},
				Operations: []Operation{op("g", 0.15, 25).graceful().build()}},
			want: []GracefulInterrupt{interrupt(job("g1", "g", 1, 5, P), 0.25, 0.2, 0.15)},
		},
		"normal operations are left to Preempt": {
			view: View{Node: node100(), Total: cluster, Thresholds: defaultThresholds, Jobs: gJobs(5),
				Operations: []Operation{op("g", 0.1, 50).build()}},
		},
		"the dominant resource decides": {
			// Usage {cpu 10, memory 40}: memory share 0.4 is dominant and
			// 0.2 above the fair share.
			view: View{Node: node100(), Total: cluster, Thresholds: defaultThresholds,
				Jobs: func() []Job {
					var js []Job
					for i := 1; i <= 5; i++ {
						js = append(js, Job{ID: JobID("m" + string(rune('0'+i))), Operation: "g", Seq: uint64(i),
							Resources: scheduler.Resources{scheduler.CPU: 2, scheduler.Memory: 8}})
					}
					return js
				}(),
				Operations: []Operation{{ID: "g", Mode: ModeGraceful, Usage: scheduler.Resources{scheduler.CPU: 10, scheduler.Memory: 40},
					FairShare: scheduler.Share{scheduler.CPU: 0.3, scheduler.Memory: 0.2}, Demand: scheduler.Share{scheduler.CPU: 1, scheduler.Memory: 1}}}},
			want: []GracefulInterrupt{
				{Job: "m5", Operation: "g", Resources: scheduler.Resources{scheduler.CPU: 2, scheduler.Memory: 8}, Seq: 5,
					Reason: GracefulReason{Resource: scheduler.Memory, UsageShare: 0.4, UsageShareAfter: 0.32, FairShare: 0.2, Tolerance: DefaultGracefulTolerance}},
				{Job: "m4", Operation: "g", Resources: scheduler.Resources{scheduler.CPU: 2, scheduler.Memory: 8}, Seq: 4,
					Reason: GracefulReason{Resource: scheduler.Memory, UsageShare: 0.32, UsageShareAfter: 0.24, FairShare: 0.2, Tolerance: DefaultGracefulTolerance}},
			},
		},
		"several graceful operations, by id": {
			view: View{Node: node100(), Total: cluster, Thresholds: defaultThresholds,
				Jobs:       []Job{job("x1", "x", 1, 10, P), job("x2", "x", 2, 10, P), job("a1", "a", 3, 10, P), job("a2", "a", 4, 10, P)},
				Operations: []Operation{op("x", 0.1, 20).graceful().build(), op("a", 0.1, 20).graceful().build()}},
			want: []GracefulInterrupt{interrupt(job("a2", "a", 4, 10, P), 0.2, 0.1, 0.1), interrupt(job("x2", "x", 2, 10, P), 0.2, 0.1, 0.1)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := cloneView(tc.view)
			got, err := Graceful(&tc.view)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty(), approx); diff != "" {
				t.Errorf("Graceful (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.view, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("view was modified (-before +after):\n%s", diff)
			}
		})
	}
}
