package scheduler

import "slices"

// The fair-share update works with monotone (componentwise non-decreasing)
// piecewise-linear functions that may jump. A function is a list of
// breakpoints with strictly increasing abscissae; at each breakpoint it keeps
// the left limit l and the right limit r (equal where the function is
// continuous), and between breakpoints it is linear from the right limit of
// the first to the left limit of the second. Evaluation is left-continuous:
// at a breakpoint it returns the left limit. Beyond the last breakpoint the
// function stays at the last right limit; before the first, at the first left
// limit.

// vpoint is a breakpoint of a vector function.
type vpoint struct {
	x    float64
	l, r Share
}

// vfunc is a vector-valued piecewise-linear function.
type vfunc []vpoint

// spoint is a breakpoint of a scalar function.
type spoint struct {
	x, l, r float64
}

// sfunc is a scalar piecewise-linear function.
type sfunc []spoint

func (f vfunc) lo() float64 { return f[0].x }
func (f vfunc) hi() float64 { return f[len(f)-1].x }

// search returns the first index whose abscissa is >= t (a binary search;
// sort.Search's closure costs more than the comparisons here).
func (f vfunc) search(t float64) int {
	lo, hi := 0, len(f)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if f[m].x < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// at evaluates f at t, left-continuously.
func (f vfunc) at(t float64) Share {
	var v Share
	f.atIndexTo(&v, t, f.search(t))
	return v
}

func lerp(x0, y0, x1, y1, t float64) float64 {
	return y0 + (y1-y0)*(t-x0)/(x1-x0)
}

func (f sfunc) search(t float64) int {
	lo, hi := 0, len(f)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if f[m].x < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// at evaluates f at t, left-continuously.
func (f sfunc) at(t float64) float64 {
	i := f.search(t)
	if i == len(f) {
		return f[i-1].r
	}
	if f[i].x == t || i == 0 {
		return f[i].l
	}
	return lerp(f[i-1].x, f[i-1].r, f[i].x, f[i].l, t)
}

// appendV appends a breakpoint, merging it into the last one when the
// abscissa does not advance (rounding can make a computed abscissa equal to or
// a hair below the previous one): the merged point keeps the earlier left
// limit and takes the new right limit.
func appendV(f vfunc, x float64, l, r Share) vfunc {
	if n := len(f); n > 0 && x <= f[n-1].x {
		f[n-1].r = r
		return f
	}
	return append(f, vpoint{x: x, l: l, r: r})
}

// appendS is appendV for scalar functions.
func appendS(f sfunc, x, l, r float64) sfunc {
	if n := len(f); n > 0 && x <= f[n-1].x {
		f[n-1].r = r
		return f
	}
	return append(f, spoint{x: x, l: l, r: r})
}

// same reports whether a and b are equal in every component (an array ==
// on Share compiles to a call).
func same(a, b *Share) bool {
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// atIndexTo writes f at t, left-continuously, into dst, given
// i = f.search(t) (no vector travels by value).
func (f vfunc) atIndexTo(dst *Share, t float64, i int) {
	if i == len(f) {
		*dst = f[i-1].r
		return
	}
	if f[i].x == t || i == 0 {
		*dst = f[i].l
		return
	}
	lerpShareTo(dst, f[i-1].x, &f[i-1].r, f[i].x, &f[i].l, t)
}

// rightAtIndexTo writes the right limit of f at t into dst, given
// i = f.search(t).
func (f vfunc) rightAtIndexTo(dst *Share, t float64, i int) {
	if i == len(f) {
		*dst = f[i-1].r
		return
	}
	if f[i].x == t {
		*dst = f[i].r
		return
	}
	if i == 0 {
		*dst = f[0].l
		return
	}
	lerpShareTo(dst, f[i-1].x, &f[i-1].r, f[i].x, &f[i].l, t)
}

// lerpShareTo writes into dst the point at t of the segment from (x0, y0)
// to (x1, y1).
func lerpShareTo(dst *Share, x0 float64, y0 *Share, x1 float64, y1 *Share, t float64) {
	w := (t - x0) / (x1 - x0)
	for k := range dst {
		dst[k] = y0[k] + float64((y1[k]-y0[k])*w)
	}
}

// nextPoint returns f with room for a breakpoint at x and that breakpoint:
// a new one, or the last one when x does not advance (as appendV merges;
// the caller then sets only r, and must set l and r of a new one, which
// hold anything).
func nextPoint(f vfunc, x float64) (vfunc, *vpoint, bool) {
	n := len(f)
	if n > 0 && x <= f[n-1].x {
		return f, &f[n-1], false
	}
	if n == cap(f) {
		f = slices.Grow(f, 1)
	}
	f = f[:n+1]
	p := &f[n]
	p.x = x
	return f, p, true
}
