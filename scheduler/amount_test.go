package scheduler

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// drawAmount draws an amount the engine accepts, favouring the ends of the
// range: 0, MinAmount, hi, or a number log-uniform in between.
func drawAmount(t *rapid.T, label string, hi float64) float64 {
	switch rapid.IntRange(0, 3).Draw(t, label+".kind") {
	case 0:
		return 0
	case 1:
		return MinAmount
	case 2:
		return hi
	default:
		lo := math.Log(MinAmount)
		v := math.Exp(lo + float64((math.Log(hi)-lo)*rapid.Float64Range(0, 1).Draw(t, label+".log")))
		return min(max(v, MinAmount), hi) // exp(log(hi)) may round past hi
	}
}

func drawResources(t *rapid.T, label string, hi float64) Resources {
	var r Resources
	for i := range r {
		r[i] = drawAmount(t, fmt.Sprintf("%s.%d", label, i), hi)
	}
	return r
}

func drawPartial(t *rapid.T, label string) PartialResources {
	var p PartialResources
	for i := range NumResources {
		if rapid.Bool().Draw(t, fmt.Sprintf("%s.%d.set", label, i)) {
			p = p.With(ResourceType(i), drawAmount(t, fmt.Sprintf("%s.%d", label, i), MaxAmount))
		}
	}
	return p
}

// drawExtremeSnapshot draws a small tree whose every amount is at or near
// the ends of the accepted ranges (see amount.go): cluster totals up to
// MaxClusterAmount, guarantees, limits, flows, demands and usages from
// MinAmount to MaxAmount beside zeros, volumes up to MaxVolume and up to a
// century between updates.
func drawExtremeSnapshot(t *rapid.T) (*Snapshot, *State) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	snap := &Snapshot{Now: now, Tree: DefaultTreeConfig()}
	if rapid.Bool().Draw(t, "as nodes") {
		nodes := make([]Node, rapid.IntRange(1, 3).Draw(t, "nodes"))
		for k := range nodes {
			nodes[k] = Node{ID: NodeID(fmt.Sprintf("n%d", k)), Resources: drawResources(t, fmt.Sprintf("node%d", k), MaxAmount)}
		}
		snap.Cluster = NewClusterFromNodes(nodes)
	} else {
		snap.Cluster.Total = drawResources(t, "total", MaxClusterAmount)
	}
	np := rapid.IntRange(1, 4).Draw(t, "pools")
	hasKids := make([]bool, np)
	prev := &State{LastUpdate: now.Add(-[]time.Duration{0, time.Second, time.Hour, 100 * 365 * 24 * time.Hour}[rapid.IntRange(0, 3).Draw(t, "elapsed")]),
		Pools: map[PoolID]PoolState{}}
	for i := range np {
		p := PoolConfig{Name: PoolID(fmt.Sprintf("p%d", i))}
		if i > 0 {
			if k := rapid.IntRange(-1, i-1).Draw(t, fmt.Sprintf("p%d.parent", i)); k >= 0 {
				p.Parent, hasKids[k] = PoolID(fmt.Sprintf("p%d", k)), true
			}
		}
		p.StrongGuaranteeResources = drawPartial(t, string(p.Name)+".guarantee")
		if p.StrongGuaranteeResources.Set != 0 && !p.StrongGuaranteeResources.Set.Has(CPU) {
			// A guarantee names the tree's main resource.
			p.StrongGuaranteeResources = p.StrongGuaranteeResources.With(CPU, drawAmount(t, string(p.Name)+".guarantee.main", MaxAmount))
		}
		if rapid.Bool().Draw(t, string(p.Name)+".limited") {
			p.ResourceLimits = drawPartial(t, string(p.Name)+".limits")
		}
		switch rapid.IntRange(0, 2).Draw(t, string(p.Name)+".integral") {
		case 1:
			p.IntegralGuarantees.GuaranteeType = GuaranteeBurst
			p.IntegralGuarantees.ResourceFlow = drawPartial(t, string(p.Name)+".flow")
			p.IntegralGuarantees.BurstGuaranteeResources = drawPartial(t, string(p.Name)+".burst")
		case 2:
			p.IntegralGuarantees.GuaranteeType = GuaranteeRelaxed
			p.IntegralGuarantees.ResourceFlow = drawPartial(t, string(p.Name)+".flow")
		}
		if p.IntegralGuarantees.GuaranteeType != GuaranteeNone {
			var vol Resources
			for r := range vol {
				vol[r] = drawAmount(t, fmt.Sprintf("%s.volume.%d", p.Name, r), MaxVolume)
			}
			ratio := []float64{0, 1, MaxShareRatio}[rapid.IntRange(0, 2).Draw(t, string(p.Name)+".ratio")]
			prev.Pools[p.Name] = PoolState{AccumulatedVolume: vol, LastIntegralShareRatio: ratio}
		}
		snap.Pools = append(snap.Pools, p)
	}
	for i := range snap.Pools {
		if !hasKids[i] && rapid.Bool().Draw(t, fmt.Sprintf("p%d.fifo", i)) {
			snap.Pools[i].Mode = ModeFIFO
		}
	}
	for k := range rapid.IntRange(1, 6).Draw(t, "ops") {
		o := Operation{ID: OperationID(fmt.Sprintf("op%d", k)), StartTime: now.Add(-time.Duration(k) * time.Minute)}
		if i := rapid.IntRange(-1, np-1).Draw(t, fmt.Sprintf("op%d.pool", k)); i >= 0 {
			o.Pool = snap.Pools[i].Name
		}
		o.Demand = drawResources(t, fmt.Sprintf("op%d.demand", k), MaxAmount)
		if rapid.Bool().Draw(t, fmt.Sprintf("op%d.busy", k)) {
			o.Usage = drawResources(t, fmt.Sprintf("op%d.usage", k), MaxAmount)
		}
		if rapid.Bool().Draw(t, fmt.Sprintf("op%d.shaped", k)) {
			o.JobResources = drawResources(t, fmt.Sprintf("op%d.job", k), MaxAmount)
		}
		snap.Operations = append(snap.Operations, o)
	}
	return snap, prev
}

// Amounts anywhere in the accepted ranges, however far apart, give a
// result without NaN or infinities (and an update that ends: amounts 1e300
// apart once sent the fit-factor sweep into an endless loop on NaN).
// The drawn trees break no other rule, so every update succeeds.
func TestPropertyExtremeAmountsStayFinite(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap, prev := drawExtremeSnapshot(t)
		r, err := Update(snap, prev)
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
		checkWellFormed(t, r)
		checkNoNaNOrInf(t, r)
		for name, st := range r.State.Pools {
			for k, v := range st.AccumulatedVolume {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Fatalf("pool %s accumulated volume %s = %g", name, ResourceType(k), v)
				}
			}
		}
		// The state an update emits is one the next update accepts (volumes
		// in [0, MaxVolume], ratios in [0, MaxShareRatio]), however long
		// after it comes: two more updates, fed each one's state.
		for k := range 2 {
			next := *snap
			next.Now = r.State.LastUpdate.Add([]time.Duration{time.Second, time.Hour, 100 * 365 * 24 * time.Hour}[rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("elapsed%d", k))])
			st := r.State
			if r, err = Update(&next, &st); err != nil {
				t.Fatalf("update %d, fed the state of the one before: %v", k+2, err)
			}
			checkNoNaNOrInf(t, r)
		}
	})
}

// Amounts outside the accepted ranges are refused with the package's
// sentinel, naming the field (the inputs that once gave NaN, +Inf or an
// endless update among them).
func TestUpdateRefusesAmountsOutOfRange(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	base := func() (*Snapshot, *State) {
		return &Snapshot{
			Now: now, Tree: DefaultTreeConfig(),
			Cluster:    Cluster{Total: Resources{CPU: 10, Memory: 100}},
			Pools:      []PoolConfig{{Name: "p"}},
			Operations: []Operation{{ID: "o", Pool: "p", Demand: Resources{CPU: 1}}},
		}, &State{LastUpdate: now.Add(-time.Second), Pools: map[PoolID]PoolState{}}
	}
	tests := []struct {
		name     string
		change   func(*Snapshot, *State)
		sentinel error
		want     string
	}{
		{"cluster total past the largest", func(s *Snapshot, _ *State) { s.Cluster.Total[Memory] = 1e300 },
			ErrInvalidConfig, "cluster total memory must be 0 or a number in [1e-09, 1e+25], got 1e+300"},
		{"cluster total below the smallest", func(s *Snapshot, _ *State) { s.Cluster.Total[CPU] = 1e-300 },
			ErrInvalidConfig, "cluster total cpu must be 0 or a number in [1e-09, 1e+25], got 1e-300"},
		{"negative cluster total", func(s *Snapshot, _ *State) { s.Cluster.Total[CPU] = -1 },
			ErrInvalidConfig, "cluster total cpu must be 0 or a number in [1e-09, 1e+25], got -1"},
		{"node amount past the largest", func(s *Snapshot, _ *State) {
			s.Cluster = NewClusterFromNodes([]Node{{ID: "n1", Resources: Resources{CPU: 10, Memory: 2e18}}})
		}, ErrInvalidConfig, `node "n1" resources memory must be 0 or a number in [1e-09, 1e+18], got 2e+18`},
		{"guarantee at the largest float", func(s *Snapshot, _ *State) {
			s.Pools[0].StrongGuaranteeResources = PartialResources{}.With(CPU, math.MaxFloat64)
		}, ErrInvalidConfig, "cpu must be 0 or a number in [1e-09, 1e+18], got 1.7976931348623157e+308"},
		{"flow past the largest", func(s *Snapshot, _ *State) {
			s.Pools[0].IntegralGuarantees = IntegralGuarantees{GuaranteeType: GuaranteeBurst,
				ResourceFlow: PartialResources{}.With(CPU, 1e19), BurstGuaranteeResources: PartialResources{}.With(CPU, 1)}
		}, ErrInvalidConfig, "cpu must be 0 or a number in [1e-09, 1e+18], got 1e+19"},
		{"demand below the smallest", func(s *Snapshot, _ *State) { s.Operations[0].Demand[Memory] = 1e-300 },
			ErrInvalidOperation, `operation "o" demand: memory must be 0 or a number in [1e-09, 1e+18], got 1e-300`},
		{"usage NaN", func(s *Snapshot, _ *State) { s.Operations[0].Usage[CPU] = math.NaN() },
			ErrInvalidOperation, `operation "o" usage: cpu must be 0 or a number in [1e-09, 1e+18], got NaN`},
		{"job resources infinite", func(s *Snapshot, _ *State) { s.Operations[0].JobResources[CPU] = math.Inf(1) },
			ErrInvalidOperation, `operation "o" job_resources: cpu must be 0 or a number in [1e-09, 1e+18], got +Inf`},
		{"volume past the largest", func(_ *Snapshot, st *State) {
			st.Pools["p"] = PoolState{AccumulatedVolume: Resources{CPU: 1e29}}
		}, ErrInvalidState, `pool "p" accumulated volume cpu must be a number in [0, 1e+28], got 1e+29`},
		{"share ratio NaN", func(_ *Snapshot, st *State) {
			st.Pools["q"] = PoolState{}
			st.Pools["p"] = PoolState{LastIntegralShareRatio: math.NaN()}
		}, ErrInvalidState, `pool "p" last integral share ratio must be a number in [0, 1e+27], got NaN`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap, prev := base()
			tc.change(snap, prev)
			_, err := Update(snap, prev)
			if !errors.Is(err, tc.sentinel) || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Update: %v; want an error wrapping %v containing %q", err, tc.sentinel, tc.want)
			}
		})
	}
	t.Run("the ends of the ranges", func(t *testing.T) {
		snap, prev := base()
		snap.Cluster.Total = Resources{CPU: MaxClusterAmount, Memory: MinAmount}
		snap.Operations[0].Demand = Resources{CPU: MaxAmount, Memory: MinAmount}
		if _, err := Update(snap, prev); err != nil {
			t.Fatalf("Update: %v", err)
		}
	})
}
