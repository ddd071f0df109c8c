package dashboard

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/scheduler"
)

// A snapshot as the tree actor gives it: the latest update has the root
// and pool a; pool b was created since, under a.
func snapshot() *actors.TreeIntrospection {
	a := pool("a", scheduler.RootID, 1, 10)
	a.StrongGuaranteeShare[scheduler.CPU] = 0.25
	a.StarvationStatus = scheduler.Starving
	return &actors.TreeIntrospection{
		Tree:   "physical",
		Result: result(0, pool(scheduler.RootID, "", 0, 10), a),
		Pools: []actors.PoolIntrospection{
			{Name: scheduler.RootID, Counts: scheduler.PoolCounts{Operations: 3, Running: 2, Pending: 0}},
			{Name: "a", Parent: scheduler.RootID, Counts: scheduler.PoolCounts{Operations: 3, Running: 2, Pending: 1, MaxRunning: 2}},
			{Name: "b", Parent: "a"},
		},
		Operations: []actors.OperationIntrospection{{
			ID: "op-9", Pool: "a", SpecDemand: scheduler.Resources{scheduler.CPU: 4},
			Admission: scheduler.AdmissionInfo{State: scheduler.AdmissionPending, PendingReason: "max_running_operation_count of a reached (2/2)", QueuePool: "a"},
		}},
	}
}

func TestTreePage(t *testing.T) {
	p := buildTreePage(snapshot(), 10)
	type row struct {
		Name, Guarantee, Starvation string
		Indent                      int
		Seen                        bool
		FairShare, Usage, Demand    float64
	}
	var got []row
	for _, r := range p.Pools {
		got = append(got, row{r.Name, r.Guarantee, r.Starvation, r.Indent, r.Seen, r.FairShare, r.Usage, r.Demand})
	}
	want := []row{
		{Name: scheduler.RootID, Guarantee: "—", Starvation: "non_starving", Seen: true, FairShare: 0.5},
		{Name: "a", Guarantee: "strong 25%", Starvation: "starving", Indent: 1, Seen: true, FairShare: 0.5},
		// Not in the update yet: under its parent, without shares.
		{Name: "b", Guarantee: "—", Starvation: "—", Indent: 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pools (-want +got):\n%s", diff)
	}
	wantPending := []pendingRow{{ID: "op-9", Pool: "a", QueuePool: "a", Reason: "max_running_operation_count of a reached (2/2)", Demand: "cpu 4"}}
	if diff := cmp.Diff(wantPending, p.Pending); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	if p.PendingTotal != 1 || p.Total != "cpu 100" || p.UpdateTime != "2026-11-28 12:00:00 UTC" {
		t.Errorf("total %q, update %q, pending %d", p.Total, p.UpdateTime, p.PendingTotal)
	}
	// The page renders, and the starving pool's row is marked.
	pg, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := pg.byName["tree"].Execute(&b, p); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), `<tr class="starving">`); n != 1 {
		t.Errorf("%d rows marked starving, want 1", n)
	}
	if !strings.Contains(b.String(), "not in the latest update yet") {
		t.Error("pool b is not said to be new")
	}
	if strings.Contains(b.String(), "pools in the tree's order are listed") {
		t.Error("every pool is listed, yet the page says only the first are")
	}
	// Two rows at most: the root and a, and the page says so.
	short := buildTreePage(snapshot(), 2)
	if len(short.Pools) != 2 || short.PoolsTotal != 3 {
		t.Errorf("%d rows of %d, want 2 of 3", len(short.Pools), short.PoolsTotal)
	}
	b.Reset()
	if err := pg.byName["tree"].Execute(&b, short); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "The first 2 of 3 pools in the tree's order are listed") {
		t.Error("the page does not say that only the first pools are listed")
	}
}

func TestPoolPageSaysWhyThereIsNoChart(t *testing.T) {
	cfg := Config{}.Defaults()
	in := snapshot()
	for _, tc := range []struct {
		name    string
		series  []SeriesPoint
		samples int
		says    string
		charts  int
	}{
		{"nothing sampled", nil, 0, "No history yet", 0},
		{"pool not kept", nil, 5, "keeps the 200 pools nearest to the root", 0},
		{"sampled", []SeriesPoint{{Time: t0}, {Time: t0.Add(time.Second)}}, 2, "2 samples from", 2},
	} {
		p := buildPoolPage(in, "a", scheduler.CPU, tc.series, tc.samples, cfg)
		if !strings.Contains(p.Note, tc.says) || len(p.Charts) != tc.charts {
			t.Errorf("%s: note %q and %d charts, want %q and %d", tc.name, p.Note, len(p.Charts), tc.says, tc.charts)
		}
	}
	p := buildPoolPage(in, "b", scheduler.CPU, nil, 0, cfg)
	if !strings.Contains(p.Note, "does not have this pool yet") || len(p.Attributes) != 3 {
		t.Errorf("new pool: note %q, %d attributes", p.Note, len(p.Attributes))
	}
	if p := buildPoolPage(in, "a", scheduler.CPU, nil, 0, cfg); len(p.Children) != 1 || p.Children[0].Text != "b" {
		t.Errorf("children of a: %v", p.Children)
	}
}
