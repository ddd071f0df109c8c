package sim

import (
	"time"

	"github.com/sharetree/sharetree/scheduler"
)

// Result is what a simulation gives.
type Result struct {
	// Name is the file's description.
	Name string
	// Duration is the virtual time simulated.
	Duration time.Duration
	// Total is the cluster's resources.
	Total scheduler.Resources
	// Pools are the root and the pools, in the file's order; every
	// sample's Pools has one entry per pool, in this order.
	Pools []PoolInfo
	// Samples are taken every SamplePeriod from time zero, and at the end.
	Samples []Sample
	// Operations are the workload's, by submit time.
	Operations []OperationResult
	Counts     Counts
}

// PoolInfo names a pool of the series.
type PoolInfo struct {
	Name, Parent string
	Depth        int
	// Integral: a burst or relaxed pool (its samples have a Volume).
	Integral bool
}

// Sample is every pool at one time.
type Sample struct {
	At    time.Duration
	Pools []PoolSample
}

// PoolSample is one pool at one time: live usage, and the latest
// fair-share update's demand, fair share (the share times the cluster),
// accumulated volume (integral pools, resource·seconds) and starvation
// status; the running and waiting operations of its subtree.
type PoolSample struct {
	Usage, Demand, FairShare, Volume     scheduler.Resources
	Starvation                           scheduler.StarvationStatus
	RunningOperations, WaitingOperations int
}

// OperationResult is what happened to one operation.
type OperationResult struct {
	ID, Pool string
	// State at the end: "completed", "running", "pending" (waiting in a
	// pool's queue), "refused" (a max_operation_count) or "not submitted"
	// (its submit time is after the end).
	State     string
	Submitted bool
	SubmitAt  time.Duration
	// AdmittedAt is when it left its pool's queue (its submit time unless
	// it waited); valid when State is running or completed.
	AdmittedAt time.Duration
	// StartAt is its first job's start (Started), FinishAt its last job's
	// end (Finished).
	Started, Finished bool
	StartAt, FinishAt time.Duration
	// Jobs counts its jobs, Completed those that ran to their end, and
	// Interrupted the interruptions (preemption and graceful), each of
	// which lost LostJobTime of work in all.
	Jobs, Completed, Interrupted int
	LostJobTime                  time.Duration
	// Refused is the admission's refusal.
	Refused string
}

// Counts are a simulation's totals.
type Counts struct {
	Updates, NodePasses         int
	JobStarts, JobCompletions   int
	Preemptions                 int
	GracefulInterrupts, Refused int
	// LostJobTime is the run time of interrupted jobs (their work runs
	// again); UnfinishedJobTime that of the jobs still running at the end.
	LostJobTime, UnfinishedJobTime time.Duration
}
