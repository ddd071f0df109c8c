package scheduler

import "math"

// sigmaVertex is a vertex of σ(f) = max(0, max_r F_r(f) − g_r): the smallest
// scalar suggestion at which fit factor f meets every resource's target.
type sigmaVertex struct{ x, v float64 }

// maxFitFactor builds MaxFitFactorBySuggestion for an element with
// FairShareByFitFactor f, guarantee share g and limits share lim:
//
//	M(s) = sup{ f : F_r(f) <= min(g_r + s, l_r) for every resource r },
//
// taken as a left limit in s (at s = 0 the sup itself). The sets
// {f : F_r(f) <= t} are intervals starting at the domain's left end, so the
// minimum over resources of the per-resource fit factors is the fit factor
// of all constraints together: M is the transpose of σ restricted to the
// fit factors where F stays within l. Per resource, l_r = clamp(lim_r, F_r(lo),
// F_r(hi)) and g_r = clamp(g_r, F_r(lo), l_r); a resource whose F_r is
// constant imposes nothing.
func maxFitFactor(w *workspace, f vfunc, g, lim Share) sfunc {
	w.m, _ = maxFitFactorTo(w.m[:0], w, f, true, f[len(f)-1].l, g, lim)
	return w.m
}

// maxFitFactorTo is maxFitFactor into dst for an f that may be only the
// first points of F (fDone false), with fhi standing for F's end value in
// the clamps: the end itself, or +Inf in a resource F may rise in (the
// clamp at F's end then never binds, which changes nothing but ties: F never
// exceeds its end) and F(0) in one where F is constant. It also reports
// whether M is complete: F is, or the fit factor left the limits, or the
// suggestion passed 1; otherwise M's last point may still change (all
// before it are final).
func maxFitFactorTo(dst sfunc, w *workspace, f vfunc, fDone bool, fhi, g, lim Share) (sfunc, bool) {
	var s fitFactor
	if !s.init(dst, &f[0].l, &fhi, &g, &lim) {
		// F is constant (the callers give a whole F here).
		hi := f.hi()
		return append(dst[:0], spoint{x: 0, l: hi, r: hi}, spoint{x: 1, l: hi, r: hi}), true
	}
	s.feed(w, f)
	return s.finish(fDone)
}

// fitFactor builds MaxFitFactorBySuggestion (see maxFitFactorTo) from F's
// points fed in order, one part of F after another.
type fitFactor struct {
	// The active resources (those F may rise in) and their clamped
	// guarantees and limits.
	act    [NumResources]int
	gk, lk [NumResources]float64
	n      int
	// The last vertex of F visited (none yet: !started) and whether the fit
	// factor has left the limits.
	px               float64
	py               Share
	started, stopped bool
	m                sfunc
}

// init starts M in dst for an F starting at flo; it reports false when no
// resource is active (F is constant).
func (s *fitFactor) init(dst sfunc, flo, fhi, g, lim *Share) bool {
	*s = fitFactor{m: dst[:0]}
	for r := range NumResources {
		if fhi[r] <= flo[r] {
			continue
		}
		s.lk[s.n] = clamp(lim[r], flo[r], fhi[r])
		s.gk[s.n] = clamp(g[r], flo[r], s.lk[s.n])
		s.act[s.n] = r
		s.n++
	}
	return s.n > 0
}

// sigma is σ at F value y, and whether y is within the limits.
func (s *fitFactor) sigma(y *Share) (float64, bool) {
	v := 0.0
	for k := range s.n {
		yr := y[s.act[k]]
		if yr > s.lk[k] {
			return 0, false
		}
		v = max(v, yr-s.gk[k])
	}
	return v, true
}

// visit appends to sig the vertices of σ up to F's vertex (x, y); it
// reports false once the fit factor leaves the feasible region.
func (s *fitFactor) visit(sig []sigmaVertex, x float64, y *Share) ([]sigmaVertex, bool) {
	v, ok := s.sigma(y)
	if !s.started {
		sig = append(sig, sigmaVertex{x, v})
		s.px, s.py, s.started = x, *y, true
		return sig, ok
	}
	n := s.n
	if x > s.px {
		py := &s.py
		end := 1.0 // fraction of the segment that stays feasible
		if !ok {
			for k := range n {
				r := s.act[k]
				if y[r] > s.lk[k] && y[r] > py[r] {
					end = min(end, (s.lk[k]-py[r])/(y[r]-py[r]))
				}
			}
			end = clamp(end, 0, 1)
		}
		start := len(sig)
		sig = appendEnvelope(sig, s.px, x, py, y, &s.act, &s.gk, n, end)
		if !ok {
			xe := backInside(s.px+float64(end*(x-s.px)), s.px, x, py, y, &s.act, &s.lk, n)
			// A vertex of σ before the crossing may round to a fit factor
			// past it too (the segment a few ulps wide): M stays at xe.
			clampVertices(sig[start:], xe)
			var ye Share
			for k := range n {
				r := s.act[k]
				ye[r] = py[r] + float64(end*(y[r]-py[r]))
			}
			ve := 0.0
			for k := range n {
				ve = max(ve, min(ye[s.act[k]], s.lk[k])-s.gk[k])
			}
			return append(sig, sigmaVertex{xe, ve}), false
		}
	} else if !ok {
		return sig, false // a jump past the limit: the fit factor stops here
	}
	s.px, s.py = x, *y
	return append(sig, sigmaVertex{x, v}), true
}

// backInside returns xe, the fit factor at which F, linear from (x0, y0)
// to (x1, y1) with y0 within the limits, reaches a limit, moved back an ulp
// at a time until F evaluated there (as lerpShareTo evaluates it) is within
// the limits lk of the active resources act[:n]; after four ulps, x0.
// Rounding can put xe an ulp past the crossing, and where F is steep (a
// near-jump a few ulps wide, as a sum of children's jumps at rounded fit
// factors makes) an ulp of fit factor is a visible excess: a root's fair
// share above the cluster. So no point of S = F∘M exceeds the limits, not
// even by an ulp.
func backInside(xe, x0, x1 float64, y0, y1 *Share, act *[NumResources]int, lk *[NumResources]float64, n int) float64 {
	for range 5 { // xe and the four ulps below it
		if xe <= x0 || insideAt(xe, x0, x1, y0, y1, act, lk, n) {
			return xe
		}
		xe = math.Nextafter(xe, math.Inf(-1))
	}
	return x0
}

// clampVertices moves the vertices of σ past fit factor xe back to it.
func clampVertices(sig []sigmaVertex, xe float64) {
	for k := range sig {
		sig[k].x = min(sig[k].x, xe)
	}
}

// insideAt reports whether F, linear from (x0, y0) to (x1, y1), is within
// the limits at t < x1 (at x1 F is y1, past a limit here).
func insideAt(t, x0, x1 float64, y0, y1 *Share, act *[NumResources]int, lk *[NumResources]float64, n int) bool {
	if t >= x1 {
		return false
	}
	w := (t - x0) / (x1 - x0)
	for k := range n {
		r := act[k]
		if y0[r]+float64((y1[r]-y0[r])*w) > lk[k] {
			return false
		}
	}
	return true
}

// feed visits F's points f (the ones after those fed before) and transposes
// the vertices of σ into M: suggestion σ(x) ↦ fit factor x, grouping equal
// levels (flat pieces of σ become jumps of M, taken as left limits; at
// s = 0 M takes the right end of the flat piece at 0).
func (s *fitFactor) feed(w *workspace, f vfunc) {
	for i := 0; i < len(f) && !s.stopped; i++ {
		p := &f[i]
		sig, ok := s.visit(w.sig[:0], p.x, &p.l)
		if ok && !same(&p.r, &p.l) {
			sig, ok = s.visit(sig, p.x, &p.r)
		}
		s.stopped = !ok
		for _, vx := range sig {
			s.m = appendS(s.m, vx.v, vx.x, vx.x)
			if len(s.m) == 1 {
				s.m[0].l = s.m[0].r
			}
		}
		w.sig = sig
	}
}

// finish returns M and whether it is complete: F is (fDone), or the fit
// factor left the limits, or M passed suggestion 1; a complete M spans
// exactly [0, 1].
func (s *fitFactor) finish(fDone bool) (sfunc, bool) {
	if last := s.m[len(s.m)-1]; fDone || s.stopped || last.x > 1 {
		s.m = clipToUnit(s.m)
		return s.m, true
	}
	return s.m, false
}

// appendEnvelope appends the interior vertices of σ on the segment from
// (x0, y0) to (x1, y1), up to the fraction end of it: the points where the
// maximum of the lines F_r − g_r (and 0) switches to a steeper line.
func appendEnvelope(sig []sigmaVertex, x0, x1 float64, y0, y1 *Share, act *[NumResources]int, gk *[NumResources]float64, n int, end float64) []sigmaVertex {
	// Lines a + b·t for t in [0, 1]; index n is the zero line.
	var a, b [NumResources + 1]float64
	for k := range n {
		r := act[k]
		a[k] = y0[r] - gk[k]
		b[k] = y1[r] - y0[r]
	}
	cur := n
	for k := range n {
		if a[k] > a[cur] || (a[k] == a[cur] && b[k] > b[cur]) {
			cur = k
		}
	}
	t := 0.0
	for {
		best, bestT := -1, end
		for k := 0; k <= n; k++ {
			if k == cur || b[k] <= b[cur] {
				continue
			}
			tk := (a[cur] - a[k]) / (b[k] - b[cur])
			if tk > t && (tk < bestT || (tk == bestT && best >= 0 && b[k] > b[best])) {
				best, bestT = k, tk
			}
		}
		if best < 0 {
			return sig
		}
		if bestT < end {
			sig = append(sig, sigmaVertex{x0 + float64(bestT*(x1-x0)), a[cur] + float64(b[cur]*bestT)})
		}
		cur, t = best, bestT
	}
}

// clipToUnit makes a scalar function span exactly [0, 1]: extended by its
// last right limit, or cut at 1.
func clipToUnit(f sfunc) sfunc {
	last := f[len(f)-1]
	switch {
	case last.x < 1:
		f = append(f, spoint{x: 1, l: last.r, r: last.r})
	case last.x > 1:
		v := f.at(1)
		i := f.search(1)
		f = append(f[:i], spoint{x: 1, l: v, r: v})
	}
	return f
}
