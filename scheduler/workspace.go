package scheduler

// workspace holds the scratch buffers reused while the fit-factor functions
// of one update are built, and the arena that keeps the operations'
// FairShareBySuggestion (pools keep theirs in tree.lz). Functions are built
// in place in the arena, so one update allocates a few large chunks instead
// of several small slices per operation. An Engine keeps the workspace,
// chunks included, for its next update: nothing an update returns points
// into it.
type workspace struct {
	f    vfunc
	sig  []sigmaVertex
	m    sfunc
	fifo []vfunc
	sugg []float64

	vArena arena[vpoint]
}

// reset makes the arena reusable for a tree of n elements.
func (w *workspace) reset(n int) {
	w.vArena.reset(4 * n)
}

// maxChunk bounds the size of one arena chunk (in points).
const maxChunk = 1 << 16

// arena hands out slices of large chunks. Chunks stay alive through the
// slices that use them; reset starts handing out the same chunks again.
type arena[P any] struct {
	chunks [][]P
	cur    int // index of the chunk being filled
	// next is the size of the next new chunk; it starts from the tree's
	// size and doubles up to maxChunk.
	next int
}

func (a *arena[P]) reset(hint int) {
	for i := range a.chunks {
		a.chunks[i] = a.chunks[i][:0]
	}
	a.cur = 0
	if len(a.chunks) == 0 {
		a.next = min(hint, maxChunk)
	}
}

// room makes the current chunk one with room for n more points.
func (a *arena[P]) room(n int) {
	for a.cur < len(a.chunks) && cap(a.chunks[a.cur])-len(a.chunks[a.cur]) < n {
		a.cur++
	}
	if a.cur == len(a.chunks) {
		c := max(a.next, n, 16)
		a.next = min(2*max(a.next, 16), maxChunk)
		a.chunks = append(a.chunks, make([]P, 0, c))
	}
}

// keep copies f into the arena.
func (a *arena[P]) keep(f []P) []P {
	n := len(f)
	a.room(n)
	chunk := a.chunks[a.cur]
	start := len(chunk)
	chunk = append(chunk, f...)
	a.chunks[a.cur] = chunk
	return chunk[start : start+n : start+n]
}

// reserve returns an empty slice with room for n points at the end of the
// current chunk, to build a function in place; commit keeps it.
func (a *arena[P]) reserve(n int) []P {
	a.room(n)
	chunk := a.chunks[a.cur]
	l := len(chunk)
	return chunk[l:l:cap(chunk)]
}

// commit keeps f, built in the slice the last reserve returned, in the
// arena (f is copied only if it outgrew that slice).
func (a *arena[P]) commit(f []P) []P {
	chunk := a.chunks[a.cur]
	l := len(chunk)
	if len(f) == 0 || l+len(f) > cap(chunk) || &chunk[l : l+1][0] != &f[0] {
		return a.keep(f)
	}
	a.chunks[a.cur] = chunk[:l+len(f)]
	return f[:len(f):len(f)]
}

// grow returns s resized to n elements (contents unspecified).
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}
