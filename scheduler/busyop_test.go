package scheduler

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// generalOperationS is an operation's FairShareBySuggestion built the
// general way: F, MaxFitFactorBySuggestion without guarantees, S = F∘M.
func generalOperationS(w *workspace, usage, demand, lim Share, gang bool) vfunc {
	w.f = operationFunc(w.f, usage, demand, gang)
	return operationS(w, w.f, lim)
}

// drawShareLevel draws a share from a few exact levels (so that resources
// tie) or from anywhere in [0, hi].
func drawShareLevel(t *rapid.T, label string, hi float64) float64 {
	return rapid.OneOf(
		rapid.SampledFrom([]float64{0, 0, 0.1, 0.25, 0.5, 1}),
		rapid.Float64Range(0, hi),
		rapid.Float64Range(0, hi/100),
	).Draw(t, label)
}

// TestPropertyBusyOperationSMatchesGeneralPath: whenever busyOperationS
// builds an operation's S, it is the general path's, bit for bit.
func TestPropertyBusyOperationSMatchesGeneralPath(t *testing.T) {
	built, drawn := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		var usage, demand, lim Share
		for r := range NumResources {
			usage[r] = drawShareLevel(t, "usage", 0.5) / 2
			demand[r] = usage[r] + float64(drawShareLevel(t, "extra", 1.2)/4)
			lim[r] = rapid.OneOf(rapid.Just(1.0), rapid.Just(1.0), rapid.Float64Range(0, 1.2)).Draw(t, "limit")
		}
		if rapid.Bool().Draw(t, "notGPU") {
			usage[GPU], demand[GPU] = 0, 0 // a cluster without gpu
		}
		var w workspace
		w.reset(16)
		drawn++
		got, ok := busyOperationS(&w, usage, demand, lim)
		if !ok {
			return
		}
		built++
		want := generalOperationS(&w, usage, demand, lim, false)
		if d := cmp.Diff(want, got, cmp.AllowUnexported(vpoint{})); d != "" {
			t.Fatalf("usage %v demand %v limits %v: S (-general +busy):\n%s", usage, demand, lim, d)
		}
	})
	if built < drawn/3 {
		t.Errorf("busyOperationS built only %d of %d functions", built, drawn)
	}
}

// TestPropertyIdleOperationSMatchesGeneralPath: whenever idleOperationS
// builds the S of an operation that uses nothing, it is the general path's,
// bit for bit (a limit binding on the way to the demand included: both move
// the crossing back alike, see backInside).
func TestPropertyIdleOperationSMatchesGeneralPath(t *testing.T) {
	built, bound, drawn := 0, 0, 0
	rapid.Check(t, func(t *rapid.T) {
		var demand, lim Share
		for r := range NumResources {
			demand[r] = drawShareLevel(t, "demand", 1.2) / 2
			lim[r] = rapid.OneOf(rapid.Just(1.0), rapid.Float64Range(0, 0.6), rapid.Float64Range(0, 1e-3)).Draw(t, "limit")
		}
		if rapid.Bool().Draw(t, "notGPU") {
			demand[GPU] = 0 // a cluster without gpu
		}
		var w workspace
		w.reset(16)
		drawn++
		got, ok := idleOperationS(&w, demand, lim)
		if !ok {
			return
		}
		built++
		for r := range demand {
			if demand[r] > lim[r] {
				bound++
				break
			}
		}
		want := generalOperationS(&w, Share{}, demand, lim, false)
		if d := cmp.Diff(want, got, cmp.AllowUnexported(vpoint{})); d != "" {
			t.Fatalf("demand %v limits %v: S (-general +idle):\n%s", demand, lim, d)
		}
	})
	if built < drawn/3 || bound < built/10 {
		t.Errorf("idleOperationS built %d of %d functions, %d with a limit binding", built, drawn, bound)
	}
}

// TestBusyOperationSCases covers the shapes of S: distinct and tied usage
// levels, a demand met in the dominant resource, a limit binding on the way
// to the demand, a σ passing 1 (the general path's), usage above a limit.
func TestBusyOperationSCases(t *testing.T) {
	tests := []struct {
		name                string
		usage, demand, lims Share
		fast                bool
	}{
		{"distinct usage levels", Share{0.1, 0.2, 0, 0.05, 0}, Share{0.3, 0.4, 0, 0.2, 0}, Share{1, 1, 0, 1, 0}, true},
		{"tied usage levels", Share{0.2, 0.2, 0, 0.1, 0.1}, Share{0.4, 0.3, 0, 0.5, 0.1}, Share{1, 1, 0, 1, 1}, true},
		{"fully running", Share{0.2, 0.1, 0, 0.1, 0}, Share{0.2, 0.1, 0, 0.1, 0}, Share{1, 1, 0, 1, 0}, true},
		{"dominant demand met", Share{0.2, 0.1, 0, 0.1, 0}, Share{0.2, 0.3, 0, 0.4, 0}, Share{1, 1, 0, 1, 0}, true},
		{"limit binds on the way to the demand", Share{0.1, 0.1, 0, 0.1, 0}, Share{0.5, 0.3, 0, 0.2, 0}, Share{0.2, 1, 0, 1, 0}, true},
		{"usage above a limit", Share{0.3, 0.1, 0, 0.1, 0}, Share{0.5, 0.3, 0, 0.2, 0}, Share{0.2, 1, 0, 1, 0}, false},
		{"demand above the cluster, limited", Share{0.1, 0.1, 0, 0.1, 0}, Share{1.5, 0.3, 0, 0.2, 0}, Share{0.8, 1, 0, 1, 0}, true},
		{"σ reaching 1 at the limit", Share{0.1, 0.1, 0, 0.1, 0}, Share{1.5, 0.3, 0, 0.2, 0}, Share{1, 1, 0, 1, 0}, false},
		{"σ passing 1", Share{0.1, 0.1, 0, 0.1, 0}, Share{1.5, 0.3, 0, 0.2, 0}, Share{2, 1, 0, 1, 0}, false},
		{"usage only where the total is 0", Share{}, Share{0.5, 0.3, 0, 0.2, 0}, Share{1, 1, 0, 1, 0}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var w workspace
			w.reset(16)
			got, ok := busyOperationS(&w, tc.usage, tc.demand, tc.lims)
			if ok != tc.fast {
				t.Fatalf("busyOperationS ok = %v, want %v", ok, tc.fast)
			}
			if !ok {
				return
			}
			want := generalOperationS(&w, tc.usage, tc.demand, tc.lims, false)
			if d := cmp.Diff(want, got, cmp.AllowUnexported(vpoint{})); d != "" {
				t.Errorf("S (-general +busy):\n%s", d)
			}
		})
	}
}

// TestBusyOperationSOnBenchmarkTree: on the benchmark's largest tree (busy
// variant) every busy operation's S is the general path's, and the direct
// construction serves nearly all of them.
func TestBusyOperationSOnBenchmarkTree(t *testing.T) {
	if testing.Short() {
		t.Skip("large tree")
	}
	p := benchParams(1000, 10000)
	p.Busy = true
	snap, prev := genSnapshot(p)
	prev.LastUpdate = snap.Now.Add(-time.Second)
	var en Engine
	if _, err := en.Update(snap, prev); err != nil {
		t.Fatalf("Update: %v", err)
	}
	tr := &en.t
	busy, fast := 0, 0
	for i := range tr.el {
		e := &tr.el[i]
		if e.kind != KindOperation || e.idle || e.gang {
			continue
		}
		busy++
		var w workspace
		w.reset(16)
		got, ok := busyOperationS(&w, e.usageShare, e.demandShare, e.limitsShare)
		if !ok {
			continue
		}
		fast++
		want := generalOperationS(&w, e.usageShare, e.demandShare, e.limitsShare, false)
		if d := cmp.Diff(want, got, cmp.AllowUnexported(vpoint{})); d != "" {
			t.Fatalf("%s: S (-general +busy):\n%s", tr.names[i], d)
		}
	}
	if busy == 0 || float64(fast) < 0.9*float64(busy) {
		t.Errorf("busyOperationS built %d of %d busy operations' functions", fast, busy)
	}
	t.Logf("busyOperationS built %d of %d busy operations' functions", fast, busy)
}

// BenchmarkBusyOperationS builds the FairShareBySuggestion of every busy
// operation of the busy benchmark tree (10,000 operations), the general way
// and directly.
func BenchmarkBusyOperationS(b *testing.B) {
	p := benchParams(1000, 10000)
	p.Busy = true
	snap, prev := genSnapshot(p)
	var en Engine
	if _, err := en.Update(snap, prev); err != nil {
		b.Fatalf("Update: %v", err)
	}
	type input struct{ usage, demand, lim Share }
	var ops []input
	for i := range en.t.el {
		if e := &en.t.el[i]; e.kind == KindOperation && !e.idle && !e.gang {
			ops = append(ops, input{e.usageShare, e.demandShare, e.limitsShare})
		}
	}
	var w workspace
	b.Run("general", func(b *testing.B) {
		for range b.N {
			w.reset(len(ops))
			for _, o := range ops {
				generalOperationS(&w, o.usage, o.demand, o.lim, false)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		for range b.N {
			w.reset(len(ops))
			for _, o := range ops {
				if _, ok := busyOperationS(&w, o.usage, o.demand, o.lim); !ok {
					generalOperationS(&w, o.usage, o.demand, o.lim, false)
				}
			}
		}
	})
}
