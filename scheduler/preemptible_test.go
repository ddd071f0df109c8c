package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func classifyPartial(p PartialResources) *PartialResources { return &p }

// classifyUniformJobs returns n jobs "j000", "j001", ... of the same usage,
// started one second apart (oldest first).
func classifyUniformJobs(n int, usage Resources) []Job {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	jobs := make([]Job, n)
	for i := range jobs {
		jobs[i] = Job{ID: fmt.Sprintf("j%03d", i), Usage: usage, StartTime: t0.Add(time.Duration(i) * time.Second)}
	}
	return jobs
}

// classifySplit labels jobs in order: np non-preemptible, then ap
// aggressively preemptible, then the rest preemptible.
func classifySplit(jobs []Job, np, ap int) []JobClassification {
	out := make([]JobClassification, len(jobs))
	for i, j := range jobs {
		class := Preemptible
		switch {
		case i < np:
			class = NonPreemptible
		case i < np+ap:
			class = AggressivelyPreemptible
		}
		out[i] = JobClassification{ID: j.ID, Class: class}
	}
	return out
}

type classifyCounts struct{ NonPreemptible, AggressivelyPreemptible, Preemptible int }

func classifyCount(cs []JobClassification) classifyCounts {
	var c classifyCounts
	for _, j := range cs {
		switch j.Class {
		case NonPreemptible:
			c.NonPreemptible++
		case AggressivelyPreemptible:
			c.AggressivelyPreemptible++
		default:
			c.Preemptible++
		}
	}
	return c
}

func TestClassifyJobs(t *testing.T) {
	slotsCPU := func(s, c float64) Share { return Share{UserSlots: s, CPU: c} }
	oneJob := Resources{UserSlots: 1, CPU: 1}
	// The reference's integration example: a 10-cpu node, an operation of 15
	// one-cpu jobs with 10 running, fair share the whole node, thresholds
	// 0.4/0.9.
	node := Resources{UserSlots: 10, CPU: 10}
	ten := classifyUniformJobs(10, oneJob)
	nodeInput := func(threshold Resources) ClassifyInput {
		return ClassifyInput{
			FairShare: slotsCPU(1, 1), Demand: slotsCPU(1.5, 1.5), Total: node,
			AggressiveThreshold: 0.4, Threshold: 0.9, UsageThreshold: threshold, Jobs: ten,
		}
	}
	sizes := func(cpus ...float64) []Job {
		jobs := make([]Job, len(cpus))
		for i, c := range cpus {
			jobs[i] = Job{ID: fmt.Sprintf("j%03d", i), Usage: Resources{CPU: c}}
		}
		return jobs
	}

	cases := map[string]struct {
		in     ClassifyInput
		np, ap int // the rest is preemptible
	}{
		// TestUpdatePreemptibleAllocationsList: 150 jobs of 1 % each, fair
		// share 1.0, thresholds 0.5/1.0 ⇒ 50/50/50.
		"150 jobs of 1% with fair share 1.0": {
			in: ClassifyInput{
				FairShare: slotsCPU(1, 1), Demand: slotsCPU(1.5, 1.5), Total: Resources{UserSlots: 100, CPU: 100},
				AggressiveThreshold: 0.5, Threshold: 1.0, Jobs: classifyUniformJobs(150, oneJob),
			},
			np: 50, ap: 50,
		},
		// TestNonPreemptibleResourceUsageThreshold: (P, AP) = (1, 5).
		"10-cpu node, 10 of 15 jobs running, thresholds 0.4/0.9": {
			in: nodeInput(Resources{}),
			np: 4, ap: 5,
		},
		"usage threshold {user_slots: 7}": {
			in: nodeInput(PartialResources{}.With(UserSlots, 7).OrInfinite()),
			np: 7, ap: 2,
		},
		"usage threshold {cpu: 10}": {
			in: nodeInput(PartialResources{}.With(CPU, 10).OrInfinite()),
			np: 10, ap: 0,
		},
		"usage threshold is strict: {cpu: 9} leaves the 10th job to the bounds": {
			in: nodeInput(PartialResources{}.With(CPU, 9).OrInfinite()),
			np: 9, ap: 0,
		},
		"usage threshold must hold on every resource": {
			// {user_slots: 7, cpu: 3}: the cpu part stops it after 3 jobs, and
			// the 0.4 bound takes over for the 4th.
			in: nodeInput(PartialResources{}.With(UserSlots, 7).With(CPU, 3).OrInfinite()),
			np: 4, ap: 5,
		},
		"fair share equals demand: nothing preemptible": {
			in: ClassifyInput{
				FairShare: slotsCPU(0.5, 0.5), Demand: slotsCPU(0.5, 0.5), Total: Resources{UserSlots: 20, CPU: 20},
				AggressiveThreshold: 0.25, Threshold: 1.0, Jobs: classifyUniformJobs(12, oneJob),
			},
			np: 3, ap: 9,
		},
		"fair share within 1e-4 of demand: nothing preemptible": {
			in: ClassifyInput{
				FairShare: slotsCPU(0.49995, 0.49995), Demand: slotsCPU(0.5, 0.5), Total: Resources{UserSlots: 20, CPU: 20},
				AggressiveThreshold: 0.25, Threshold: 1.0, Jobs: classifyUniformJobs(12, oneJob),
			},
			np: 3, ap: 9,
		},
		"fair share 1e-3 below demand: the tail is preemptible": {
			// Bound₂ = 0.499 · 1.0: the jobs after prefix 0.45 are preemptible.
			in: ClassifyInput{
				FairShare: slotsCPU(0.499, 0.499), Demand: slotsCPU(0.5, 0.5), Total: Resources{UserSlots: 20, CPU: 20},
				AggressiveThreshold: 0.25, Threshold: 1.0, Jobs: classifyUniformJobs(12, oneJob),
			},
			np: 3, ap: 7,
		},
		"demand below 1e-4 is not the fair-share-equals-demand case": {
			// fair share = demand = 5e-5: Bound₂ stays 5e-5, so jobs past it
			// are preemptible.
			in: ClassifyInput{
				FairShare: Share{CPU: 5e-5}, Demand: Share{CPU: 5e-5}, Total: Resources{CPU: 100000},
				AggressiveThreshold: 0.3, Threshold: 1.0, Jobs: classifyUniformJobs(7, Resources{CPU: 1}),
			},
			np: 2, ap: 3,
		},
		"zero fair share: everything preemptible": {
			in: ClassifyInput{
				Demand: slotsCPU(0.5, 0.5), Total: node,
				AggressiveThreshold: 0.2, Threshold: 1.0, Jobs: classifyUniformJobs(5, oneJob),
			},
			np: 0, ap: 0,
		},
		"zero fair share and zero demand: everything preemptible": {
			in: ClassifyInput{
				Total: node, AggressiveThreshold: 0.2, Threshold: 1.0, Jobs: classifyUniformJobs(5, oneJob),
			},
			np: 0, ap: 0,
		},
		"zero fair share: the usage threshold still protects": {
			in: ClassifyInput{
				Demand: slotsCPU(0.5, 0.5), Total: node, AggressiveThreshold: 0.2, Threshold: 1.0,
				UsageThreshold: PartialResources{}.With(UserSlots, 2).OrInfinite(), Jobs: classifyUniformJobs(5, oneJob),
			},
			np: 2, ap: 0,
		},
		"a resource whose demand is fully granted is ignored": {
			// memory is blocked (fair share = demand = 0.2): only cpu counts,
			// although every job's memory crosses the memory bound at once.
			in: ClassifyInput{
				FairShare: Share{CPU: 0.5, Memory: 0.2}, Demand: Share{CPU: 1, Memory: 0.2}, Total: Resources{CPU: 10, Memory: 100},
				AggressiveThreshold: 0.5, Threshold: 1.0, Jobs: classifyUniformJobs(8, Resources{CPU: 1, Memory: 10}),
			},
			np: 3, ap: 2,
		},
		"the job that crosses a bound stays on the safe side": {
			// prefixes 0, 0.4, 0.8, 1.2 against bounds 0.5 and 1.0.
			in: ClassifyInput{
				FairShare: Share{CPU: 1}, Demand: Share{CPU: 1.6}, Total: Resources{CPU: 10},
				AggressiveThreshold: 0.5, Threshold: 1.0, Jobs: sizes(4, 4, 4, 4),
			},
			np: 2, ap: 1,
		},
		"no jobs": {
			in: ClassifyInput{FairShare: Share{CPU: 1}, Demand: Share{CPU: 2}, Total: Resources{CPU: 10}, AggressiveThreshold: 0.2, Threshold: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			want := classifySplit(tc.in.Jobs, tc.np, tc.ap)
			got := ClassifyJobs(tc.in)
			if diff := cmp.Diff(classifyCount(want), classifyCount(got)); diff != "" {
				t.Errorf("counts mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ClassifyJobs mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPreemptibleThroughUpdate runs the reference's integration example
// (10-cpu node, 10 running one-cpu jobs of a 15-job operation, thresholds
// 0.4/0.9) through Update, with the non-preemptible usage threshold set on
// the tree, the pools and the operation.
func TestPreemptibleThroughUpdate(t *testing.T) {
	slots := func(n float64) *PartialResources { return classifyPartial(PartialResources{}.With(UserSlots, n)) }
	cpu := func(n float64) *PartialResources { return classifyPartial(PartialResources{}.With(CPU, n)) }
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		tree                      *PartialResources // nil: the default (empty)
		parent, child, op         *PartialResources
		demand                    Resources // zero: 15 slots, 15 cpu
		jobs                      []Job     // nil: 10 jobs of one slot and one cpu
		noJobs                    bool
		want                      classifyCounts
		wantFairShare, wantDemand Share // checked when set
	}{
		"no threshold": {
			want:          classifyCounts{4, 5, 1},
			wantFairShare: Share{UserSlots: 1, CPU: 1},
			wantDemand:    Share{UserSlots: 1.5, CPU: 1.5},
		},
		"tree {user_slots: 7}":                      {tree: slots(7), want: classifyCounts{7, 2, 1}},
		"tree {cpu: 10}":                            {tree: cpu(10), want: classifyCounts{10, 0, 0}},
		"pool overrides the tree":                   {tree: slots(7), child: cpu(10), want: classifyCounts{10, 0, 0}},
		"inherited from the grandparent pool":       {tree: cpu(10), parent: slots(7), want: classifyCounts{7, 2, 1}},
		"the nearest pool wins":                     {parent: slots(7), child: slots(5), want: classifyCounts{5, 4, 1}},
		"an empty pool setting protects nothing":    {tree: cpu(10), child: classifyPartial(PartialResources{}), want: classifyCounts{4, 5, 1}},
		"operation lowers the threshold":            {child: cpu(10), op: cpu(6), want: classifyCounts{6, 3, 1}},
		"operation cannot raise the threshold":      {child: slots(5), op: slots(8), want: classifyCounts{5, 4, 1}},
		"operation cannot raise an empty threshold": {op: cpu(6), want: classifyCounts{4, 5, 1}},
		"operation lowers per resource, pool keeps others": {
			// min({user_slots: 5}, {cpu: 8}) = {user_slots: 5, cpu: 8}, not
			// the operation's {cpu: 8} alone (which would protect 8 jobs).
			parent: slots(5), op: cpu(8), want: classifyCounts{5, 4, 1},
		},
		"fair share equals demand: nothing preemptible": {
			// 8 of 10 cpu: fair share 0.8 = demand; Bound₁ = 0.32.
			demand:        Resources{UserSlots: 8, CPU: 8},
			jobs:          classifyUniformJobs(8, Resources{UserSlots: 1, CPU: 1}),
			want:          classifyCounts{4, 4, 0},
			wantFairShare: Share{UserSlots: 0.8, CPU: 0.8},
			wantDemand:    Share{UserSlots: 0.8, CPU: 0.8},
		},
		"no jobs: no classification": {noJobs: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultTreeConfig()
			cfg.AggressivePreemptionSatisfactionThreshold = 0.4
			cfg.PreemptionSatisfactionThreshold = 0.9
			if tc.tree != nil {
				cfg.NonPreemptibleResourceUsageThreshold = *tc.tree
			}
			demand := tc.demand
			if demand.IsZero() {
				demand = Resources{UserSlots: 15, CPU: 15}
			}
			jobs := tc.jobs
			if jobs == nil && !tc.noJobs {
				jobs = classifyUniformJobs(10, Resources{UserSlots: 1, CPU: 1})
			}
			var usage Resources
			for _, j := range jobs {
				usage = usage.Add(j.Usage)
			}
			snap := &Snapshot{
				Now:     t0,
				Cluster: Cluster{Total: Resources{UserSlots: 10, CPU: 10}},
				Tree:    cfg,
				Pools: []PoolConfig{
					{Name: "parent", NonPreemptibleResourceUsageThreshold: tc.parent},
					{Name: "child", Parent: "parent", NonPreemptibleResourceUsageThreshold: tc.child},
				},
				Operations: []Operation{{
					ID: "op", Pool: "child", Demand: demand, Usage: usage, PendingJobCount: 5,
					NonPreemptibleResourceUsageThreshold: tc.op, Jobs: jobs,
				}},
			}
			r, err := Update(snap, nil)
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			e, ok := r.Element("op")
			if !ok {
				t.Fatal("no element op")
			}
			if !tc.wantFairShare.IsZero() {
				if diff := cmp.Diff(tc.wantFairShare, e.FairShare.Total, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
					t.Errorf("fair share mismatch (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tc.wantDemand, e.DemandShare, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
					t.Errorf("demand share mismatch (-want +got):\n%s", diff)
				}
			}
			got := classifyCounts{e.NonPreemptibleJobCount, e.AggressivelyPreemptibleJobCount, e.PreemptibleJobCount}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("job counts mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, classifyCount(e.Jobs)); diff != "" {
				t.Errorf("Jobs do not add up to the counts (-want +got):\n%s", diff)
			}
			wantJobs := classifySplit(jobs, tc.want.NonPreemptible, tc.want.AggressivelyPreemptible)
			if diff := cmp.Diff(wantJobs, e.Jobs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Jobs mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPreemptibleJobStartOrder: Job.StartTime "orders the operation's jobs:
// classification walks them from the oldest" (input.go), and the reference
// keeps allocations in start order (§8). Jobs listed newest first must be
// classified as if listed oldest first.
func TestPreemptibleJobStartOrder(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	// The oldest job is a big one (5 slots, 5 cpu), then five one-cpu jobs. Oldest
	// first, prefixes are 0, 0.5, 0.6, 0.7, 0.8, 0.9 of the node against
	// bounds 0.4 and 0.9.
	oldestFirst := []Job{{ID: "big", Usage: Resources{UserSlots: 5, CPU: 5}, StartTime: t0}}
	for i := 1; i <= 5; i++ {
		oldestFirst = append(oldestFirst, Job{
			ID: fmt.Sprintf("s%d", i), Usage: Resources{UserSlots: 1, CPU: 1}, StartTime: t0.Add(time.Duration(i) * time.Second),
		})
	}
	want := map[string]PreemptionClass{
		"big": NonPreemptible,
		"s1":  AggressivelyPreemptible, "s2": AggressivelyPreemptible, "s3": AggressivelyPreemptible, "s4": AggressivelyPreemptible,
		"s5": Preemptible,
	}
	newestFirst := make([]Job, len(oldestFirst))
	for i, j := range oldestFirst {
		newestFirst[len(oldestFirst)-1-i] = j
	}
	cases := map[string][]Job{"oldest first": oldestFirst, "newest first": newestFirst}
	for name, jobs := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultTreeConfig()
			cfg.AggressivePreemptionSatisfactionThreshold = 0.4
			cfg.PreemptionSatisfactionThreshold = 0.9
			snap := &Snapshot{
				Now:     t0,
				Cluster: Cluster{Total: Resources{UserSlots: 10, CPU: 10}},
				Tree:    cfg,
				Operations: []Operation{{
					ID: "op", Demand: Resources{UserSlots: 15, CPU: 15}, Usage: Resources{UserSlots: 10, CPU: 10},
					PendingJobCount: 5, Jobs: jobs,
				}},
			}
			r, err := Update(snap, nil)
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			e, _ := r.Element("op")
			got := map[string]PreemptionClass{}
			for _, j := range e.Jobs {
				got[j.ID] = j.Class
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("classification mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
