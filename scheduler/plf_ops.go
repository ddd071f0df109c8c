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
// that uses nothing and is not a gang (one none of whose jobs runs yet,
// say), without building F and M: F is 0 on [0, 1] and rises to the
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
		// The fit factor 1 + c at which the first limit binds (moved back
		// as the general path moves it, see backInside), and F there.
		var act [NumResources]int
		var lkk [NumResources]float64
		n := 0
		for r, d := range demand {
			if d > 0 {
				act[n], lkk[n] = r, lk[r]
				n++
			}
		}
		fe := backInside(1+c, 1, 2, &Share{}, &demand, &act, &lkk, n)
		wgt := (fe - 1) / (2 - 1)
		for r, d := range demand {
			if d > 0 {
				x = max(x, min(0+float64(c*(d-0)), lk[r])-0)
			}
			v[r] = 0 + float64((d-0)*wgt)
		}
	}
	if x >= 1 {
		return nil, false
	}
	return w.vArena.commit(append(out, vpoint{x: 0}, vpoint{x: x, l: v, r: v}, vpoint{x: 1, l: v, r: v})), true
}

// busyOperationS builds FairShareBySuggestion directly for a non-gang
// operation that uses something (the general path builds F, then
// MaxFitFactorBySuggestion M, then composes them). With no guarantee, M
// transposes the fit factor's σ(f) = max_r F_r(f): on [0, 1] S re-grants
// the usage, S(s) = min(U, s) up to the dominant usage, one point per
// distinct usage level; on [1, 2] F rises from U to the demand D, and S
// follows it through the vertices where another resource becomes the
// largest, up to D or to where the first limit binds (a flat piece of σ,
// as when the dominant resource's demand is met, is a jump of M and of S),
// and stays flat up to 1. Every point is computed with the general path's
// arithmetic, step for step, so the result is the same to the last bit
// (TestPropertyBusyOperationSMatchesGeneralPath). ok is false for the cases
// the general path handles otherwise: no usage share, usage above a limit,
// a jump of M at suggestion 0, or a σ reaching 1 (M is cut there).
func busyOperationS(w *workspace, usage, demand, lim Share) (vfunc, bool) {
	d := demand.Max(usage)
	m := usage.MaxComponent()
	if m <= 0 {
		return nil, false
	}
	// The active resources (F rises in them) and their limits, clamped to
	// F's range as maxFitFactor clamps them (the guarantees clamp to 0).
	var act [NumResources]int
	var gk [NumResources]float64
	var lk Share
	n := 0
	for r := range NumResources {
		if d[r] <= 0 {
			continue
		}
		l := clamp(lim[r], 0, d[r])
		if usage[r] > l {
			return nil, false
		}
		lk[r] = l
		act[n] = r
		n++
	}
	// The usage levels t = U_r / m in (0, 1), sorted, as operationFunc
	// orders them (equal ones merge).
	var ts [NumResources]float64
	nt := 0
	for _, u := range usage {
		if t := u / m; t > 0 && t < 1 {
			k := nt
			for k > 0 && ts[k-1] > t {
				ts[k] = ts[k-1]
				k--
			}
			ts[k] = t
			nt++
		}
	}
	// S's points: σ at each vertex of F's path and F there. A vertex whose
	// σ does not rise moves the last point's right limit (a jump of M).
	out := w.vArena.reserve(nt + 2*NumResources + 4)[:1]
	out[0] = vpoint{x: 0}
	emit := func(x, f float64) bool {
		last := &out[len(out)-1]
		if x <= last.x {
			if len(out) == 1 {
				return false // a jump at suggestion 0
			}
			opFAt(&last.r, &usage, &d, m, f)
			return true
		}
		out = append(out, vpoint{x: x})
		p := &out[len(out)-1]
		opFAt(&p.l, &usage, &d, m, f)
		p.r = p.l
		return true
	}
	// [0, 1]: every rising resource rises alike, so σ (the dominant
	// resource's level t·m) has no vertex inside a usage segment: the
	// general path's upper envelope finds none there.
	for i := range nt {
		t := ts[i]
		if i > 0 && t <= ts[i-1] {
			continue // merged with the previous level
		}
		x := 0.0
		for k := range n {
			x = max(x, min(usage[act[k]], t*m)-gk[k])
		}
		if !emit(x, t) {
			return nil, false
		}
	}
	x := 0.0
	for k := range n {
		x = max(x, usage[act[k]]-gk[k])
	}
	if !emit(x, 1) {
		return nil, false
	}
	// [1, 2]: F rises from U to D; a limit may stop it at the fraction end
	// of the segment.
	ok := true
	end := 1.0
	for k := range n {
		if r := act[k]; d[r] > lk[r] {
			ok = false
			if d[r] > usage[r] {
				end = min(end, (lk[r]-usage[r])/(d[r]-usage[r]))
			}
		}
	}
	if !ok {
		end = clamp(end, 0, 1)
	}
	sig := appendEnvelope(w.sig[:0], 1, 2, &usage, &d, &act, &gk, n, end)
	w.sig = sig
	xe := 2.0
	if !ok {
		var lkk [NumResources]float64
		for k := range n {
			lkk[k] = lk[act[k]]
		}
		xe = backInside(1+end*(2-1), 1, 2, &usage, &d, &act, &lkk, n)
		clampVertices(sig, xe)
	}
	for _, vx := range sig {
		if !emit(vx.v, vx.x) {
			return nil, false
		}
	}
	if ok {
		x := 0.0
		for k := range n {
			x = max(x, d[act[k]]-gk[k])
		}
		if !emit(x, 2) {
			return nil, false
		}
	} else {
		ve := 0.0
		for k := range n {
			r := act[k]
			ye := usage[r] + float64(end*(d[r]-usage[r]))
			ve = max(ve, min(ye, lk[r])-gk[k])
		}
		if !emit(ve, xe) {
			return nil, false
		}
	}
	// M spans [0, 1], extended by its last right end (a σ at or past 1
	// would cut it: left to the general path).
	last := out[len(out)-1]
	if last.x >= 1 {
		return nil, false
	}
	out = append(out, vpoint{x: 1, l: last.r, r: last.r})
	return w.vArena.commit(out), true
}

// opFAt is an operation's FairShareByFitFactor at fit factor f, with the
// arithmetic of operationFunc's points and of vfunc.atIndexTo between them:
// min(U, f·m) at the usage levels f < 1, U at 1, D at 2 and the line from U
// to D between.
func opFAt(dst, usage, d *Share, m, f float64) {
	switch {
	case f < 1:
		for k := range dst {
			dst[k] = min(usage[k], f*m)
		}
	case f == 1:
		*dst = *usage
	case f >= 2:
		*dst = *d
	default:
		lerpShareTo(dst, 1, usage, 2, d, f)
	}
}

// steepWidth and steepSlope keep the running slope sum of childSum exact
// enough: a segment narrower than steepWidth becomes a jump at its end, and
// the sum is re-added from the children's slopes whenever a slope steeper
// than steepSlope enters or leaves it (adding and then subtracting a huge
// slope would wipe out the small ones).
const (
	steepWidth = 1e-12
	steepSlope = 1e6
)

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
		if !same(&q.l, &q.r) || !same(&q.l, &p.r) {
			break
		}
		n--
	}
	return n
}

// childSum builds a fair_share pool's FairShareByFitFactor
// F(f) = base + Σ_c S_c(min(1, f·scale_c)) on [0, 1] from its sloped
// children (base holds the terms of the children whose scale is 0) by
// sweeping the children's breakpoints in order. The running value advances
// by the sum of the children's slopes; a resource none of whose children is
// sloped has slope exactly 0, so flat pieces stay exactly flat (their levels
// matter for left-continuity).
//
// The children's functions may be known only in part: fn holds each child's
// points known so far, and the sweep asks the tree for more (t.pull) when it
// needs them; with t nil every function is complete. Each point the sweep
// emits is final: a longer sweep emits the same points first.
type childSum struct {
	t  *tree
	ch []sumChild

	heap cursorHeap
	// total is the sum of the children's slopes; count says per resource
	// how many children are sloped (0: the sum is exactly flat); resync
	// asks for total to be re-added from the slopes.
	total  Share
	count  [NumResources]int
	resync [NumResources]bool
	// value is the sum at prevX (right limit); left and right are the
	// limits at the abscissa of the group of breakpoints being processed.
	value       Share
	prevX       float64
	left, right Share
	// out is F so far, fDone whether it is complete; base is the constant
	// term and next the single sloped child's next point (see single).
	out   vfunc
	fDone bool
	base  Share
	next  int
	// n0 is, once a sweep of several children is complete, the number of
	// points it emitted before the trailing one at 1 (see run).
	n0 int
}

// sumChild is one sloped child of a childSum.
type sumChild struct {
	fn      vfunc // the child's points known so far
	slope   Share // the child's current slope
	pending Share // its rise deferred from a near-vertical segment
	scale   float64
	// kid is the child's element index (with a tree), read only to ask
	// for more points while done is false (a sum kept across updates is
	// renumbered when the tree is laid out again, see renumberSum).
	kid int32
	// end is a complete function's activeEnd (-1 while unknown); nf is an
	// index known to be below the child's activeEnd (-1 when none is).
	end, nf int32
	done    bool // fn is the child's whole function
}

// reset empties the sum for a new pool.
func (s *childSum) reset(t *tree) {
	s.t = t
	s.ch = s.ch[:0]
}

// add adds a sloped child: element kid (with a tree), its points known so
// far and whether they are all of them (then end is activeEnd(fn)).
func (s *childSum) add(kid int, fn vfunc, done bool, end int, scale float64) {
	if !done {
		end = -1
	}
	s.ch = append(s.ch, sumChild{fn: fn, scale: scale, kid: int32(kid), end: int32(end), nf: -1, done: done})
}

// has reports whether child k has point j, asking the tree for it if needed.
func (s *childSum) has(k, j int) bool {
	c := &s.ch[k]
	if j < len(c.fn) {
		return true
	}
	if c.done {
		return false
	}
	c.fn, c.done = s.t.pull(int(c.kid), j)
	if c.done {
		c.end = int32(activeEnd(c.fn))
	}
	return j < len(c.fn)
}

// active reports whether breakpoint j of child k changes the sum (j is below
// the function's activeEnd), asking the tree for points as needed.
func (s *childSum) active(k, j int) bool {
	c := &s.ch[k]
	if j == 0 || int(c.nf) >= j {
		return true
	}
	if c.end >= 0 {
		return j < int(c.end)
	}
	for m := j; ; m++ {
		if !s.has(k, m) || c.end >= 0 {
			return j < int(c.end)
		}
		f := c.fn
		if p, q := &f[m-1], &f[m]; !same(&q.l, &q.r) || !same(&q.l, &p.r) {
			c.nf = int32(m)
			return true
		}
	}
}

// start begins the sum; run continues it.
func (s *childSum) start(dst vfunc, base Share) {
	s.base, s.next, s.fDone = base, 0, false
	s.out = dst[:0]
	switch len(s.ch) {
	case 0:
		s.out = append(s.out, vpoint{x: 0, l: base, r: base}, vpoint{x: 1, l: base, r: base})
		s.fDone = true
	case 1:
	default:
		s.startSweep(base)
	}
}

// run continues the sum until it has target points (target > 0) or is
// complete, and returns F or its first points: final is the number of
// leading points that building more of F keeps; done says whether f is
// the whole function.
//
// A sweep of several children emits exactly one point per group of
// breakpoints, and stops at the first check where it has target points
// (completing only when its last group gives the target-th point), so a
// sweep that already went further answers with its first target points as
// the shorter sweep would have left them: a sum kept from an earlier
// build (see poolcache.go) serves any target exactly as a new one would.
// (A sum of one sloped child kept from a longer build answers with more
// final points than a new one would; they are the same points.)
func (s *childSum) run(target int) (f vfunc, final int, done bool) {
	if len(s.ch) >= 2 && target > 0 && (s.fDone && target < s.n0 || !s.fDone && target <= len(s.out)) {
		return s.out[:target], target, false
	}
	switch {
	case s.fDone:
	case len(s.ch) == 1:
		s.single(target)
	default:
		s.sweep(target)
	}
	if !s.fDone && len(s.ch) == 1 {
		return s.out, len(s.out) - 1, false
	}
	return s.out, len(s.out), s.fDone
}

// single is run for one sloped child: its points scaled and raised by the
// base. The last point is final only once the child's function is complete.
func (s *childSum) single(target int) {
	sc := s.ch[0].scale
	for ; s.has(0, s.next); s.next++ {
		if target > 0 && len(s.out) > target {
			return
		}
		p := &s.ch[0].fn[s.next]
		out, q, fresh := nextPoint(s.out, p.x/sc)
		if fresh {
			sumTo(&q.l, &p.l, &s.base)
		}
		sumTo(&q.r, &p.r, &s.base)
		s.out = out
	}
	out := s.out
	if last := out[len(out)-1]; last.x < 1 {
		v := last.l
		out[len(out)-1].r = v
		out = appendV(out, 1, v, v)
	}
	s.out, s.fDone = out, true
}

// startSweep processes the children's first breakpoints.
func (s *childSum) startSweep(base Share) {
	s.total, s.count, s.resync = Share{}, [NumResources]int{}, [NumResources]bool{}
	s.value, s.prevX = base, 0
	// The children's first breakpoints (all at 0 in practice) are processed
	// in child order, which is the heap's order for equal abscissae.
	x0 := math.Inf(1)
	for k := range s.ch {
		s.has(k, 0)
		c := &s.ch[k]
		c.slope, c.pending = Share{}, Share{}
		addTo(&s.value, &c.fn[0].l)
		x0 = min(x0, c.fn[0].x/c.scale)
	}
	s.open(x0)
	s.heap = s.heap[:0]
	for k := range s.ch {
		j := 0
		if x := s.ch[k].fn[0].x / s.ch[k].scale; x == x0 {
			s.step(k, 0, x0)
			j = 1
		}
		if s.active(k, j) {
			c := &s.ch[k]
			s.heap = append(s.heap, cursor{x: c.fn[j].x / c.scale, child: int32(k), next: int32(j)})
		}
	}
	s.heap.init()
	for len(s.heap) > 0 && s.heap[0].x == x0 {
		cur := s.heap[0]
		s.step(int(cur.child), int(cur.next), x0)
		s.advance()
	}
	s.finish(x0)
}

// sweep is run for several sloped children: each group of breakpoints at
// one abscissa gives one point.
func (s *childSum) sweep(target int) {
	for len(s.heap) > 0 {
		if target > 0 && len(s.out) >= target {
			return
		}
		x := s.heap[0].x
		s.open(x)
		for len(s.heap) > 0 && s.heap[0].x == x {
			cur := s.heap[0]
			s.step(int(cur.child), int(cur.next), x)
			s.advance()
		}
		s.finish(x)
	}
	s.n0 = len(s.out)
	if last := s.out[len(s.out)-1]; last.x < 1 {
		// The sweep left out trailing flat breakpoints: the sum stays at
		// its last value up to 1.
		s.out = appendV(s.out, 1, last.r, last.r)
	}
	s.fDone = true
}

// open starts the group of breakpoints at x: the sum advances from prevX by
// the running slope.
func (s *childSum) open(x float64) {
	s.left = s.value
	if dx := x - s.prevX; dx > 0 {
		for k := range s.left {
			if s.count[k] > 0 {
				s.left[k] += float64(s.total[k] * dx)
			}
		}
	}
	s.right = s.left
}

// step processes breakpoint j of child i at abscissa x: the jump there, a
// rise deferred from a near-vertical segment ending there, and the child's
// new slope.
func (s *childSum) step(i int, j int, x float64) {
	next := s.active(i, j+1)
	c := &s.ch[i]
	f := c.fn
	p := &f[j]
	pd := &c.pending
	for k := range s.left {
		s.left[k] += pd[k]
		s.right[k] += pd[k] + (p.r[k] - p.l[k])
	}
	*pd = Share{}
	old := &c.slope
	var ns Share
	if next {
		q := &f[j+1]
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
func (s *childSum) finish(x float64) {
	for k, r := range s.resync {
		if r && s.count[k] > 0 {
			s.total[k] = 0
			for i := range s.ch {
				s.total[k] += s.ch[i].slope[k]
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
	out, q, fresh := nextPoint(s.out, x)
	if fresh {
		q.l = s.left
	}
	q.r = s.right
	s.out = out
	s.value = s.right
	s.prevX = x
}

// advance moves the heap's top cursor to its child's next breakpoint, or
// drops it when the child has no more.
func (s *childSum) advance() {
	cur := &s.heap[0]
	i := int(cur.child)
	if n := int(cur.next) + 1; s.active(i, n) {
		cur.next = int32(n)
		c := &s.ch[i]
		cur.x = c.fn[n].x / c.scale
		s.heap.down(0)
	} else {
		s.heap.popTop()
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
	return composeTo(dst, f, m, true)
}

// composeTo is compose for an M that may be incomplete (done false): its
// last point then only bounds the one before, and S stops short of it.
func composeTo(dst vfunc, f vfunc, m sfunc, done bool) vfunc {
	if need := len(m) + len(f); cap(dst) < need {
		dst = make(vfunc, 0, max(need, 2*cap(dst)))
	}
	c := composer{out: dst[:0]}
	c.feed(f, m, done)
	return c.out
}

// composer builds S = F∘M (see compose) as M's points come: feed handles
// the points of M that are final (all but the last until M is done), F
// holding every point up to M's last value.
type composer struct {
	j   int // next point of M to handle
	k   int // first index of f whose abscissa is >= the current value of M
	out vfunc
}

// seek advances k to the first index of f whose abscissa is >= t.
func (c *composer) seek(f vfunc, t float64) int {
	k := c.k
	if k > 0 && f[k-1].x >= t {
		k = f.search(t) // not expected: M never decreases
	}
	for k < len(f) && f[k].x < t {
		k++
	}
	c.k = k
	return k
}

func (c *composer) feed(f vfunc, m sfunc, done bool) {
	out := c.out
	for ; c.j < len(m); c.j++ {
		j := c.j
		if j == len(m)-1 && !done {
			break
		}
		p := &m[j]
		il := c.seek(f, p.l)
		var q *vpoint
		var fresh bool
		out, q, fresh = nextPoint(out, p.x)
		if j == len(m)-1 {
			f.atIndexTo(&q.r, p.l, il)
			if fresh {
				q.l = q.r
			}
			continue
		}
		if fresh {
			f.atIndexTo(&q.l, p.l, il)
		}
		nxt := &m[j+1]
		i := c.seek(f, p.r)
		if nxt.l > p.r {
			f.rightAtIndexTo(&q.r, p.r, i)
		} else {
			f.atIndexTo(&q.r, p.r, i)
		}
		if nxt.l > p.r {
			if i < len(f) && f[i].x == p.r {
				i++
			}
			scale := (nxt.x - p.x) / (nxt.l - p.r)
			for ; i < len(f) && f[i].x < nxt.l; i++ {
				fi := &f[i]
				out, q, fresh = nextPoint(out, p.x+float64((fi.x-p.r)*scale))
				if fresh {
					q.l = fi.l
				}
				q.r = fi.r
			}
		}
	}
	c.out = out
}

// operationS builds FairShareBySuggestion S = F∘M for an operation with
// FairShareByFitFactor f and limits share lim (and no guarantee), M being
// its MaxFitFactorBySuggestion: the vector suggestion for s is
// clip(s, ·, lim) per resource. M is built in the workspace's scratch
// buffer; S is built in place in the arena.
func operationS(w *workspace, f vfunc, lim Share) vfunc {
	m := maxFitFactor(w, f, Share{}, lim)
	s := compose(w.vArena.reserve(len(m)+len(f)), f, m)
	return w.vArena.commit(s)
}
