package preemption

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sharetree/sharetree/scheduler"
)

const (
	P  = scheduler.Preemptible
	AP = scheduler.AggressivelyPreemptible
	NP = scheduler.NonPreemptible
)

// bJobs are five 2-cpu jobs of operation b, started in order 1..5, filling
// a 10-cpu node.
func bJobs(class scheduler.PreemptionClass) []Job {
	return []Job{job("b1", "b", 1, 2, class), job("b2", "b", 2, 2, class), job("b3", "b", 3, 2, class),
		job("b4", "b", 4, 2, class), job("b5", "b", 5, 2, class)}
}

func TestPreemptRules(t *testing.T) {
	th := defaultThresholds
	cases := map[string]struct {
		view View
		want Plan
	}{
		"newest preemptible job makes room": {
			view: View{Node: node10(0), Total: cluster, Jobs: bJobs(P), Thresholds: th, Operations: []Operation{
				op("a", 0.3, 10).starving().next(2).build(), op("b", 0.3, 60).build()}},
			want: Plan{Decisions: []Decision{{Operation: "a", Starvation: scheduler.Starving, Start: cpu(2), Exact: true,
				Victims: []Victim{victim(job("b5", "b", 5, 2, P), "a", scheduler.Starving, 1, th)}}}},
		},
		"two newest when one is not enough": {
			view: View{Node: node10(0), Total: cluster, Jobs: bJobs(P), Thresholds: th, Operations: []Operation{
				op("a", 0.3, 10).starving().next(3).build(), op("b", 0.3, 60).build()}},
			want: Plan{Decisions: []Decision{{Operation: "a", Starvation: scheduler.Starving, Start: cpu(3), Exact: true,
				Victims: []Victim{victim(job("b5", "b", 5, 2, P), "a", scheduler.Starving, 1, th),
					victim(job("b4", "b", 4, 2, P), "a", scheduler.Starving, 1, th)}}}},
		},
		"fewest beats newest: one older big job instead of two newer small ones": {
			view: View{Node: node10(0), Total: cluster, Thresholds: th,
				Jobs:       []Job{job("b1", "b", 1, 4, P), job("b2", "b", 2, 4, P), job("b3", "b", 3, 1, P), job("b4", "b", 4, 1, P)},
				Operations: []Operation{op("a", 0.3, 10).starving().next(2).build(), op("b", 0.3, 60).build()}},
			want: Plan{Decisions: []Decision{{Operation: "a", Starvation: scheduler.Starving, Start: cpu(2), Exact: true,
				Victims: []Victim{victim(job("b2", "b", 2, 4, P), "a", scheduler.Starving, 1, th)}}}},
		},
		"free resources and interrupting jobs count before victims": {
			view: View{Node: node10(1), Total: cluster, Thresholds: th,
				Jobs:       []Job{interrupting(job("b1", "b", 1, 1, P)), job("b2", "b", 2, 4, P), job("b3", "b", 3, 4, P)},
				Operations: []Operation{op("a", 0.3, 10).starving().next(3).build(), op("b", 0.3, 60).build()}},
			want: Plan{Decisions: []Decision{{Operation: "a", Starvation: scheduler.Starving, Start: cpu(3), Exact: true,
				Victims: []Victim{victim(job("b3", "b", 3, 4, P), "a", scheduler.Starving, 1, th)}}}},
		},
		"fits in free plus interrupting: nothing more is preempted": {
			view: View{Node: node10(1), Total: cluster, Thresholds: th,
				Jobs:       []Job{interrupting(job("b1", "b", 1, 2, P)), job("b2", "b", 2, 7, P)},
				Operations: []Operation{op("a", 0.3, 10).starving().next(3).build(), op("b", 0.3, 60).build()}},
			want: Plan{Refusals: []Refusal{{Operation: "a", Starvation: scheduler.Starving, Code: RefusalFitsWithoutPreemption,
				Need: cpu(3), Releasable: cpu(3)}}},
		},
		"what earlier preemptions reserved is not free again": {
			// The same node as above, but b1's 2 cpu and the free one
			// are promised to a job an earlier preemption chose.
			view: View{Node: reserved(node10(1), 3), Total: cluster, Thresholds: th,
				Jobs:       []Job{interrupting(job("b1", "b", 1, 2, P)), job("b2", "b", 2, 7, P), job("b3", "b", 3, 3, P)},
				Operations: []Operation{op("a", 0.3, 10).starving().next(3).build(), op("b", 0.3, 60).build()}},
			want: Plan{Decisions: []Decision{{Operation: "a", Starvation: scheduler.Starving, Start: cpu(3), Exact: true,
				Victims: []Victim{victim(job("b3", "b", 3, 3, P), "a", scheduler.Starving, 1, th)}}}},
		},
		"starving takes only preemptible jobs": {
			view: View{Node: node10(0), Total: cluster, Jobs: bJobs(AP), Thresholds: th, Operations: []Operation{
				op("a", 0.3, 10).starving().next(2).build(), op("b", 0.3, 60).build()}},
			want: Plan{Refusals: []Refusal{{Operation: "a", Starvation: scheduler.Starving, Code: RefusalNotEnoughPreemptible,
				Need: cpu(2), Releasable: cpu(0), Excluded: Exclusions{Class: 5}}}},
		},
		"aggressively starving also takes aggressively preemptible jobs, preemptible first": {
			view: View{Node: node10(0), Total: cluster, Thresholds: th,
				Jobs:       []Job{job("b1", "b", 1, 2, AP), job("b2", "b", 2, 2, AP), job("b3", "b", 3, 2, P), job("b4", "b", 4, 4, AP)},
				Operations: []Operation{op("a", 0.3, 10).aggressive().next(4).build(), op("b", 0.3, 60).build()}},
			// b4 alone is the fewest (one job): fewest first, then class, then newest.
			want: Plan{Decisions: []Decision{{Operation: "a", Starvation: scheduler.AggressivelyStarving, Start: cpu(4), Exact: true,
				Victims: []Victim{victim(job("b4", "b", 4, 4, AP), "a", scheduler.AggressivelyStarving, 0.2, th)}}}},
		},
		"among equally few, preemptible before aggressively preemptible": {
			view: View{Node: node10(0), Total: cluster, Thresholds: th,
				Jobs:       []Job{job("b1", "b", 1, 2, P), job("b2", "b", 2, 2, AP)},
				Operations: []Operation{op("a", 0.3, 10).aggressive().next(2).build(), op("b", 0.3, 60).build()}},
			want: Plan{Decisions: []Decision{{Operation: "a", Starvation: scheduler.AggressivelyStarving, Start: cpu(2), Exact: true,
				Victims: []Victim{victim(job("b1", "b", 1, 2, P), "a", scheduler.AggressivelyStarving, 0.2, th)}}}},
		},
		"non-preemptible jobs are never taken, even by aggressively starving operations": {
			view: View{Node: node10(0), Total: cluster, Jobs: bJobs(NP), Thresholds: th, Operations: []Operation{
				op("a", 0.3, 10).aggressive().next(2).build(), op("b", 0.3, 60).build()}},
			want: Plan{Refusals: []Refusal{{Operation: "a", Starvation: scheduler.AggressivelyStarving, Code: RefusalNotEnoughPreemptible,
				Need: cpu(2), Excluded: Exclusions{Class: 5}}}},
		},
		"own jobs, graceful operations' jobs and starving operations' jobs are not victims": {
			view: View{Node: node10(0), Total: cluster, Thresholds: th,
				Jobs: []Job{job("a1", "a", 1, 2, P), job("g1", "g", 2, 2, P), job("c1", "c", 3, 2, P), job("b1", "b", 4, 4, P)},
				Operations: []Operation{op("a", 0.3, 10).starving().next(2).build(), op("g", 0.1, 60).graceful().build(),
					op("c", 0.5, 10).starving().build(), op("b", 0.3, 60).build()}},
			want: Plan{
				Decisions: []Decision{{Operation: "a", Starvation: scheduler.Starving, Start: cpu(2), Exact: true,
					Victims: []Victim{victim(job("b1", "b", 4, 4, P), "a", scheduler.Starving, 1, th)}}},
				// c is needier (satisfaction 0.2 against 0.33) but has nothing pending.
				Refusals: []Refusal{{Operation: "c", Starvation: scheduler.Starving, Code: RefusalNothingPending}},
			},
		},
		"a victim operation is never taken below its fair share": {
			// b's class is stale: live usage 21 cpu, fair share 20 cpu.
			view: View{Node: node10(0), Total: cluster, Jobs: bJobs(P), Thresholds: th, Operations: []Operation{
				op("a", 0.3, 10).starving().next(2).build(), op("b", 0.2, 21).build()}},
			want: Plan{Refusals: []Refusal{{Operation: "a", Starvation: scheduler.Starving, Code: RefusalNotEnoughPreemptible,
				Need: cpu(2), Excluded: Exclusions{OperationFloor: 5}}}},
		},
		"a victim whose fair share covers its demand keeps everything for a starving operation": {
			view: View{Node: node10(0), Total: cluster, Jobs: bJobs(P), Thresholds: th, Operations: []Operation{
				op("a", 0.3, 10).starving().next(2).build(), op("b", 0.6, 60).demand(0.6).build()}},
			want: Plan{Refusals: []Refusal{{Operation: "a", Starvation: scheduler.Starving, Code: RefusalNotEnoughPreemptible,
				Need: cpu(2), Excluded: Exclusions{OperationFloor: 5}}}},
		},
		"no loop: a job that would leave the starving operation above its fair share is not started": {
			view: View{Node: node10(0), Total: cluster, Jobs: bJobs(P), Thresholds: th, Operations: []Operation{
				op("a", 0.3, 22).starving().next(10).build(), op("b", 0.3, 60).build()}},
			want: Plan{Refusals: []Refusal{{Operation: "a", Starvation: scheduler.Starving, Code: RefusalWouldBePreemptible,
				Need: cpu(10)}}},
		},
		"a job larger than the node never fits": {
			view: View{Node: node10(0), Total: cluster, Jobs: bJobs(P), Thresholds: th, Operations: []Operation{
				op("a", 0.3, 0).starving().next(11).build(), op("b", 0.3, 60).build()}},
			want: Plan{Refusals: []Refusal{{Operation: "a", Starvation: scheduler.Starving, Code: RefusalNeverFits, Need: cpu(11)}}},
		},
		"a pool's guarantee protects its subtree from operations outside it": {
			view: View{Node: node10(0), Total: cluster, Jobs: bJobs(P), Thresholds: th,
				Pools: []Pool{pool("prod", 0.6, 60), pool("adhoc", 0, 10)},
				Operations: []Operation{op("a", 0.3, 10).starving().next(2).pools("adhoc").build(),
					op("b", 0.3, 60).pools("prod").build()}},
			want: Plan{Refusals: []Refusal{{Operation: "a", Starvation: scheduler.Starving, Code: RefusalNotEnoughPreemptible,
				Need: cpu(2), Excluded: Exclusions{PoolProtection: 5}}}},
		},
		"a pool may reshuffle what its guarantee covers among its own operations": {
			view: View{Node: node10(0), Total: cluster, Jobs: bJobs(P), Thresholds: th,
				Pools: []Pool{pool("prod", 0.7, 70), pool("prod-a", 0, 10), pool("prod-b", 0, 60)},
				Operations: []Operation{op("a", 0.3, 10).starving().next(2).pools("prod-a", "prod").build(),
					op("b", 0.3, 60).pools("prod-b", "prod").build()}},
			want: Plan{Decisions: []Decision{{Operation: "a", Starvation: scheduler.Starving, Start: cpu(2), Exact: true,
				Victims: []Victim{victim(job("b5", "b", 5, 2, P), "a", scheduler.Starving, 1, th)}}}},
		},
		"a pool above its guarantee gives back only the excess": {
			// prod is guaranteed 57 cpu and uses 60: one 2-cpu job may go,
			// a second would take it to 56.
			view: View{Node: node10(0), Total: cluster, Jobs: bJobs(P), Thresholds: th,
				Pools: []Pool{pool("prod", 0.57, 60)},
				Operations: []Operation{op("a", 0.3, 10).starving().next(4).build(),
					op("b", 0.3, 60).pools("prod").build()}},
			want: Plan{Refusals: []Refusal{{Operation: "a", Starvation: scheduler.Starving, Code: RefusalNotEnoughPreemptible,
				Need: cpu(4), Candidates: cpu(10)}}},
		},
		"a starving pool outside the starving operation keeps its jobs": {
			view: View{Node: node10(0), Total: cluster, Jobs: bJobs(P), Thresholds: th,
				Pools: []Pool{{ID: "prod", Usage: cpu(60), Starvation: scheduler.Starving}},
				Operations: []Operation{op("a", 0.3, 10).starving().next(2).build(),
					op("b", 0.3, 60).pools("prod").build()}},
			want: Plan{Refusals: []Refusal{{Operation: "a", Starvation: scheduler.Starving, Code: RefusalNotEnoughPreemptible,
				Need: cpu(2), Excluded: Exclusions{PoolProtection: 5}}}},
		},
		"aggressively starving operations go first, then the least satisfied; one start per heartbeat": {
			view: View{Node: node10(0), Total: cluster, Jobs: bJobs(P), Thresholds: th, Operations: []Operation{
				op("a", 0.3, 1).starving().next(2).build(), op("c", 0.3, 20).aggressive().next(2).build(),
				op("d", 0.3, 2).starving().next(2).build(), op("b", 0.3, 60).build()}},
			want: Plan{
				Decisions: []Decision{{Operation: "c", Starvation: scheduler.AggressivelyStarving, Start: cpu(2), Exact: true,
					Victims: []Victim{victim(job("b5", "b", 5, 2, P), "c", scheduler.AggressivelyStarving, 0.2, th)}}},
				Refusals: []Refusal{
					{Operation: "a", Starvation: scheduler.Starving, Code: RefusalStartLimit, Need: cpu(2)},
					{Operation: "d", Starvation: scheduler.Starving, Code: RefusalStartLimit, Need: cpu(2)},
				},
			},
		},
		"with more starts, later decisions see the earlier ones": {
			view: View{Node: node10(0), Total: cluster, Jobs: bJobs(P), Thresholds: th, MaxStarts: 3, Operations: []Operation{
				op("a", 0.3, 1).starving().next(2).build(), op("d", 0.3, 2).starving().next(3).build(), op("b", 0.3, 60).build()}},
			want: Plan{Decisions: []Decision{
				{Operation: "a", Starvation: scheduler.Starving, Start: cpu(2), Exact: true,
					Victims: []Victim{victim(job("b5", "b", 5, 2, P), "a", scheduler.Starving, 1, th)}},
				{Operation: "d", Starvation: scheduler.Starving, Start: cpu(3), Exact: true,
					Victims: []Victim{victim(job("b4", "b", 4, 2, P), "d", scheduler.Starving, 1, th),
						victim(job("b3", "b", 3, 2, P), "d", scheduler.Starving, 1, th)}},
			}},
		},
		"no starving operation: an empty plan": {
			view: View{Node: node10(0), Total: cluster, Jobs: bJobs(P), Thresholds: th, Operations: []Operation{
				op("a", 0.3, 10).next(2).build(), op("b", 0.3, 60).build()}},
			want: Plan{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := cloneView(tc.view)
			got, err := Preempt(&tc.view)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Preempt (-want +got):\n%s\n%s", diff, got.Explain())
			}
			if diff := cmp.Diff(before, tc.view, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("view was modified (-before +after):\n%s", diff)
			}
		})
	}
}

// The aggressive threshold bounds what an aggressively starving operation
// may take: with 0.2 it may take b down to 20% of its fair share, with 0.9
// not even one job.
func TestAggressiveThresholdChangesOutcome(t *testing.T) {
	mk := func(aggressive float64) View {
		return View{Node: node10(0), Total: cluster, Thresholds: Thresholds{Preemption: 1, Aggressive: aggressive},
			Jobs: bJobs(AP),
			Operations: []Operation{op("a", 0.3, 10).aggressive().next(4).build(),
				// b uses 20 cpu of a 21-cpu fair share: every job is AP.
				op("b", 0.21, 20).build()}}
	}
	low, err := Preempt(new(mk(0.2)))
	if err != nil {
		t.Fatal(err)
	}
	if len(low.Decisions) != 1 || len(low.Decisions[0].Victims) != 2 {
		t.Fatalf("aggressive threshold 0.2: want two victims, got\n%s", low.Explain())
	}
	high, err := Preempt(new(mk(0.9)))
	if err != nil {
		t.Fatal(err)
	}
	want := Plan{Refusals: []Refusal{{Operation: "a", Starvation: scheduler.AggressivelyStarving, Code: RefusalNotEnoughPreemptible,
		Need: cpu(4), Excluded: Exclusions{OperationFloor: 5}}}}
	if diff := cmp.Diff(want, high, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("aggressive threshold 0.9 (-want +got):\n%s", diff)
	}
}

// The non-preemptible usage threshold protects an operation while its usage
// stays strictly below it: with user_slots 5 operation b (6 one-slot jobs)
// gives one job, with user_slots 6 none.
func TestNonPreemptibleUsageChangesOutcome(t *testing.T) {
	slotJob := func(id string, seq uint64) Job {
		return Job{ID: JobID(id), Operation: "b", Resources: scheduler.Resources{scheduler.UserSlots: 1, scheduler.CPU: 1}, Seq: seq, Class: P}
	}
	inf := func(slots float64) scheduler.Resources {
		return scheduler.Resources{slots, 1e18, 1e18, 1e18, 1e18}
	}
	mk := func(slots float64) View {
		b := op("b", 0.02, 6).nonPreemptible(inf(slots)).build()
		b.Usage[scheduler.UserSlots] = 6
		a := op("a", 0.3, 10).starving().build()
		a.NextJob, a.PendingJobs = scheduler.Resources{scheduler.UserSlots: 1, scheduler.CPU: 1}, 1
		return View{Node: Node{ID: "n1", Total: scheduler.Resources{6, 6, 0, 0, 0}}, Total: scheduler.Resources{100, 100, 0, 100, 0},
			Thresholds: defaultThresholds, Operations: []Operation{a, b},
			Jobs: []Job{slotJob("b1", 1), slotJob("b2", 2), slotJob("b3", 3), slotJob("b4", 4), slotJob("b5", 5), slotJob("b6", 6)}}
	}
	five, err := Preempt(new(mk(5)))
	if err != nil {
		t.Fatal(err)
	}
	if len(five.Decisions) != 1 || len(five.Decisions[0].Victims) != 1 || five.Decisions[0].Victims[0].Job != "b6" {
		t.Fatalf("threshold 5 slots: want b6 preempted, got\n%s", five.Explain())
	}
	six, err := Preempt(new(mk(6)))
	if err != nil {
		t.Fatal(err)
	}
	if len(six.Decisions) != 0 || len(six.Refusals) != 1 || six.Refusals[0].Excluded.OperationFloor != 6 {
		t.Fatalf("threshold 6 slots: want a refusal by the operation floor, got\n%s", six.Explain())
	}
}

func TestPreemptRejectsInvalidViews(t *testing.T) {
	good := func() View {
		return View{Node: node10(0), Total: cluster, Jobs: bJobs(P), Thresholds: defaultThresholds,
			Operations: []Operation{op("a", 0.3, 10).starving().next(2).build(), op("b", 0.3, 60).build()}}
	}
	cases := map[string]func(*View){
		"job of an unknown operation": func(v *View) { v.Jobs[0].Operation = "x" },
		"repeated job id":             func(v *View) { v.Jobs[1].ID = v.Jobs[0].ID },
		"repeated operation":          func(v *View) { v.Operations[1].ID = "a" },
		"unknown pool on a chain":     func(v *View) { v.Operations[0].Pools = []scheduler.PoolID{"p"} },
		"NaN usage":                   func(v *View) { v.Operations[0].Usage[0] = nan() },
		"negative job resources":      func(v *View) { v.Jobs[0].Resources[1] = -1 },
		"zero preemption threshold":   func(v *View) { v.Thresholds.Preemption = 0 },
		"aggressive above preemption": func(v *View) { v.Thresholds.Aggressive = 1.5 },
		"unknown class":               func(v *View) { v.Jobs[0].Class = 7 },
		"negative max starts":         func(v *View) { v.MaxStarts = -1 },
		"negative reserved":           func(v *View) { v.Node.Reserved[1] = -1 },
		"NaN reserved":                func(v *View) { v.Node.Reserved[1] = nan() },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			v := good()
			mutate(&v)
			if _, err := Preempt(&v); !errors.Is(err, ErrInvalidView) {
				t.Errorf("Preempt: got %v, want ErrInvalidView", err)
			}
			if _, err := Graceful(&v); !errors.Is(err, ErrInvalidView) {
				t.Errorf("Graceful: got %v, want ErrInvalidView", err)
			}
		})
	}
}
