// Package scheduler is sharetree's fair-share engine: a pure, deterministic
// function from a pool tree, the cluster's resources, the operations with
// their demand and usage, the previous engine state and the time, to every
// element's fair share, guarantees, integral volumes, starvation status and
// the classification of running jobs.
//
// The package performs no I/O: it does not read the clock, log, talk to NATS
// or start goroutines. The running scheduler, the what-if calculator and the
// simulator all call [Update]; the same inputs always give the same outputs,
// bit for bit on every target: every product that meets an addition is
// rounded first (float64(x*y) + z), so that no target fuses it into one
// multiply-add, and no function whose last bit depends on the target
// (math.Exp, math.Log, …) is used. See docs/DETERMINISM.md; .ci/fma-check and
// the purity tests enforce both.
//
// The algorithm is the vector hierarchical dominant-resource fairness of the
// YTsaurus scheduler (see docs/CONCEPTS.md and the reference in
// ../shared/reference): strong guarantees inferred through the tree's main
// resource and fitted into their parents with one scalar, burst and relaxed
// integral guarantees fed by accumulated resource volumes, and a
// weight-proportional distribution of the rest built from monotone
// piecewise-linear "fit factor" functions evaluated left-continuously.
//
// Pipeline of one [Update]:
//
//	validate → build element tree (with demand, usage, limits, ratios) →
//	infer strong guarantees → integral volumes (refill, consume, overflow) →
//	adjust guarantees (overcommit, limits, fitting) → weights → burst
//	grants → relaxed grants → fit-factor functions → top-down distribution →
//	limited demands → report (root normalisation, detailed split,
//	starvation, job classes).
//
// Pools' fit-factor functions are built on demand, only as far as the steps
// after them read them (see lazy.go); the points built are those building
// the whole functions would give.
//
// An [Engine] runs the same update and keeps its working memory between
// calls; [Update] borrows one from a pool. Either way the Result shares no
// memory with the engine. An Engine whose next snapshot has the structure
// of its last one (topology.go) also keeps what depends only on inputs
// that are bitwise unchanged: operations' elements and functions, and the
// children's sums of pools whose children are all such operations
// (opcache.go); the results are those of a fresh update, bit for bit.
package scheduler
