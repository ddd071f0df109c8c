// Package placement is the per-tree live scheduling state that node
// heartbeats use to start jobs between two fair-share updates.
//
// A [Placement] holds the pool structure of one pool tree, every running
// operation with its pending and running jobs, the live resource usage of
// every pool and operation, and the fair shares of the last update. A node
// heartbeat calls [Placement.Schedule] with the node's free resources; the
// package picks the neediest operation whose pending job fits, starts it,
// and repeats until nothing fits. Finished jobs come back through
// [Placement.JobFinished]; after a scheduler restart [Placement.Adopt]
// re-learns the jobs the nodes report. [Placement.Operations] feeds the
// engine's next snapshot and [Placement.SetFairShares] takes its result.
//
// # Neediest first
//
// Scheduling walks from the root. At a fair_share pool it descends into the
// candidate child with the lowest local satisfaction
// ([scheduler.LocalSatisfaction] of the child's live usage share, the fair
// share of the last [Placement.SetFairShares] and its demand share = usage +
// pending jobs); ties go to the lower dominant usage share, then the higher
// weight, then pools before operations, then the lower submission Order,
// then the lower name. Before the first SetFairShares every fair share is 0,
// every satisfaction is +Inf and the order is plain dominant usage share.
// At a fifo pool the operations are tried in submission Order (then id),
// whatever their usage. If nothing fits in the chosen child the next child in
// that order is tried. Satisfaction is each child's own local satisfaction
// (the brief's hierarchical walk), not the minimum over the child's subtree
// that the reference computes for composites.
//
// Within an operation the tasks are tried in order and the first task whose
// job fits is started; within a task, requeued jobs (retries) go first in the
// order they were requeued, then fresh jobs in index order.
//
// A job starts only when its resources fit the node's remaining free
// resources (componentwise) and the start keeps the usage of the operation
// and of every ancestor pool within their ResourceLimits.
//
// # Cost
//
// Every pool keeps a binary heap of its candidate children: the children
// with a pending job that their own limits do not block. Each element keeps
// the componentwise minimum of the pending job resources of its candidates;
// if the free vector does not dominate it, nothing below can fit and the
// subtree is skipped, so a heartbeat from a full node costs O(1). A job
// start or finish updates the usage, keys and heap positions along the
// operation's ancestor path, O(depth·log n). SetFairShares, SetTotal and
// SetPools are O(n); SetFairShares only compares the elements whose fair
// share and weight did not change, and rebuilds only the heaps of the
// pools with a child whose did.
//
// # Fixed point
//
// Amounts are kept as integers: cpu in hundredths of a core, every other
// resource in whole units (the engine's representable values, see
// [scheduler.Resources.Round]). A job's resources round up, free resources,
// limits and the cluster total round down, so a start never exceeds what was
// offered; usage sums are exact and return to zero when every job ends.
// Assignments report the job's resources as specified.
//
// The package is pure and deterministic: no clock, logging, goroutines or
// I/O, and no decision depends on map iteration order. A Placement is not
// safe for concurrent use; the owner serialises calls.
package placement
