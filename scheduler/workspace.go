package scheduler

// workspace holds the scratch buffers reused while the fit-factor functions
// of one update are built, and the arena that keeps the functions an update
// needs afterwards (every element's FairShareBySuggestion, and the pools'
// MaxFitFactorBySuggestion). Functions are built in scratch space and copied
// into the arena with their exact size, so one update allocates a few large
// chunks instead of several small slices per element.
type workspace struct {
	f     vfunc
	sig   []sigmaVertex
	m     sfunc
	s     vfunc
	terms []scaledChild
	fifo  []vfunc

	// sumScaled
	slopes  []Share
	pending []Share
	ends    []int
	heap    cursorHeap

	vchunk []vpoint
	schunk []spoint
	// chunk is the size of the next arena chunk; it starts from the tree's
	// size and doubles up to maxChunk.
	chunk int
}

const maxChunk = 1 << 16

func (w *workspace) nextChunk(n int) int {
	c := max(w.chunk, n)
	w.chunk = min(2*max(w.chunk, 16), maxChunk)
	return c
}

// keepV copies f into the arena.
func (w *workspace) keepV(f vfunc) vfunc { return keep(w, &w.vchunk, f) }

// keepS copies f into the arena.
func (w *workspace) keepS(f sfunc) sfunc { return keep(w, &w.schunk, f) }

// keep copies f into the current chunk, starting a new chunk when it does
// not fit; earlier chunks stay alive through the slices that use them.
func keep[F ~[]P, P any](w *workspace, chunk *[]P, f F) F {
	n := len(f)
	if cap(*chunk)-len(*chunk) < n {
		*chunk = make([]P, 0, w.nextChunk(n))
	}
	start := len(*chunk)
	*chunk = append(*chunk, f...)
	return F((*chunk)[start : start+n : start+n])
}

// grow returns s resized to n elements (contents unspecified).
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, 2*n)
	}
	return s[:n]
}
