package dashboard

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
)

var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// pool is an element of a test result: a pool at depth, under parent,
// using cpu (and demanding twice that), with a fair share of half the
// cluster's cpu of 100.
func pool(name, parent string, depth int, cpu float64) scheduler.ElementResult {
	kind := scheduler.KindPool
	if depth == 0 {
		kind = scheduler.KindRoot
	}
	e := scheduler.ElementResult{Kind: kind, Name: name, Parent: parent, Depth: depth}
	e.ResourceUsage[scheduler.CPU], e.ResourceDemand[scheduler.CPU] = cpu, 2*cpu
	e.FairShare.Total[scheduler.CPU] = 0.5
	return e
}

// result is a fair-share update at t0+at of a cluster with 100 cpu.
func result(at time.Duration, elements ...scheduler.ElementResult) *scheduler.Result {
	r := &scheduler.Result{Now: t0.Add(at), Elements: elements}
	r.Total[scheduler.CPU] = 100
	return r
}

func cpuSeries(points []SeriesPoint) []float64 {
	var out []float64
	for _, p := range points {
		out = append(out, p.Usage[scheduler.CPU])
	}
	return out
}

func times(points []SeriesPoint) []time.Duration {
	var out []time.Duration
	for _, p := range points {
		out = append(out, p.Time.Sub(t0))
	}
	return out
}

func TestHistoryKeepsOneSamplePerResolutionWithinTheWindow(t *testing.T) {
	h := NewHistory(Config{Window: 10 * time.Second, Resolution: time.Second, MaxPools: 10})
	var recorded []bool
	for _, at := range []time.Duration{0, 500 * time.Millisecond, time.Second, time.Second, 4 * time.Second, 12 * time.Second, 13500 * time.Millisecond} {
		recorded = append(recorded, h.Record("t", result(at, pool(scheduler.RootID, "", 0, float64(at/time.Millisecond)))))
	}
	if diff := cmp.Diff([]bool{true, false, true, false, true, true, true}, recorded); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
	points, samples := h.Series("t", scheduler.RootID)
	// 0s and 1s are more than the window before 13.5s.
	if diff := cmp.Diff([]time.Duration{4 * time.Second, 12 * time.Second, 13500 * time.Millisecond}, times(points)); diff != "" {
		t.Errorf("sample times (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]float64{4000, 12000, 13500}, cpuSeries(points)); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	if samples != 3 {
		t.Errorf("samples = %d, want 3", samples)
	}
	if h.Record("t", nil) || h.Record("t", &scheduler.Result{}) {
		t.Error("a missing result or one without a time was recorded")
	}
}

func TestHistoryBoundsItsSamplesWhateverTheTimes(t *testing.T) {
	h := NewHistory(Config{Window: 10 * time.Second, Resolution: time.Second, MaxPools: 1})
	// Times at exactly the resolution keep 11 samples (10s of them, both
	// ends included), never more.
	for k := range 50 {
		h.Record("t", result(time.Duration(k)*time.Second, pool(scheduler.RootID, "", 0, 1)))
	}
	if _, n := h.Series("t", scheduler.RootID); n != 11 {
		t.Errorf("samples = %d, want 11", n)
	}
}

func TestHistoryStartsAgainWhenTimeGoesBack(t *testing.T) {
	h := NewHistory(Config{Window: time.Hour, Resolution: time.Second, MaxPools: 10})
	h.Record("t", result(10*time.Second, pool(scheduler.RootID, "", 0, 1)))
	h.Record("t", result(20*time.Second, pool(scheduler.RootID, "", 0, 2)))
	if !h.Record("t", result(5*time.Second, pool(scheduler.RootID, "", 0, 3))) {
		t.Fatal("an update older than the last sample was not recorded")
	}
	points, _ := h.Series("t", scheduler.RootID)
	if diff := cmp.Diff([]float64{3}, cpuSeries(points)); diff != "" {
		t.Errorf("usage after the clock went back (-want +got):\n%s", diff)
	}
}

func TestHistoryKeepsThePoolsNearestTheRoot(t *testing.T) {
	h := NewHistory(Config{Window: time.Hour, Resolution: time.Second, MaxPools: 3})
	// Depth-first order, as a result has it: a, a/deep, b. The root, a
	// and b are kept; deep is not.
	op := scheduler.ElementResult{Kind: scheduler.KindOperation, Name: "op", Parent: "b", Depth: 2}
	h.Record("t", result(0, pool(scheduler.RootID, "", 0, 10), pool("a", scheduler.RootID, 1, 4), pool("deep", "a", 2, 4), pool("b", scheduler.RootID, 1, 6), op))
	got := map[string][]float64{}
	for _, name := range []string{scheduler.RootID, "a", "deep", "b", "op"} {
		points, samples := h.Series("t", name)
		if samples != 1 {
			t.Errorf("%s: samples = %d, want 1", name, samples)
		}
		got[name] = cpuSeries(points)
	}
	want := map[string][]float64{scheduler.RootID: {10}, "a": {4}, "deep": nil, "b": {6}, "op": nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kept pools' usage (-want +got):\n%s", diff)
	}
	if points, n := h.Series("other", "a"); points != nil || n != 0 {
		t.Errorf("unknown tree: %v, %d", points, n)
	}
}

func TestHistoryValues(t *testing.T) {
	h := NewHistory(Config{Window: time.Hour, Resolution: time.Second, MaxPools: 10})
	b := pool("b", scheduler.RootID, 1, 3)
	b.StarvationStatus = scheduler.Starving
	b.Integral = &scheduler.IntegralAttributes{GuaranteeType: scheduler.GuaranteeBurst}
	b.Integral.AccumulatedResourceVolume[scheduler.CPU] = 1234.5
	h.Record("t", result(0, pool(scheduler.RootID, "", 0, 3), b))
	points, _ := h.Series("t", "b")
	want := SeriesPoint{Time: t0, Integral: true, Starvation: scheduler.Starving}
	want.Usage[scheduler.CPU], want.Demand[scheduler.CPU], want.FairShare[scheduler.CPU] = 3, 6, 50
	want.Volume[scheduler.CPU] = 1234.5
	if diff := cmp.Diff([]SeriesPoint{want}, points); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
	root, _ := h.Series("t", scheduler.RootID)
	if root[0].Integral || root[0].Volume != (scheduler.Resources{}) {
		t.Errorf("the root has a volume: %+v", root[0])
	}
}

// A tree whose pools keep changing (ephemeral pools come and go) keeps
// its slot table bounded, and the series stay right across compactions.
func TestHistoryForgetsPoolsThatLeft(t *testing.T) {
	h := NewHistory(Config{Window: 5 * time.Second, Resolution: time.Second, MaxPools: 2})
	for k := range 100 {
		h.Record("t", result(time.Duration(k)*time.Second, pool(scheduler.RootID, "", 0, float64(k)), pool(fmt.Sprintf("p%d", k), scheduler.RootID, 1, float64(k))))
	}
	th := h.trees["t"]
	// The 6 samples of the window hold 7 pools (the root and one each):
	// at most twice that many names are kept.
	if len(th.names) > 14 || len(th.slots) != len(th.names) {
		t.Errorf("%d slot names and %d slots kept, want at most 14", len(th.names), len(th.slots))
	}
	points, _ := h.Series("t", scheduler.RootID)
	if diff := cmp.Diff([]float64{94, 95, 96, 97, 98, 99}, cpuSeries(points)); diff != "" {
		t.Errorf("root usage (-want +got):\n%s", diff)
	}
	for _, name := range []string{"p99", "p95"} {
		points, _ := h.Series("t", name)
		want := float64(0)
		fmt.Sscanf(name, "p%g", &want)
		if diff := cmp.Diff([]float64{want}, cpuSeries(points)); diff != "" {
			t.Errorf("%s usage (-want +got):\n%s", name, diff)
		}
	}
	if points, _ := h.Series("t", "p10"); points != nil {
		t.Errorf("p10 left the window, yet has %d points", len(points))
	}
	h.Retain([]string{"other"})
	if _, n := h.Series("t", scheduler.RootID); n != 0 {
		t.Errorf("a tree that is gone still has %d samples", n)
	}
}

// Record and Series from several goroutines (for the race detector).
func TestHistoryIsSafeForConcurrentUse(t *testing.T) {
	h := NewHistory(Config{Window: time.Minute, Resolution: time.Millisecond, MaxPools: 4})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 200 {
				if g%2 == 0 {
					h.Record("t", result(time.Duration(k)*time.Millisecond, pool(scheduler.RootID, "", 0, 1), pool(fmt.Sprintf("p%d", k%7), scheduler.RootID, 1, 1)))
				} else {
					h.Series("t", scheduler.RootID)
					h.Retain([]string{"t"})
				}
			}
		}()
	}
	wg.Wait()
	if _, n := h.Series("t", scheduler.RootID); n == 0 {
		t.Error("no sample recorded")
	}
}
