package preemption

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sharetree/sharetree/scheduler"
)

// Past the search budget the greedy newest-first choice is used, minus
// every victim the others cover without, and the decision says it is not
// proven minimal.
func TestSearchBudgetFallsBackToGreedy(t *testing.T) {
	defer func(b int) { searchBudget = b }(searchBudget)
	searchBudget = 2
	th := defaultThresholds
	// Greedy takes b5 (1), b4 (1), b3 (4): b5 and b4 are then not needed.
	v := View{Node: node10(0), Total: cluster, Thresholds: th,
		Jobs:       []Job{job("b1", "b", 1, 1, P), job("b2", "b", 2, 3, P), job("b3", "b", 3, 4, P), job("b4", "b", 4, 1, P), job("b5", "b", 5, 1, P)},
		Operations: []Operation{op("a", 0.3, 10).starving().next(4).build(), op("b", 0.3, 60).build()}}
	got, err := Preempt(&v)
	if err != nil {
		t.Fatal(err)
	}
	want := Plan{Decisions: []Decision{{Operation: "a", Starvation: scheduler.Starving, Start: cpu(4), Exact: false,
		Victims: []Victim{victim(job("b3", "b", 3, 4, P), "a", scheduler.Starving, 1, th)}}}}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// An infeasible search that runs out of budget is a refusal, not a hang:
// b may give at most 10 of its 40 one-cpu jobs, and 11 are needed.
func TestSearchBudgetBoundsInfeasibleSearch(t *testing.T) {
	var jobs []Job
	for i := 1; i <= 40; i++ {
		jobs = append(jobs, job("b"+string(rune('A'+i)), "b", uint64(i), 1, P))
	}
	v := View{Node: Node{ID: "n1", Total: cpu(40)}, Total: cluster, Thresholds: defaultThresholds, Jobs: jobs,
		Operations: []Operation{op("a", 0.3, 0).starving().next(11).build(), op("b", 0.3, 40).build()}}
	got, err := Preempt(&v)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Decisions) != 0 || len(got.Refusals) != 1 || got.Refusals[0].Code != RefusalNotEnoughPreemptible {
		t.Fatalf("want a refusal, got\n%s", got.Explain())
	}
}
