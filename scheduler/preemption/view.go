package preemption

import "github.com/sharetree/sharetree/scheduler"

// JobID names a running job; the running scheduler uses the job id it sends
// to the node.
type JobID string

// Mode is an operation's preemption_mode.
type Mode int

const (
	// ModeNormal: the operation's jobs may be preempted for starving
	// operations.
	ModeNormal Mode = iota
	// ModeGraceful: the operation's jobs are never taken by Preempt; Graceful
	// interrupts them whenever the operation uses more than its fair share.
	ModeGraceful
)

// String returns "normal" or "graceful".
func (m Mode) String() string {
	if m == ModeGraceful {
		return "graceful"
	}
	return "normal"
}

// Node is the node whose heartbeat is being answered.
type Node struct {
	ID scheduler.NodeID
	// Total is the node's resources.
	Total scheduler.Resources
	// Free is Total minus every job the node holds, jobs being interrupted
	// included (they still hold their resources); it may be negative when
	// the node is overcommitted.
	Free scheduler.Resources
	// Reserved is the part of Free and of the interrupting jobs' resources
	// already promised to jobs that earlier preemptions on this node chose
	// (the caller's reservations, see package actors): Preempt counts it
	// as taken, as it does the jobs its own decisions start.
	Reserved scheduler.Resources
}

// Job is one job running on the node.
type Job struct {
	ID JobID
	// Operation is the job's operation; it must be in View.Operations.
	Operation scheduler.OperationID
	// Resources is what the job holds on the node.
	Resources scheduler.Resources
	// Seq orders starts: a higher Seq started later (is newer). Equal Seqs
	// are ordered by ID.
	Seq uint64
	// Class is the job's preemption class from the engine's classification
	// of its operation's jobs (scheduler.ClassifyJobs), which already folds
	// in preemption_satisfaction_threshold,
	// aggressive_preemption_satisfaction_threshold and
	// non_preemptible_resource_usage_threshold.
	Class scheduler.PreemptionClass
	// Interrupting is set when the job is already being interrupted or
	// aborted: it is never chosen again, and its resources count as being
	// released on this node.
	Interrupting bool
}

// Operation is one operation the decisions concern: the operation of a job
// on the node, or a starving operation that may preempt.
type Operation struct {
	ID scheduler.OperationID
	// Pools is the operation's pool chain: its own pool first, then each
	// ancestor up to (excluding) the root; empty for an operation in the
	// root. Every pool must be in View.Pools. Views built by
	// Source.PreemptionView share it with the tree's settings: do not
	// modify it.
	Pools []scheduler.PoolID
	// FairShare and Demand are the operation's shares from the latest
	// fair-share update (FairShare.Total and DemandShare of its result).
	FairShare, Demand scheduler.Share
	// Usage is what the operation's running jobs hold across the cluster,
	// minus the jobs already being interrupted anywhere (they are leaving).
	Usage scheduler.Resources
	// NonPreemptibleUsage is the operation's effective
	// non_preemptible_resource_usage_threshold: while its usage is strictly
	// below this in every resource none of its jobs may be preempted. Zero
	// protects nothing; +Inf stands for a resource the setting leaves out.
	NonPreemptibleUsage scheduler.Resources
	// Starvation is the operation's starvation status.
	Starvation scheduler.StarvationStatus
	// Mode is the operation's preemption_mode.
	Mode Mode
	// NextJob is the resources of the job the operation would start next
	// (its first pending job); meaningful when PendingJobs > 0.
	NextJob scheduler.Resources
	// PendingJobs counts the operation's pending jobs.
	PendingJobs int
}

// Pool is one pool on an operation's chain, with what protects its subtree.
type Pool struct {
	ID scheduler.PoolID
	// Guarantee is the pool's strong-guarantee share (StrongGuaranteeShare
	// of its result). The pool's subtree protects what it covers: a job may
	// not be preempted for an operation outside the subtree if that leaves
	// the pool's usage below its guarantee (see the package documentation).
	Guarantee scheduler.Share
	// Usage is what the subtree's running jobs hold, minus the jobs already
	// being interrupted anywhere.
	Usage scheduler.Resources
	// Starvation is the pool's starvation status: a starving pool's jobs are
	// not preempted for operations outside it.
	Starvation scheduler.StarvationStatus
}

// Thresholds are the tree's preemption settings.
type Thresholds struct {
	// Preemption is preemption_satisfaction_threshold (> 0): a Starving
	// operation may not take a victim operation below Preemption × its fair
	// share, nor start a job that takes its own usage beyond it.
	Preemption float64
	// Aggressive is aggressive_preemption_satisfaction_threshold, in
	// [0, Preemption]: an AggressivelyStarving operation may not take a
	// victim operation below Aggressive × its fair share.
	Aggressive float64
	// NonPreemptibleUsage is the tree's
	// non_preemptible_resource_usage_threshold, reported in reasons (each
	// operation's effective value is Operation.NonPreemptibleUsage).
	NonPreemptibleUsage scheduler.PartialResources
}

// View is everything Preempt and Graceful read: one node's heartbeat, after
// the regular scheduling pass. The functions never modify it.
type View struct {
	Node Node
	// Total is the cluster total that shares are fractions of.
	Total scheduler.Resources
	// Jobs are the node's running jobs, in any order.
	Jobs []Job
	// Operations are the operations of Jobs and the starving operations
	// that may preempt, in any order; ids are unique.
	Operations []Operation
	// Pools are the pools on the operations' chains, in any order; ids are
	// unique.
	Pools []Pool
	// Thresholds are the tree's settings.
	Thresholds Thresholds
	// MaxStarts caps the jobs started by preemption on this heartbeat; 0
	// means 1, the reference's "at most one allocation per heartbeat".
	MaxStarts int
	// GracefulTolerance is the share by which a graceful operation's usage
	// may exceed (and, after interruptions, fall short of) its fair share on
	// its dominant resource; 0 means DefaultGracefulTolerance.
	GracefulTolerance float64
}

// DefaultGracefulTolerance is the reference's ratio comparison precision.
const DefaultGracefulTolerance = 1e-4

// MayTake reports whether an operation with starvation status s may preempt
// a job of class c: a Starving operation takes only Preemptible jobs, an
// AggressivelyStarving one also AggressivelyPreemptible jobs; NonPreemptible
// jobs and non-starving operations take nothing.
func MayTake(s scheduler.StarvationStatus, c scheduler.PreemptionClass) bool {
	switch s {
	case scheduler.Starving:
		return c == scheduler.Preemptible
	case scheduler.AggressivelyStarving:
		return c == scheduler.Preemptible || c == scheduler.AggressivelyPreemptible
	default:
		return false
	}
}
