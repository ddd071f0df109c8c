package scheduler

import (
	"math"
	"slices"
)

// operationFunc builds an operation's FairShareByFitFactor on [0, 2]: on
// [0, 1] it re-grants current usage, equalising the dominant level
// (F_r(f) = min(U_r, f·max U)); on [1, 2] it grows linearly from usage to
// demand. A gang operation (with the step function enabled) gets nothing on
// [0, 1] and jumps to its whole demand at f = 1.
func operationFunc(dst vfunc, usage, demand Share, gang bool) vfunc {
	demand = demand.Max(usage)
	f := dst[:0]
	if gang {
		return append(f,
			vpoint{x: 0},
			vpoint{x: 1, r: demand},
			vpoint{x: 2, l: demand, r: demand})
	}
	m := usage.MaxComponent()
	f = append(f, vpoint{x: 0})
	if m > 0 {
		var ts [NumResources]float64
		n := 0
		for _, u := range usage {
			if t := u / m; t > 0 && t < 1 {
				ts[n] = t
				n++
			}
		}
		slices.Sort(ts[:n])
		for _, t := range ts[:n] {
			var v Share
			for k := range v {
				v[k] = min(usage[k], t*m)
			}
			f = appendV(f, t, v, v)
		}
	}
	f = append(f, vpoint{x: 1, l: usage, r: usage}, vpoint{x: 2, l: demand, r: demand})
	return f
}

// idleOperationS builds FairShareBySuggestion directly for an operation
// that uses nothing and is not a gang (about half of a busy cluster's
// operations), without building F and M: F is 0 on [0, 1] and rises to the
// demand D on [1, 2], so S rises along D until the dominant share reaches the
// suggestion, cut where a limit binds first (at fraction c of D), and stays
// flat. The arithmetic is the general path's, step for step, so the result
// is the same to the last bit. ok is false for the cases the general path
// handles differently (a limit of 0 on a demanded resource, or a dominant
// demand share that the suggestion 1 does not reach).
func idleOperationS(w *workspace, demand, lim Share) (vfunc, bool) {
	maxD, c := 0.0, 1.0
	var lk Share
	active, bound := false, false
	for r, d := range demand {
		if d <= 0 {
			continue
		}
		active = true
		maxD = max(maxD, d)
		lk[r] = clamp(lim[r], 0, d)
		if d > lk[r] {
			bound = true
			c = min(c, lk[r]/d)
		}
	}
	out := w.vArena.reserve(3)
	if !active {
		return w.vArena.commit(append(out, vpoint{x: 0}, vpoint{x: 1})), true
	}
	var x float64
	var v Share
	if !bound {
		x, v = maxD, demand
	} else {
		if c <= 0 {
			return nil, false
		}
		// The fit factor 1 + c at which the first limit binds, and F there.
		fe := 1 + c
		wgt := (fe - 1) / (2 - 1)
		for r, d := range demand {
			if d > 0 {
				x = max(x, min(0+c*(d-0), lk[r])-0)
			}
			v[r] = 0 + (d-0)*wgt
		}
	}
	if x >= 1 {
		return nil, false
	}
	return w.vArena.commit(append(out, vpoint{x: 0}, vpoint{x: x, l: v, r: v}, vpoint{x: 1, l: v, r: v})), true
}

// steepWidth and steepSlope keep the running slope sum of sumScaled exact
// enough: a segment narrower than steepWidth becomes a jump at its end, and
// the sum is re-added from the children's slopes whenever a slope steeper
// than steepSlope enters or leaves it (adding and then subtracting a huge
// slope would wipe out the small ones).
const (
	steepWidth = 1e-12
	steepSlope = 1e6
)

// scaledChild is one term of a fair_share pool's FairShareByFitFactor:
// S_c(min(1, f·scale)). A zero scale contributes the constant S_c(0).
type scaledChild struct {
	fn    vfunc
	scale float64
}

// cursor walks one child's breakpoints during the sum.
type cursor struct {
	x     float64 // abscissa (scaled) of the next breakpoint to process
	child int32
	next  int32 // index of that breakpoint
}

// cursorHeap is a binary min-heap of cursors by abscissa (then child), typed
// to keep the sweep free of interface calls.
type cursorHeap []cursor

func (h cursorHeap) less(i, j int) bool {
	if h[i].x != h[j].x {
		return h[i].x < h[j].x
	}
	return h[i].child < h[j].child
}

// down restores the heap below i.
func (h cursorHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (h cursorHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// popTop removes the top cursor.
func (h *cursorHeap) popTop() {
	old := *h
	n := len(old) - 1
	old[0] = old[n]
	*h = old[:n]
	h.down(0)
}

// activeEnd is the number of leading breakpoints of f that change anything in
// a sum: trailing breakpoints reached by an exactly flat segment and without a
// jump only repeat the last value, so the sweep can leave them out (the sum
// stays flat past them).
func activeEnd(f vfunc) int {
	n := len(f)
	for n > 1 {
		p, q := &f[n-2], &f[n-1]
		if q.l != q.r || q.l != p.r {
			break
		}
		n--
	}
	return n
}

// sumScaled builds F(f) = Σ_c S_c(min(1, f·scale_c)) on [0, 1] by sweeping
// the children's breakpoints in order. The running value advances by the sum
// of the children's slopes; a resource none of whose children is sloped has
// slope exactly 0, so flat pieces stay exactly flat (their levels matter for
// left-continuity).
func sumScaled(w *workspace, dst vfunc, children []scaledChild) vfunc {
	f, _ := sumScaledUntil(w, dst, children, nil)
	return f
}

// stopRule lets sumScaledUntil stop early: MaxFitFactorBySuggestion reads F
// only up to its first vertex above the limits (see maxFitFactor), so the
// rest of F is never used once the end value F(1) is no longer needed
// either. lim is the element's limits share; varies holds the resources in
// which some child's function may change (in the others F is exactly
// constant).
type stopRule struct {
	lim    Share
	varies resourceSet
}

// resourceSet is a set of resource indices.
type resourceSet uint8

// allResources holds every resource.
const allResources resourceSet = 1<<NumResources - 1

// sumScaledUntil is sumScaled that, given a stop rule, may return only a
// prefix of F. It also returns hi, the values maxFitFactor must take for F's
// end: F's last left limit for the whole function; for a prefix, +Inf in
// every resource that F takes above max(lim, F(0)) within the prefix (then
// F's end is above it too, and the end enters maxFitFactor only through
// clamps that it no longer binds) and F(0) in the resources in which F is
// constant. The sweep stops after the first point above max(lim, F(0)) in
// some resource once every resource is one of the two kinds; the prefix
// ends with that point or a later one, which is where maxFitFactor stops.
func sumScaledUntil(w *workspace, dst vfunc, children []scaledChild, stop *stopRule) (f vfunc, hi Share) {
	f = sumScaledSweep(w, dst, children, stop)
	if n := len(f); f[n-1].x == 1 || stop == nil {
		return f, f[n-1].l
	}
	// A prefix (the sweep always ends at 1): see sweep.stopped.
	for r := range NumResources {
		if w.exceeded&(1<<r) != 0 {
			hi[r] = math.Inf(1)
		} else {
			hi[r] = f[0].l[r]
		}
	}
	return f, hi
}

func sumScaledSweep(w *workspace, dst vfunc, children []scaledChild, stop *stopRule) vfunc {
	var base Share
	sloped := children[:0]
	size := 2
	for _, c := range children {
		if c.scale <= 0 {
			base = base.Add(c.fn[0].l)
			continue
		}
		sloped = append(sloped, c)
		size += len(c.fn)
	}
	if len(sloped) == 0 {
		return append(dst[:0], vpoint{x: 0, l: base, r: base}, vpoint{x: 1, l: base, r: base})
	}
	if cap(dst) < size {
		dst = make(vfunc, 0, max(size, 2*cap(dst)))
	}
	if len(sloped) == 1 {
		c := sloped[0]
		out := dst[:0]
		for _, p := range c.fn {
			out = appendV(out, p.x/c.scale, p.l.Add(base), p.r.Add(base))
		}
		if last := out[len(out)-1]; last.x < 1 {
			v := last.l
			out[len(out)-1].r = v
			out = appendV(out, 1, v, v)
		}
		return out
	}

	w.slopes = grow(w.slopes, len(sloped))
	w.pending = grow(w.pending, len(sloped))
	w.ends = grow(w.ends, len(sloped))
	clear(w.slopes)
	clear(w.pending)
	s := sweep{sloped: sloped, slopes: w.slopes, pending: w.pending, ends: w.ends, value: base, out: dst[:0]}
	for _, c := range sloped {
		s.value = s.value.Add(c.fn[0].l)
	}
	h := w.heap[:0]
	defer func() { w.heap = h[:0] }()

	// The children's first breakpoints (all at 0 in practice) are processed
	// in child order, which is the heap's order for equal abscissae.
	x0 := math.Inf(1)
	for i, c := range sloped {
		s.ends[i] = activeEnd(c.fn)
		x0 = min(x0, c.fn[0].x/c.scale)
	}
	s.open(x0)
	for i, c := range sloped {
		j := int32(0)
		if x := c.fn[0].x / c.scale; x == x0 {
			s.step(i, 0, x0)
			j = 1
		}
		if int(j) < s.ends[i] {
			h = append(h, cursor{x: c.fn[j].x / c.scale, child: int32(i), next: j})
		}
	}
	h.init()
	for len(h) > 0 && h[0].x == x0 {
		cur := &h[0]
		s.step(int(cur.child), int(cur.next), x0)
		advance(&h, sloped, s.ends)
	}
	s.finish(x0)
	var thr Share // the stop rule's thresholds max(lim, F(0))
	if stop != nil {
		for r := range thr {
			thr[r] = max(stop.lim[r], s.out[0].l[r])
		}
	}
	w.exceeded = 0
	if stop != nil && s.stopped(&thr, stop.varies, &w.exceeded) {
		return s.out
	}
	for len(h) > 0 {
		x := h[0].x
		s.open(x)
		for len(h) > 0 && h[0].x == x {
			cur := &h[0]
			s.step(int(cur.child), int(cur.next), x)
			advance(&h, sloped, s.ends)
		}
		s.finish(x)
		if stop != nil && s.stopped(&thr, stop.varies, &w.exceeded) {
			return s.out
		}
	}
	out := s.out
	if last := out[len(out)-1]; last.x < 1 {
		// The sweep left out trailing flat breakpoints: the sum stays at
		// its last value up to 1.
		out = appendV(out, 1, last.r, last.r)
	}
	return out
}

// sweep is the running state of sumScaled over several sloped children.
type sweep struct {
	sloped  []scaledChild
	slopes  []Share // each child's current slope
	pending []Share // each child's rise deferred from a near-vertical segment
	ends    []int   // each child's activeEnd
	// total is the sum of the children's slopes; count says per resource
	// how many children are sloped (0: the sum is exactly flat); resync
	// asks for total to be re-added from slopes.
	total  Share
	count  [NumResources]int
	resync [NumResources]bool
	// value is the sum at prevX (right limit); left and right are the
	// limits at the abscissa of the group of breakpoints being processed.
	value       Share
	prevX       float64
	left, right Share
	out         vfunc
}

// open starts the group of breakpoints at x: the sum advances from prevX by
// the running slope.
func (s *sweep) open(x float64) {
	s.left = s.value
	if dx := x - s.prevX; dx > 0 {
		for k := range s.left {
			if s.count[k] > 0 {
				s.left[k] += s.total[k] * dx
			}
		}
	}
	s.right = s.left
}

// step processes breakpoint j of child i at abscissa x: the jump there, a
// rise deferred from a near-vertical segment ending there, and the child's
// new slope.
func (s *sweep) step(i int, j int, x float64) {
	c := &s.sloped[i]
	p := &c.fn[j]
	pd := &s.pending[i]
	for k := range s.left {
		s.left[k] += pd[k]
		s.right[k] += pd[k] + (p.r[k] - p.l[k])
	}
	*pd = Share{}
	old := &s.slopes[i]
	var ns Share
	if j+1 < s.ends[i] {
		q := &c.fn[j+1]
		dx := q.x/c.scale - x
		if dx > steepWidth {
			for k := range ns {
				ns[k] = (q.l[k] - p.r[k]) / dx
			}
		} else {
			// Too narrow to carry as a slope without wrecking the running
			// sum: treat the rise as a jump at its end.
			for k := range pd {
				pd[k] = q.l[k] - p.r[k]
			}
		}
	}
	for k := range ns {
		o, n := old[k], ns[k]
		if o != 0 {
			s.count[k]--
		}
		if n != 0 {
			s.count[k]++
		}
		switch {
		case s.count[k] == 0:
			s.total[k] = 0
		case o > steepSlope || o < -steepSlope || n > steepSlope || n < -steepSlope:
			s.resync[k] = true
		default:
			s.total[k] += n - o
		}
	}
	*old = ns
}

// finish closes the group of breakpoints at x: re-sums steep slopes and
// emits the point (never below the previous one).
func (s *sweep) finish(x float64) {
	for k, r := range s.resync {
		if r && s.count[k] > 0 {
			s.total[k] = 0
			for i := range s.slopes {
				s.total[k] += s.slopes[i][k]
			}
		}
		s.resync[k] = false
	}
	if n := len(s.out); n > 0 {
		prev := &s.out[n-1].r
		for k := range s.left {
			s.left[k] = max(s.left[k], prev[k])
		}
	}
	for k := range s.right {
		s.right[k] = max(s.right[k], s.left[k])
	}
	s.out = appendV(s.out, x, s.left, s.right)
	s.value = s.right
	s.prevX = x
}

// stopped records in exceeded the resources in which the last point is above
// thr and reports whether the sweep may stop there: some resource is above
// its threshold and every resource is either above it or constant (not in
// varies).
func (s *sweep) stopped(thr *Share, varies resourceSet, exceeded *resourceSet) bool {
	p := &s.out[len(s.out)-1]
	for r := range thr {
		if p.l[r] > thr[r] || p.r[r] > thr[r] {
			*exceeded |= 1 << r
		}
	}
	return *exceeded != 0 && (*exceeded|^varies)&allResources == allResources
}

// advance moves the heap's top cursor to its child's next breakpoint, or
// drops it when the child has no more.
func advance(h *cursorHeap, sloped []scaledChild, ends []int) {
	cur := &(*h)[0]
	i := cur.child
	if n := cur.next + 1; int(n) < ends[i] {
		c := &sloped[i]
		cur.next = n
		cur.x = c.fn[n].x / c.scale
		h.down(0)
	} else {
		h.popTop()
	}
}

// concatFIFO builds a fifo pool's FairShareByFitFactor on [0, n]: child i (in
// fifo order) owns [i, i+1] and is served only after every earlier child
// reached its suggestion 1.
func concatFIFO(dst vfunc, children []vfunc) vfunc {
	if len(children) == 0 {
		return append(dst[:0], vpoint{x: 0}, vpoint{x: 1})
	}
	out := dst[:0]
	var prefix Share
	for i, c := range children {
		off := float64(i)
		for j, p := range c {
			l, r := p.l.Add(prefix), p.r.Add(prefix)
			if j == len(c)-1 {
				r = l // S_i is used up to its value at 1
			}
			out = appendV(out, off+p.x, l, r)
		}
		prefix = prefix.Add(c[len(c)-1].l)
	}
	return out
}

func clamp(v, lo, hi float64) float64 {
	return min(max(v, lo), hi)
}

// compose builds S = F∘M on [0, 1] for a non-decreasing M. Where M is flat,
// S is F at that fit factor (left-continuous); where M increases, S follows F
// and picks up F's breakpoints in between. M's values only grow, so F's
// breakpoints are found by one forward walk instead of a search per point.
func compose(dst vfunc, f vfunc, m sfunc) vfunc {
	if need := len(m) + len(f); cap(dst) < need {
		dst = make(vfunc, 0, max(need, 2*cap(dst)))
	}
	out := dst[:0]
	k := 0 // first index of f whose abscissa is >= the current value of M
	seek := func(t float64) int {
		if k > 0 && f[k-1].x >= t {
			k = f.search(t) // not expected: M never decreases
		}
		for k < len(f) && f[k].x < t {
			k++
		}
		return k
	}
	for j, p := range m {
		lv := f.atIndex(p.l, seek(p.l))
		if j == len(m)-1 {
			out = appendV(out, p.x, lv, lv)
			break
		}
		nxt := m[j+1]
		i := seek(p.r)
		var rv Share
		if nxt.l > p.r {
			rv = f.rightAtIndex(p.r, i)
		} else {
			rv = f.atIndex(p.r, i)
		}
		out = appendV(out, p.x, lv, rv)
		if nxt.l > p.r {
			if i < len(f) && f[i].x == p.r {
				i++
			}
			scale := (nxt.x - p.x) / (nxt.l - p.r)
			for ; i < len(f) && f[i].x < nxt.l; i++ {
				out = appendV(out, p.x+(f[i].x-p.r)*scale, f[i].l, f[i].r)
			}
		}
	}
	return out
}

// suggestionFunctions builds MaxFitFactorBySuggestion M and
// FairShareBySuggestion S = F∘M for an element with FairShareByFitFactor f,
// guarantee share g and limits share lim; f may be a prefix of F, with hi
// standing for F's end (see sumScaledUntil; for the whole F, its last left
// limit). The vector suggestion for s is clip(g + s, ·, lim) per resource. M
// lives in the workspace's scratch buffer until the next call; S is built in
// place in the arena.
func suggestionFunctions(w *workspace, f vfunc, hi, g, lim Share) (sfunc, vfunc) {
	m := maxFitFactorHi(w, f, hi, g, lim)
	s := compose(w.vArena.reserve(len(m)+len(f)), f, m)
	return m, w.vArena.commit(s)
}
