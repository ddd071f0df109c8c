package scheduler

import "math"

// This file keeps the first implementation of MaxFitFactorBySuggestion — one
// transposition per resource and their pointwise minimum, exactly as the
// reference describes it — as an independent check of maxFitFactor.

// referenceMaxFitFactor is MaxFitFactorBySuggestion the reference's way.
func referenceMaxFitFactor(f vfunc, g, lim Share) sfunc {
	flo, fhi := f[0].l, f[len(f)-1].l
	var active []sfunc
	for r := range NumResources {
		if fhi[r] <= flo[r] {
			continue
		}
		lr := clamp(lim[r], flo[r], fhi[r])
		gr := clamp(g[r], flo[r], lr)
		active = append(active, transposeComponent(f, r, gr, lr, nil))
	}
	switch len(active) {
	case 0:
		hi := f.hi()
		return sfunc{{x: 0, l: hi, r: hi}, {x: 1, l: hi, r: hi}}
	case 1:
		return active[0]
	}
	return minS(nil, active)
}

// transposeComponent builds MaxFitFactorBySuggestion for one resource: for a
// suggestion s in [0, 1], the largest fit factor f with F_r(f) <= min(g+s, l),
// taken as a left limit. The leading vertical run (a flat piece of F_r at
// level g) is trimmed to its upper end, so M_r(0) is the right end of that
// piece; the function is extended to the right by its last right limit.
func transposeComponent(f vfunc, r int, g, l float64, out sfunc) sfunc {
	out = out[:0]
	emit := func(y, fx float64) {
		out = appendS(out, y-g, fx, fx)
	}
	started := false
	havePrev := false
	var prevY, prevF float64
	visit := func(y, fx float64) bool {
		if y < g {
			prevY, prevF, havePrev = y, fx, true
			return true
		}
		if !started {
			started = true
			if havePrev && prevY < g && y > g {
				emit(g, prevF+float64((g-prevY)/(y-prevY)*(fx-prevF)))
				prevY, prevF = g, out[len(out)-1].r
			}
		}
		if y > l {
			if havePrev && prevY < l {
				emit(l, prevF+float64((l-prevY)/(y-prevY)*(fx-prevF)))
			}
			return false
		}
		emit(y, fx)
		prevY, prevF, havePrev = y, fx, true
		return true
	}
	for _, p := range f {
		if !visit(p.l[r], p.x) {
			break
		}
		if p.r[r] != p.l[r] && !visit(p.r[r], p.x) {
			break
		}
	}
	if len(out) == 0 {
		return append(out, spoint{x: 0, l: f.hi(), r: f.hi()}, spoint{x: 1, l: f.hi(), r: f.hi()})
	}
	out[0].l = out[0].r
	return clipToUnit(out)
}

// minS is the pointwise minimum of scalar functions that all span [0, 1],
// with the crossing points of their linear pieces. A breakpoint of a function
// that is not the minimum there is not emitted (the minimum is linear
// through it), so the result has about as many points as the functions that
// bind, not as all of them together.
func minS(dst sfunc, fs []sfunc) sfunc {
	n := len(fs)
	idx, ra, sl, atBreak := make([]int, n), make([]float64, n), make([]float64, n), make([]bool, n)
	out := dst[:0]
	x := 0.0
	prevCur := -1
	for {
		// Values at x: left and right limits of every function.
		l, r := math.Inf(1), math.Inf(1)
		for k, f := range fs {
			i := idx[k]
			for i < len(f) && f[i].x < x {
				i++
			}
			idx[k] = i
			var lv, rv float64
			atBreak[k] = false
			switch {
			case i == len(f):
				lv, rv = f[i-1].r, f[i-1].r
			case f[i].x == x:
				lv, rv = f[i].l, f[i].r
				atBreak[k] = true
			default:
				lv = lerp(f[i-1].x, f[i-1].r, f[i].x, f[i].l, x)
				rv = lv
			}
			l, r = math.Min(l, lv), math.Min(r, rv)
			ra[k] = rv
		}
		if x >= 1 {
			out = appendS(out, x, l, r)
			break
		}
		// The next breakpoint of any function.
		nx := 1.0
		for k, f := range fs {
			i := idx[k]
			if i < len(f) && f[i].x == x {
				i++
			}
			if i < len(f) {
				nx = math.Min(nx, f[i].x)
			}
		}
		// Slopes on (x, nx).
		for k, f := range fs {
			i := idx[k]
			if i < len(f) && f[i].x == x {
				i++
			}
			var lb float64
			if i < len(f) {
				lb = lerpAt(f, i, nx)
			} else {
				lb = f[len(f)-1].r
			}
			sl[k] = (lb - ra[k]) / (nx - x)
		}
		cur := 0
		for k := 1; k < n; k++ {
			if ra[k] < ra[cur] || (ra[k] == ra[cur] && sl[k] < sl[cur]) {
				cur = k
			}
		}
		// x is a point of the minimum if the minimum jumps there, the binding
		// function changes, or the binding function bends there.
		if len(out) == 0 || l != r || cur != prevCur || atBreak[cur] {
			out = appendS(out, x, l, r)
		}
		// Lower envelope crossings on (x, nx).
		t := x
		for {
			best, bestT := -1, nx
			for k := range n {
				if k == cur || sl[k] >= sl[cur] {
					continue
				}
				tk := x + (ra[k]-ra[cur])/(sl[cur]-sl[k])
				if tk > t && (tk < bestT || (tk == bestT && best >= 0 && sl[k] < sl[best])) {
					best, bestT = k, tk
				}
			}
			if best < 0 {
				break
			}
			v := ra[cur] + float64(sl[cur]*(bestT-x))
			out = appendS(out, bestT, v, v)
			cur, t = best, bestT
		}
		prevCur = cur
		x = nx
	}
	return out
}

// lerpAt is the left limit at t of f, where i is the first index with
// f[i].x >= t.
func lerpAt(f sfunc, i int, t float64) float64 {
	if f[i].x == t || i == 0 {
		return f[i].l
	}
	return lerp(f[i-1].x, f[i-1].r, f[i].x, f[i].l, t)
}
