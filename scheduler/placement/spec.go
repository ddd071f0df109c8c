package placement

import "github.com/sharetree/sharetree/scheduler"

// PoolSpec describes one pool of the tree. The root is implicit: it is
// named [scheduler.RootID], runs in fair_share mode and has no limits.
type PoolSpec struct {
	// Name is unique in the tree; neither "" nor scheduler.RootID.
	Name scheduler.PoolID
	// Parent is the parent pool; "" is the root.
	Parent scheduler.PoolID
	// Mode is fair_share (children by satisfaction) or fifo (operations in
	// submission order). A fifo pool holds operations only.
	Mode scheduler.Mode
	// ResourceLimits caps the pool's usage; absent resources are unlimited.
	ResourceLimits scheduler.PartialResources
}

// TaskSpec is a group of identical jobs of an operation.
type TaskSpec struct {
	// Name is informational.
	Name string
	// JobCount is the number of jobs, at least 1.
	JobCount int
	// JobResources is what each job holds while it runs: finite, >= 0.
	JobResources scheduler.Resources
}

// OperationSpec describes an operation when it is added.
type OperationSpec struct {
	// ID is unique among the operations of the Placement.
	ID scheduler.OperationID
	// Pool is the operation's pool; "" is the root.
	Pool scheduler.PoolID
	// Tasks are the operation's jobs; every job starts pending.
	Tasks []TaskSpec
	// Order is the submission order: fifo pools serve lower Orders first,
	// and it breaks ties between operations of equal need.
	Order uint64
	// ResourceLimits caps the operation's usage; absent resources are
	// unlimited.
	ResourceLimits scheduler.PartialResources
	// Weight breaks ties (higher first) until SetFairShares reports the
	// effective weight; 0 means 1.
	Weight float64
	// Claims is set when the operation also runs in other trees: a fresh
	// job starts only after Claims grants it. Nil: every job is this
	// Placement's.
	Claims JobClaims
	// Held keeps the operation's pending jobs from starting (Schedule and
	// StartNextWithin pass it by) until Release; Adopt, JobFinished and
	// Forget work as for any operation. A scheduler that restarted holds
	// the operations it revived until the nodes have reported the jobs
	// they still run, so that none of those is started twice.
	Held bool
}

// JobKey names one job: the operation, the task's index in
// OperationSpec.Tasks and the job's index within the task.
type JobKey struct {
	Operation scheduler.OperationID
	Task      int
	Index     int
}

// Assignment is a job that Schedule started on the node.
type Assignment struct {
	Job JobKey
	// Resources are the job's resources as specified in its TaskSpec.
	Resources scheduler.Resources
}

// RunningJob is one running job of an operation.
type RunningJob struct {
	Key  JobKey
	Node scheduler.NodeID
	// Resources are the job's resources as specified in its TaskSpec.
	Resources scheduler.Resources
	// Seq is the start counter: strictly increasing over every start or
	// adoption of the Placement, so a lower Seq started earlier.
	Seq uint64
}

// OperationUsage is the live state of one operation, for the engine's
// snapshot.
type OperationUsage struct {
	ID    scheduler.OperationID
	Pool  scheduler.PoolID
	Order uint64
	// Usage is the sum of the running jobs' resources.
	Usage scheduler.Resources
	// Demand is Usage plus the resources of every pending job.
	Demand scheduler.Resources
	// PendingJobCount and RunningJobCount count the jobs.
	PendingJobCount, RunningJobCount int
	// JobResources are the resources of the next pending job (the first
	// task with pending jobs); zero when nothing is pending.
	JobResources scheduler.Resources
}

// Stats counts the Placement's contents.
type Stats struct {
	Pools, Operations        int
	PendingJobs, RunningJobs int
	// Usage is the sum of the running jobs' resources.
	Usage scheduler.Resources
	// Pending is the sum of the pending jobs' resources.
	Pending scheduler.Resources
}
