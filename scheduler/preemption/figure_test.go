package preemption

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/placement"
)

var update = flag.Bool("update", false, "rewrite testdata/graceful_figure.csv")

// TestGracefulFigure reproduces the preemption seed's figure as data: a
// graceful clique uses the whole cluster (4 nodes × 8 slots) when a heavy
// operation of 48 jobs of 8 to 37 s starts in the same pool at t = 10 s.
// Each second the engine updates, every node runs the graceful pass (an
// interrupted instance drains for 2 s, completes and goes back to pending),
// the regular pass and, every 5 s, the preemptive pass. The clique's usage
// follows its fair share down to half the cluster and back up as the heavy
// operation runs out of jobs. The series is compared with
// testdata/graceful_figure.csv (go test -run GracefulFigure -update
// rewrites it).
func TestGracefulFigure(t *testing.T) {
	h := newHarness(t, scheduler.DefaultTreeConfig(), []scheduler.PoolConfig{{Name: "shared"}})
	h.nodes = nil
	for i := 1; i <= 4; i++ {
		h.nodes = append(h.nodes, scheduler.Node{ID: scheduler.NodeID(fmt.Sprintf("n%d", i)), Resources: unit.Scale(8)})
	}
	const (
		heavyStart = 10
		drain      = 2 // seconds an interrupted instance takes to exit
		end        = 150
	)
	exitAt := map[placement.JobKey]int{} // interrupted instances
	doneAt := map[placement.JobKey]int{} // heavy jobs
	var csv bytes.Buffer
	csv.WriteString("t,clique_usage,clique_fair_share,heavy_usage,heavy_fair_share,leaving\n")
	share := func(id scheduler.OperationID) (usage, fair float64) {
		if u, ok := h.p.Operation(id); ok {
			usage = u.Usage[scheduler.UserSlots] / 32
		}
		if e, ok := h.res.Element(string(id)); ok {
			fair = e.FairShare.Total[scheduler.UserSlots]
		}
		return usage, fair
	}
	var converged, restored bool
	for now := 0; now <= end; now++ {
		switch now {
		case 0:
			h.add("clique", "shared", 32, ModeGraceful)
		case heavyStart:
			h.add("heavy", "shared", 48, ModeNormal)
		}
		// Jobs that leave this second.
		for _, key := range sortedKeys(exitAt) {
			if exitAt[key] == now {
				h.p.JobFinished(key, true) // completed when interrupted: its work goes back to pending
				delete(exitAt, key)
				delete(h.leaves, key)
			}
		}
		for _, key := range sortedKeys(doneAt) {
			if doneAt[key] == now {
				h.p.JobFinished(key, false)
				delete(doneAt, key)
			}
		}
		if u, ok := h.p.Operation("heavy"); ok && u.PendingJobCount == 0 && u.RunningJobCount == 0 {
			h.p.RemoveOperation("heavy")
		}
		h.update(time.Second)
		for _, n := range h.nodes {
			src := h.source()
			gv, err := src.GracefulView(h.node(n.ID), h.nodeJobs(n.ID))
			if err != nil {
				t.Fatal(err)
			}
			interrupts, err := Graceful(gv)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range interrupts {
				for _, nj := range h.nodeJobs(n.ID) {
					if nj.ID == g.Job {
						h.leaves[nj.Key], exitAt[nj.Key] = nj.Resources, now+drain
					}
				}
			}
			for _, a := range h.p.Schedule(n.ID, h.free(n.ID), 0) {
				if a.Job.Operation == "heavy" {
					doneAt[a.Job] = now + 8 + (a.Job.Index*13)%30
				}
			}
			if now%5 == 0 {
				plan, err := Preempt(mustView(t, src, h, n.ID))
				if err != nil {
					t.Fatal(err)
				}
				if len(plan.Decisions) > 0 {
					t.Fatalf("t=%d: unexpected preemption:\n%s", now, plan.Explain())
				}
			}
		}
		cu, cf := share("clique")
		hu, hf := share("heavy")
		fmt.Fprintf(&csv, "%d,%.4f,%.4f,%.4f,%.4f,%d\n", now, cu, cf, hu, hf, len(exitAt))
		if now > heavyStart && math.Abs(cu-cf) <= 1.0/32+1e-9 && hf > 0 && cf < 1 {
			converged = true
		}
		if converged && now > heavyStart && cu == 1 && cf == 1 {
			restored = true
		}
		if now < heavyStart && cu != 1 {
			t.Fatalf("t=%d: the clique uses %g of the cluster before the heavy operation, want all", now, cu)
		}
		// Graceful never takes the clique below its fair share.
		if u, ok := h.p.Operation("clique"); ok {
			var leaving scheduler.Resources
			for k, r := range h.leaves {
				if k.Operation == "clique" {
					leaving = leaving.Add(r)
				}
			}
			if staying := (u.Usage[scheduler.UserSlots] - leaving[scheduler.UserSlots]) / 32; staying < cf-1e-9 && len(exitAt) > 0 {
				t.Fatalf("t=%d: the clique keeps %g, below its fair share %g", now, staying, cf)
			}
		}
	}
	if !converged || !restored {
		t.Fatalf("converged to the fair share: %v, back to the whole cluster: %v\n%s", converged, restored, csv.String())
	}
	golden := filepath.Join("testdata", "graceful_figure.csv")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, csv.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(want, csv.Bytes()) {
		t.Errorf("the series differs from %s (run with -update after checking it):\n%s", golden, csv.String())
	}
}

func mustView(t *testing.T, src *Source, h *harness, node scheduler.NodeID) *View {
	t.Helper()
	v, err := src.PreemptionView(h.node(node), h.nodeJobs(node))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func sortedKeys(m map[placement.JobKey]int) []placement.JobKey {
	keys := make([]placement.JobKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	return keys
}
