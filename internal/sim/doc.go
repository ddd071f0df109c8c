// Package sim is sharetree's discrete-event simulator (`sharetree sim`):
// a cluster of nodes, one pool tree and a workload of operations
// submitted over time, run on virtual time through the same pure code the
// scheduler runs — the admission of operations (scheduler.Admission), the
// fair-share engine (scheduler.Engine), the placement of jobs on node
// heartbeats (scheduler/placement) and the preemption decisions
// (scheduler/preemption) — with no NATS, actors or clock. The same file
// always gives the same result, bit for bit.
//
// Events happen in virtual time; at one instant, job ends come first,
// then submissions, then the fair-share update, then the nodes' passes,
// then the sample. Every Tree.FairShareUpdatePeriod the engine updates the
// fair shares. Every HeartbeatPeriod each node (their passes spread evenly
// over the period) runs the scheduler's pass: the graceful pass
// interrupts jobs of graceful operations above their fair share, the
// preemptive pass (at most every Tree.PreemptiveSchedulingBackoff per
// node) interrupts jobs so that a starving operation starts one, and the
// regular pass starts the neediest operations' jobs that fit. A job runs
// for its task's duration. An interrupted job leaves at once and its work
// goes back to pending, to run again from the start (the time it had run
// is counted as lost). An operation ends when all its jobs completed; its
// pool's queue may then start a waiting one.
//
// Run returns the time series of every pool (sampled every SamplePeriod),
// every operation's submit, start and finish times, and the counts of
// what happened; Report writes them as CSV files and a self-contained
// HTML report with the seeds' figures per pool.
package sim
