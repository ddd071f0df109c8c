// Package demo is `sharetree demo`: one process with an embedded NATS
// server, the scheduler, in-process node agents running simulated jobs, the
// pool tree of the pool-tree documentation's example plus a burst and a
// relaxed integral pool, and a timed workload. It prints a live view of
// each pool's fair share, usage and demand.
package demo
