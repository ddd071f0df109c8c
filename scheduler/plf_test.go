package scheduler

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rightAt is the right limit of f at t (for tests).
func (f vfunc) rightAt(t float64) Share {
	var v Share
	f.rightAtIndexTo(&v, t, f.search(t))
	return v
}

func sv(x ...float64) Share {
	var s Share
	copy(s[:], x)
	return s
}

func TestVfuncLeftContinuous(t *testing.T) {
	// 0 on [0,1], jumps to 1 at 1, then 1 on [1,2].
	f := vfunc{{x: 0}, {x: 1, r: sv(1)}, {x: 2, l: sv(1), r: sv(1)}}
	cases := map[string]struct {
		at        float64
		want      float64
		wantRight float64
	}{
		"before jump":       {0.5, 0, 0},
		"at jump (left)":    {1, 0, 1},
		"after jump":        {1.5, 1, 1},
		"beyond the domain": {3, 1, 1},
		"start":             {0, 0, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := f.at(tc.at)[0]; got != tc.want {
				t.Errorf("at(%g) = %g, want %g", tc.at, got, tc.want)
			}
			if got := f.rightAt(tc.at)[0]; got != tc.wantRight {
				t.Errorf("rightAt(%g) = %g, want %g", tc.at, got, tc.wantRight)
			}
		})
	}
}

func TestTransposeEndpointRules(t *testing.T) {
	// F_0: 0 on [0,1] (flat at level 0), then rises to 1 at f=2 with a flat
	// piece at level 0.5 on [1.25, 1.75].
	f := vfunc{
		{x: 0}, {x: 1}, {x: 1.25, l: sv(0.5), r: sv(0.5)}, {x: 1.75, l: sv(0.5), r: sv(0.5)}, {x: 2, l: sv(1), r: sv(1)},
	}
	m := transposeComponent(f, 0, 0, 1, nil)
	cases := map[string]struct{ s, want float64 }{
		"s=0 takes the right end of the flat piece at g": {0, 1},
		"inside the first rise":                          {0.25, 1.125},
		"at a flat level: left end":                      {0.5, 1.25},
		"just above the flat level":                      {0.5 + 1e-9, 1.75},
		"top":                                            {1, 2},
	}
	for name, tc := range cases {
		if got := m.at(tc.s); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("%s: M(%g) = %g, want %g", name, tc.s, got, tc.want)
		}
	}
	// Limited at 0.5: beyond s = 0.5 the target is capped, M stays at the
	// right end of the flat piece at the limit.
	lim := transposeComponent(f, 0, 0, 0.5, nil)
	if got := lim.at(0.5); got != 1.25 {
		t.Errorf("limited M(0.5) = %g, want 1.25 (left end)", got)
	}
	if got := lim.at(0.75); got != 1.75 {
		t.Errorf("limited M(0.75) = %g, want 1.75 (right end)", got)
	}
}

func TestMinSKeepsOnlyBindingBreakpoints(t *testing.T) {
	a := sfunc{{x: 0, l: 0, r: 0}, {x: 0.5, l: 0.5, r: 0.5}, {x: 1, l: 1, r: 1}} // identity with a redundant point
	b := sfunc{{x: 0, l: 2, r: 2}, {x: 0.25, l: 2.5, r: 2.5}, {x: 1, l: 3, r: 3}}
	got := minS(nil, []sfunc{a, b})
	// b never binds; a's own breakpoint at 0.5 is kept (it is a's), b's 0.25 is not.
	want := sfunc{{x: 0, l: 0, r: 0}, {x: 0.5, l: 0.5, r: 0.5}, {x: 1, l: 1, r: 1}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(spoint{})); d != "" {
		t.Errorf("minS (-want +got):\n%s", d)
	}
	// Crossing lines: a rises 0→1, c falls... c rises slower from 0.4.
	c := sfunc{{x: 0, l: 0.4, r: 0.4}, {x: 1, l: 0.6, r: 0.6}}
	got = minS(nil, []sfunc{a, c})
	if v := got.at(0.5); math.Abs(v-0.5) > 1e-12 { // crossing at 0.5
		t.Errorf("min at 0.5 = %g, want 0.5", v)
	}
	if v := got.at(0.8); math.Abs(v-0.56) > 1e-12 {
		t.Errorf("min at 0.8 = %g, want 0.56", v)
	}
}

// scaledChild is one term of a fair_share pool's FairShareByFitFactor:
// S_c(min(1, f·scale)). A zero scale contributes the constant S_c(0).
type scaledChild struct {
	fn    vfunc
	scale float64
}

// sumScaled builds F(f) = Σ_c S_c(min(1, f·scale_c)) on [0, 1] from complete
// children's functions with a childSum, as a pool's sum does.
func sumScaled(dst vfunc, children []scaledChild) vfunc {
	var base Share
	var s childSum
	s.reset(nil)
	for _, c := range children {
		if c.scale <= 0 {
			base = base.Add(c.fn[0].l)
			continue
		}
		s.add(-1, c.fn, true, activeEnd(c.fn), c.scale)
	}
	f, _, _ := s.sum(dst, base, 0)
	return f
}

// sum builds F, or its first points: with target > 0 it may stop once it
// has target points (see run).
func (s *childSum) sum(dst vfunc, base Share, target int) (f vfunc, final int, done bool) {
	s.start(dst, base)
	return s.run(target)
}

func TestSumScaledKeepsFlatPiecesExact(t *testing.T) {
	// Two children whose slopes cancel by rounding if added and subtracted
	// carelessly: after both reach their top the sum must be exactly flat.
	a := vfunc{{x: 0}, {x: 0.3, l: sv(0.1), r: sv(0.1)}, {x: 1, l: sv(0.1), r: sv(0.1)}}
	b := vfunc{{x: 0}, {x: 0.7, l: sv(0.2), r: sv(0.2)}, {x: 1, l: sv(0.2), r: sv(0.2)}}
	f := sumScaled(nil, []scaledChild{{fn: a, scale: 1}, {fn: b, scale: 1}})
	end := f[len(f)-1].l[0]
	if v := f.at(0.85)[0]; v != end {
		t.Errorf("sum on the flat piece = %.20g, end = %.20g: not exactly flat", v, end)
	}
}

func TestGangOperations(t *testing.T) {
	total := res(100, 100, 1000)
	snap := func(d1, d2 float64) *Snapshot {
		cfg := DefaultTreeConfig()
		cfg.EnableStepFunctionForGangOperations = true
		return &Snapshot{Cluster: Cluster{Total: total}, Tree: cfg,
			Pools: []PoolConfig{{Name: "A"}, {Name: "B"}},
			Operations: []Operation{
				{ID: "a", Pool: "A", IsGang: true, Demand: total.Scale(d1)},
				{ID: "b", Pool: "B", IsGang: true, Demand: total.Scale(d2)},
			}}
	}
	// Two gangs of 0.6 in two equal pools get nothing (left-continuity at
	// the jump); with 0.6 and 0.45 the smaller one fits.
	r := mustUpdate(t, snap(0.6, 0.6), nil)
	approxShare(t, "a", fs(t, r, "a"), Share{}, 1e-9)
	approxShare(t, "b", fs(t, r, "b"), Share{}, 1e-9)
	r = mustUpdate(t, snap(0.6, 0.45), nil)
	approxShare(t, "a", fs(t, r, "a"), Share{}, 1e-9)
	approxShare(t, "b", fs(t, r, "b"), sv(0.45, 0.45, 0, 0.45, 0), 1e-9)
}

func TestFIFOServesInOrder(t *testing.T) {
	total := res(100, 100, 1000)
	w2 := 2.0
	snap := &Snapshot{Cluster: Cluster{Total: total}, Tree: DefaultTreeConfig(),
		Pools: []PoolConfig{{Name: "F", Mode: ModeFIFO}},
		Operations: []Operation{
			{ID: "first", Pool: "F", Demand: res(60, 60, 600)},
			{ID: "second", Pool: "F", Demand: res(60, 60, 600)},
			{ID: "heavy", Pool: "F", Weight: &w2, Demand: res(30, 30, 300)},
		}}
	r := mustUpdate(t, snap, nil)
	// Higher weight first, then start order: heavy 0.3, first 0.6, second 0.1.
	approxShare(t, "heavy", fs(t, r, "heavy"), sv(0.3, 0.3, 0, 0.3, 0), 1e-9)
	approxShare(t, "first", fs(t, r, "first"), sv(0.6, 0.6, 0, 0.6, 0), 1e-9)
	approxShare(t, "second", fs(t, r, "second"), sv(0.1, 0.1, 0, 0.1, 0), 1e-9)
	if e, _ := r.Element("heavy"); e.FifoIndex != 0 {
		t.Errorf("heavy fifo index = %d, want 0", e.FifoIndex)
	}
}

func TestStrongGuaranteeOvercommitScaling(t *testing.T) {
	total := res(100, 100, 1000)
	for name, tc := range map[string]struct {
		a, b      float64
		wantA, wB float64
	}{
		"30+90 on 100":  {30, 90, 0.25, 0.75},
		"30+120 on 100": {30, 120, 0.2, 0.8},
	} {
		t.Run(name, func(t *testing.T) {
			snap := &Snapshot{Cluster: Cluster{Total: total}, Tree: DefaultTreeConfig(),
				Pools: []PoolConfig{{Name: "A", StrongGuaranteeResources: guarantee(tc.a)}, {Name: "B", StrongGuaranteeResources: guarantee(tc.b)}}}
			r := mustUpdate(t, snap, nil)
			a, _ := r.Element("A")
			b, _ := r.Element("B")
			if math.Abs(a.StrongGuaranteeShare[CPU]-tc.wantA) > 1e-9 || math.Abs(b.StrongGuaranteeShare[CPU]-tc.wB) > 1e-9 {
				t.Errorf("strong guarantee shares %g/%g, want %g/%g", a.StrongGuaranteeShare[CPU], b.StrongGuaranteeShare[CPU], tc.wantA, tc.wB)
			}
			if len(r.Alerts) == 0 || r.Alerts[0].Code != AlertGuaranteesOvercommit {
				t.Errorf("alerts %v, want an overcommit alert", r.Alerts)
			}
		})
	}
}

func TestInferredWeights(t *testing.T) {
	// SG 0.3/0.4 of the cluster with multiplier 10 ⇒ 30/7 and 40/7; their
	// children 0.12/0.16 of the 0.4 parent ⇒ 3 and 4.
	total := res(100, 100, 1000)
	cfg := DefaultTreeConfig()
	cfg.InferWeightFromGuaranteesShareMultiplier = ptr(10.0)
	snap := &Snapshot{Cluster: Cluster{Total: total}, Tree: cfg, Pools: []PoolConfig{
		{Name: "A", StrongGuaranteeResources: guarantee(30)},
		{Name: "B", StrongGuaranteeResources: guarantee(40)},
		{Name: "B1", Parent: "B", StrongGuaranteeResources: guarantee(12)},
		{Name: "B2", Parent: "B", StrongGuaranteeResources: guarantee(16)},
	}}
	r := mustUpdate(t, snap, nil)
	for name, want := range map[string]float64{"A": 30. / 7, "B": 40. / 7, "B1": 3, "B2": 4} {
		if e, _ := r.Element(name); math.Abs(e.Weight-want) > 1e-9 {
			t.Errorf("%s weight = %g, want %g", name, e.Weight, want)
		}
	}
}

// A child whose breakpoints are one ulp apart with a real rise between them
// (it happens after scaling by a weight ratio) must not wreck the running
// slope sum of the other children.
func TestSumScaledNearVerticalSegment(t *testing.T) {
	x0 := 0.00081075977950967402
	x1 := math.Nextafter(x0, 1)
	steep := vfunc{{x: 0}, {x: x0, l: sv(0.001), r: sv(0.001)}, {x: x1, l: sv(0.0012), r: sv(0.0012)}, {x: 1, l: sv(0.002), r: sv(0.002)}}
	ramp := vfunc{{x: 0}, {x: 1, l: sv(0.5), r: sv(0.5)}}
	other := vfunc{{x: 0}, {x: 0.3, l: sv(0.1), r: sv(0.1)}, {x: 1, l: sv(0.2), r: sv(0.2)}}
	terms := []scaledChild{{fn: steep, scale: 1}, {fn: ramp, scale: 1}, {fn: other, scale: 2}}
	f := sumScaled(nil, terms)
	for _, x := range []float64{x0, x1, 0.001, 0.1, 0.15, 0.5, 0.9, 1} {
		var direct Share
		for _, c := range terms {
			direct = direct.Add(c.fn.at(min(1, x*c.scale)))
		}
		if got := f.at(x)[0]; math.Abs(got-direct[0]) > 1e-12 {
			t.Errorf("sum at %g = %.15g, direct %.15g", x, got, direct[0])
		}
	}
}
