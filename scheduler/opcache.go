package scheduler

import (
	"math"
	"time"
)

// Between two updates of a large cluster most operations do not change:
// the same demand, usage, limits and job shape, on the same cluster. An
// operation's element (its shares, limits, dominant resource, settings)
// and its functions are a pure function of those inputs and of the
// cluster, so when the Engine reuses the structure (see topology.go) it
// keeps the element and the functions of every operation whose inputs are
// bitwise those it last filled the element from, and fills and builds
// only the others. Equality is exact (every float compared by its bits,
// pointers by the values they point to), never a hash: a kept element is
// exactly the one a fresh fill would write.
//
// What the element and the functions depend on is listed in opInputs
// (the operation's fields initOperation reads) and opGlobals (the
// cluster's total, its node shapes and the tree's step function for
// gangs): an input added to initOperation or buildOperation later must be
// added there.
//
// Invariants, while the structure is valid (topology.valid: every build
// that records the structure has recorded the operations' inputs first):
//   - t.opIn[oi] holds the inputs operation oi's element was last filled
//     from, and t.opG the globals of that fill; every fill refreshes both
//     for every operation it fills (a full build's included: recording
//     costs a write per operation, but the next update, whose operation
//     list usually differs, needs them, see reshape.go; the package-level
//     Update's engine records nothing, see tree.pooled).
//   - A kept element keeps its function when it has one (sDone, fnS):
//     operations' functions live in the workspace's arena, which is then
//     not reset between updates (see keepFunctions); when it is reset,
//     every operation's function is dropped and built again on demand.
//   - The fields the later steps write into an operation's element (fair
//     share, suggestion scale, starvation settings) are written by them
//     at every update before they are read, kept element or not.
//   - An operation's element.ver identifies its function: fill gives the
//     element a new one whenever it fills the element or drops its
//     function, and a kept element keeps its own (in place with patch,
//     moved with it by reshape). The pools' functions, kept while their
//     children's identities are the same (see poolcache.go), rely on it.
//
// All of this needs the structure of the last update, which includes the
// whole list of operations; an operation that starts or finishes between
// two updates changes it. When only the operations changed (the pools are
// the same), patch.go keeps the elements of the operations that stay where
// they are, or, when it does not apply, reshape.go lays the tree out again
// and moves the kept elements and functions there; when the pools
// changed, the update is a full build that keeps nothing.

// opInputs are the inputs of an operation's element and functions.
type opInputs struct {
	demand, usage, job Resources
	limits             PartialResources
	weight, tolerance  float64
	timeout            time.Duration
	pending            int
	// flags: opGang, opUnschedulable, opHasJobs, opWeight, opTolerance,
	// opTimeout.
	flags uint8
	// varies is the element's varies (its pool's opVaries collects it).
	varies resourceSet
}

const (
	opGang uint8 = 1 << iota
	opUnschedulable
	opHasJobs
	opWeight
	opTolerance
	opTimeout
)

// opGlobals are the inputs shared by every operation's element.
type opGlobals struct {
	total  Resources
	shapes []nodeShape
	gangs  bool
}

// set records o's inputs (and the varies of the element filled from them).
func (in *opInputs) set(o *Operation, varies resourceSet) {
	*in = opInputs{demand: o.Demand, usage: o.Usage, job: o.JobResources, limits: o.ResourceLimits,
		pending: o.PendingJobCount, varies: varies}
	if o.IsGang {
		in.flags |= opGang
	}
	if o.Unschedulable {
		in.flags |= opUnschedulable
	}
	if len(o.Jobs) > 0 {
		in.flags |= opHasJobs
	}
	if o.Weight != nil {
		in.flags |= opWeight
		in.weight = *o.Weight
	}
	if o.FairShareStarvationTolerance != nil {
		in.flags |= opTolerance
		in.tolerance = *o.FairShareStarvationTolerance
	}
	if o.FairShareStarvationTimeout != nil {
		in.flags |= opTimeout
		in.timeout = *o.FairShareStarvationTimeout
	}
}

// same reports whether o's inputs are bitwise those recorded.
func (in *opInputs) same(o *Operation) bool {
	if !sameBits(&in.demand, &o.Demand) || !sameBits(&in.usage, &o.Usage) || !sameBits(&in.job, &o.JobResources) ||
		in.limits.Set != o.ResourceLimits.Set || !sameBits(&in.limits.Values, &o.ResourceLimits.Values) ||
		in.pending != o.PendingJobCount {
		return false
	}
	var flags uint8
	if o.IsGang {
		flags |= opGang
	}
	if o.Unschedulable {
		flags |= opUnschedulable
	}
	if len(o.Jobs) > 0 {
		flags |= opHasJobs
	}
	if o.Weight != nil {
		if flags |= opWeight; math.Float64bits(*o.Weight) != math.Float64bits(in.weight) {
			return false
		}
	}
	if o.FairShareStarvationTolerance != nil {
		if flags |= opTolerance; math.Float64bits(*o.FairShareStarvationTolerance) != math.Float64bits(in.tolerance) {
			return false
		}
	}
	if o.FairShareStarvationTimeout != nil {
		if flags |= opTimeout; *o.FairShareStarvationTimeout != in.timeout {
			return false
		}
	}
	return flags == in.flags
}

// sameBits reports whether a and b are equal bit for bit (0 and -0 differ).
func sameBits(a, b *Resources) bool {
	for r := range a {
		if math.Float64bits(a[r]) != math.Float64bits(b[r]) {
			return false
		}
	}
	return true
}

// sameGlobals reports whether the tree's cluster and gang setting are
// bitwise those of g; record copies them into g.
func (t *tree) sameGlobals(g *opGlobals) bool {
	if !sameBits(&t.total, &g.total) || t.cfg.EnableStepFunctionForGangOperations != g.gangs ||
		len(t.nodeShapes) != len(g.shapes) {
		return false
	}
	for i := range g.shapes {
		a, b := &t.nodeShapes[i], &g.shapes[i]
		if !sameBits(&a.resources, &b.resources) || a.count != b.count {
			return false
		}
	}
	return true
}

func (t *tree) recordGlobals(g *opGlobals) {
	g.total = t.total
	g.gangs = t.cfg.EnableStepFunctionForGangOperations
	g.shapes = append(g.shapes[:0], t.nodeShapes...)
}

// keepFunctions decides, at the start of an update that keeps operations'
// elements, whether their functions are kept too: the arena holding them
// is then not reset, and the functions of the operations that changed are
// added to it. Once it holds more than twice what one update built after
// its last reset (the rest being functions no element uses any more), it
// is reset and every function is built again.
func (t *tree) keepFunctions() bool {
	a := &t.ws.vArena
	used := a.used()
	if t.fnBase < 0 {
		t.fnBase = used // the points built by the update that reset it
	}
	if used <= 2*t.fnBase+fnSlack {
		return true
	}
	t.resetFunctions()
	return false
}

// fnSlack is what the arena of operations' functions may hold beyond
// twice its size after a reset before it is reset (small trees).
const fnSlack = 4096

// resetFunctions resets the arena of operations' functions.
func (t *tree) resetFunctions() {
	t.ws.reset(len(t.el))
	t.fnBase = -1
}

// used is the number of points the arena holds.
func (a *arena[P]) used() int {
	n := 0
	for _, c := range a.chunks {
		n += len(c)
	}
	return n
}
