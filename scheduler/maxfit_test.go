package scheduler

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randomMonotone builds a random non-decreasing vector function on [0, hi]
// with flat pieces, jumps and resources that never move, the shapes that
// decide left-continuity.
func randomMonotone(rng *rand.Rand, hi float64) vfunc {
	n := 2 + rng.IntN(8)
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = hi * float64(i) / float64(n-1)
	}
	var cur Share
	constant := rng.IntN(NumResources)
	f := make(vfunc, 0, n)
	for i, x := range xs {
		l := cur
		if i > 0 {
			for r := range cur {
				if r != constant && rng.IntN(3) > 0 { // a third of the pieces are flat
					cur[r] += float64(unit(rng) * 0.2)
				}
			}
			l = cur
		}
		r := l
		if i > 0 && rng.IntN(4) == 0 { // a jump
			for k := range r {
				if k != constant {
					r[k] += float64(unit(rng) * 0.1)
				}
			}
			cur = r
		}
		if i == n-1 {
			r = l
			cur = l
		}
		f = append(f, vpoint{x: x, l: l, r: r})
	}
	return f
}

// maxFitFactor (one upper envelope over the fit factor) and the reference's
// construction (per-resource transposition, then the minimum) give the same
// MaxFitFactorBySuggestion, left limits at jumps included.
func TestMaxFitFactorMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var w workspace
	for iter := range 3000 {
		f := randomMonotone(rng, []float64{1, 2, 5}[iter%3])
		flo, fhi := f[0].l, f[len(f)-1].l
		var g, lim Share
		for r := range g {
			span := fhi[r] - flo[r]
			switch rng.IntN(4) {
			case 0:
				lim[r] = 1
			case 1:
				lim[r] = flo[r] + float64(span*unit(rng))
			case 2:
				lim[r] = f[rng.IntN(len(f))].l[r] // exactly on a level
			default:
				lim[r] = flo[r]
			}
			switch rng.IntN(3) {
			case 0:
				g[r] = 0
			case 1:
				g[r] = flo[r] + float64(span*unit(rng))
			default:
				g[r] = f[rng.IntN(len(f))].r[r]
			}
		}
		want := referenceMaxFitFactor(f, g, lim)
		got := append(sfunc(nil), maxFitFactor(&w, f, g, lim)...)
		probes := []float64{0, 1}
		for _, p := range want {
			probes = append(probes, p.x, math.Nextafter(p.x, 2), math.Nextafter(p.x, -1))
		}
		for _, p := range got {
			probes = append(probes, p.x)
		}
		for range 20 {
			probes = append(probes, unit(rng))
		}
		for _, s := range probes {
			if s < 0 || s > 1 {
				continue
			}
			if a, b := got.at(s), want.at(s); math.Abs(a-b) > 1e-9 {
				t.Fatalf("iteration %d: M(%v) = %v, reference %v\nF=%v\ng=%v lim=%v\ngot=%v\nwant=%v", iter, s, a, b, f, g, lim, got, want)
			}
		}
	}
}

// A near-jump of F, a rise of a few hundredths over one ulp of fit factor
// (as a sum of children's jumps at rounded fit factors makes), crossing the
// limit: the crossing rounds to a fit factor where F is past the limit, and
// S = F∘M took that value (the root's fair share 1.0079 of the cluster in
// the generated tree of TestRootWithinClusterAtANearJump). M stays where F
// is within the limit, and so does S, for every width of the rise from one
// ulp to many.
func TestMaxFitFactorNearJumpStaysWithinLimit(t *testing.T) {
	var w workspace
	x1 := 0.02427734976448704
	for ulps := 1; ulps <= 64; ulps++ {
		x2 := x1
		for range ulps {
			x2 = math.Nextafter(x2, 1)
		}
		f := vfunc{
			{x: 0, l: Share{0.08, 0.08}, r: Share{0.08, 0.08}},
			{x: x1, l: Share{0.9905, 0.99}, r: Share{0.9905, 0.99}},
			{x: x2, l: Share{1.0079, 0.992}, r: Share{1.0097, 0.992}},
			{x: 1, l: Share{3, 3}, r: Share{3, 3}},
		}
		lim := Share{1, 1, 1, 1, 1}
		m := maxFitFactor(&w, f, Share{0.08, 0.08}, lim)
		s := compose(nil, f, m)
		for _, p := range s {
			for r := range p.l {
				if p.l[r] > lim[r] || p.r[r] > lim[r] {
					t.Fatalf("rise over %d ulps: S point at %v is %v / %v, above the limit %v", ulps, p.x, p.l, p.r, lim)
				}
			}
		}
		if got := s.at(1); got[0] < 0.9905 {
			t.Fatalf("rise over %d ulps: S(1) = %v, below F's last value within the limit (0.9905)", ulps, got)
		}
	}
}

// M and S = F∘M never decrease, and S stays within the limits (clamped up to
// F's start, which a limit below it cannot cut) at its points and at random
// suggestions between them, on random monotone F with a rise squeezed into a
// few ulps of fit factor and limits that fall inside that rise: the shape
// where rounding the crossing put S past the limits (see backInside).
func TestMaxFitFactorNeverPastTheLimits(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 23))
	var w workspace
	for iter := range 3000 {
		f := randomMonotone(rng, []float64{1, 2, 5}[iter%3])
		if len(f) < 3 {
			continue
		}
		// Squeeze the segment ending at breakpoint i to a few ulps.
		i := 1 + rng.IntN(len(f)-2)
		x := f[i-1].x
		for range 1 + rng.IntN(8) {
			x = math.Nextafter(x, math.Inf(1))
		}
		f[i].x = x
		flo := f[0].l
		var g, lim Share
		for r := range lim {
			lo, hi := f[i-1].r[r], f[i].l[r]
			switch rng.IntN(3) {
			case 0:
				lim[r] = lo + float64((hi-lo)*unit(rng)) // inside the squeezed rise
			case 1:
				lim[r] = 1
			default:
				lim[r] = flo[r] + float64((f[len(f)-1].l[r]-flo[r])*unit(rng))
			}
			if rng.IntN(2) == 0 {
				g[r] = flo[r] + float64((lim[r]-flo[r])*unit(rng))
			}
		}
		m := append(sfunc(nil), maxFitFactor(&w, f, g, lim)...)
		for k, p := range m {
			if p.r < p.l || (k > 0 && p.l < m[k-1].r) {
				t.Fatalf("iteration %d: M decreases at point %d\nF=%v\ng=%v lim=%v\nM=%v", iter, k, f, g, lim, m)
			}
		}
		s := compose(nil, f, m)
		bound := lim.Max(flo)
		check := func(what string, v Share) {
			for r := range v {
				if v[r] > bound[r] {
					t.Fatalf("iteration %d: %s = %v exceeds the limits %v in resource %d\nF=%v\ng=%v\nM=%v\nS=%v", iter, what, v, bound, r, f, g, m, s)
				}
			}
		}
		for k, p := range s {
			check("S's left limit at a point", p.l)
			check("S's right limit at a point", p.r)
			for r := range p.l {
				if p.r[r] < p.l[r] || (k > 0 && p.l[r] < s[k-1].r[r]) {
					t.Fatalf("iteration %d: S decreases at point %d in resource %d\nF=%v\ng=%v lim=%v\nM=%v\nS=%v", iter, k, r, f, g, lim, m, s)
				}
			}
		}
		for range 20 {
			u := unit(rng)
			check("S", s.at(u))
		}
	}
}
