package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/placement"
	"github.com/sharetree/sharetree/scheduler/preemption"
)

// Messages between actors and from the NATS boundary. Every message is
// immutable once sent: protobuf payloads are cloned or freshly built by the
// sender and never touched again. Replies travel through Reply functions,
// called exactly once by the actor that answers; they must not block (they
// publish a NATS reply).

// SubmitOperation asks the root to admit an operation.
type SubmitOperation struct {
	Spec *pb.OperationSpec
	// RequestID makes the submission idempotent (see idempotent.go; ""
	// for none).
	RequestID string
	Reply     func(*pb.StartOperationResponse, *pb.Error)
}

// GetOperation asks for an operation's status.
type GetOperation struct {
	ID    string
	Reply func(*pb.OperationStatus, *pb.Error)
}

// ListOperations asks for the statuses of many operations, one page of
// them (see list.go).
type ListOperations struct {
	Request *pb.ListOperationsRequest
	// MaxBytes bounds the encoded reply (0: no bound): the page ends
	// before the operation that would take it past MaxBytes (a page holds
	// at least one operation).
	MaxBytes int
	Reply    func(*pb.ListOperationsResponse, *pb.Error)
}

// AbortOperation aborts an operation.
type AbortOperation struct {
	ID     string
	Reason string
	// User, when set, is who asks (from the subject, see
	// subjects.UserOp): only the operation's owner may. Empty: unchecked
	// (an admin, or a server without authentication).
	User  string
	Reply func(*pb.AbortOperationResponse, *pb.Error)
}

// UpdateOperation changes an operation's runtime parameters (weight,
// resource limits, pool; per tree or for all trees). Reply comes after the
// updated operation is stored.
type UpdateOperation struct {
	ID  string
	Req *pb.UpdateOperationRequest
	// User, when set, is who asks: only the operation's owner may (see
	// AbortOperation.User).
	User  string
	Reply func(*pb.UpdateOperationResponse, *pb.Error)
}

// NodeHeartbeat is one heartbeat of a node; the subject's node id has been
// checked against the payload.
type NodeHeartbeat struct {
	Heartbeat *pb.Heartbeat
	Reply     func(*pb.HeartbeatResponse, *pb.Error)
}

// --- internal messages ---

// admitOperation asks a tree actor to admit an operation (request/response).
type admitOperation struct {
	id    scheduler.OperationID
	pool  scheduler.PoolID
	spec  *pb.OperationSpec
	place placement.OperationSpec
	// weight in this tree; nil is 1.
	weight *float64
	op     *actor.PID
	// ephemeral, when set, is the pool to create for the operation if it
	// does not exist yet (pool is its name); user owns it.
	ephemeral *scheduler.PoolConfig
	user      string
	// offload: the tree runs a share of the jobs for the pool's
	// offloading_settings; a refusal skips the tree instead of failing the
	// operation.
	offload bool
	// revived: the operation was acknowledged before the scheduler
	// restarted; max_operation_count does not refuse it.
	revived bool
	// done are the jobs a revived operation completed before the restart:
	// none of them runs again.
	done []placement.JobKey
}

// admitResult answers admitOperation.
type admitResult struct {
	tree    string
	running bool
	// lightweight: it runs as a lightweight operation.
	lightweight bool
	pending     *pb.PendingReason
	err         *pb.Error
	// skipped: an offloading tree refused (err says why); the operation
	// runs without it.
	skipped bool
}

// operationStarted tells an operation actor that a tree runs it now (sent at
// admission or when a pending operation gets its slot).
type operationStarted struct {
	tree        string
	lightweight bool
}

// operationPending tells an operation actor why it waits in a tree.
type operationPending struct {
	tree   string
	reason *pb.PendingReason
}

// operationDone tells a tree actor to forget a finished operation.
type operationDone struct{ id scheduler.OperationID }

// jobStarted tells an operation actor one of its jobs started.
type jobStarted struct {
	ref  jobRef
	node string
}

// jobFinished tells an operation actor one of its jobs finished.
type jobFinished struct {
	ref      jobRef
	node     string
	state    pb.JobState
	exitCode int32
	reason   string
	// lost: the job vanished or its node was lost; it does not count toward
	// max_failed_job_count.
	lost bool
	// interrupted: it finished after an interruption; completed or not, its
	// work runs again.
	interrupted bool
	// notify, when set, is the node actor that waits for the completion to
	// be stored before it acknowledges it to the node (see journal.go);
	// jobID is the job's id.
	notify *actor.PID
	jobID  string
}

// journalAgain asks an operation to journal again a completion a node
// reports that the operation already counts (see unknownFinished); notify
// is told once it is stored, at once when the operation does not count
// it or needs no journal.
type journalAgain struct {
	notify *actor.PID
	ref    jobRef
	jobID  string
}

// statusUpdate carries an operation's latest status to the root (for
// listing).
type statusUpdate struct {
	status *pb.OperationStatus
	// final: the operation is over; the root stops its actor.
	final bool
	// acked: the operation is stored and its submitter answered; undone:
	// its first write failed, it never was (see idempotent.go).
	acked, undone bool
}

// progressTick asks an operation actor to store its completed jobs (see
// Config.ProgressPersistPeriod).
type progressTick struct{}

// persistRetry asks an operation actor to try again a status write that
// failed (see operationActor.persistBackoff).
type persistRetry struct{}

// persistBackoffMin and persistBackoffMax bound the wait before an
// operation tries again a status write that failed.
const (
	persistBackoffMin = 100 * time.Millisecond
	persistBackoffMax = 5 * time.Second
)

// persisted reports a store write's outcome to the actor that asked.
type persisted struct {
	status *pb.OperationStatus
	err    error
	// journal is what an operation's write covers of its journaled
	// completions (operation actors only).
	journal journalCover
}

// journalCover is what a status write covers of the operation's journaled
// completions: owed is set when some were in no earlier write, idx is the
// number of the last one sent to the journal before the write.
type journalCover struct {
	owed bool
	idx  uint64
}

// treeTick starts a fair-share update. gen is the timer generation that
// sent it: a tick of a cancelled timer (one already in flight when the
// period changed) is ignored.
type treeTick struct{ gen uint64 }

// updateDone carries a finished fair-share update back to the tree actor.
type updateDone struct {
	res   *scheduler.Result
	err   error
	nodes int
	ops   int
	// took is how long the engine ran (by Config.Now).
	took time.Duration
	// snapshotLock is how long the snapshot held the ledger's mutex.
	snapshotLock time.Duration
	// reuse is what the engine carried over from the update before.
	reuse scheduler.Reuse
}

// poolResult carries one pool's record of an update whose starvation
// status differs from the one before (from) to its pool actor.
type poolResult struct {
	elem scheduler.ElementResult
	from scheduler.StarvationStatus
	now  int64
}

// newPoolResult copies a pool's record: its own Integral attributes and no
// job classifications, so that it shares no memory with the Result, which
// the tree recycles (see results.go).
func newPoolResult(e *scheduler.ElementResult, from scheduler.StarvationStatus, now time.Time) *poolResult {
	m := &poolResult{elem: *e, from: from, now: now.UnixNano()}
	if e.Integral != nil {
		in := *e.Integral
		if d := in.EstimatedBurstUsageDurationSeconds; d != nil {
			v := *d
			in.EstimatedBurstUsageDurationSeconds = &v
		}
		m.elem.Integral = &in
	}
	m.elem.Jobs = nil
	return m
}

// nodeCheck is a node actor's periodic liveness check.
type nodeCheck struct{}

// passRequest asks a tree's placer for one heartbeat's ledger work (see
// Ledger.pass). Its slices belong to the placer once sent.
type passRequest struct {
	// round numbers the node's passes; the result carries it back, so a
	// late answer to a heartbeat given up is not taken for the next one's.
	round   uint64
	node    scheduler.NodeID
	done    []finishing
	check   []scheduler.OperationID
	free    scheduler.Resources
	maxJobs int
	// total, jobs and now feed preemption: the node's resources, the jobs
	// that run on (sorted by id), the time of the heartbeat.
	total scheduler.Resources
	jobs  []preemption.NodeJob
	now   time.Time
	// hold: the stores take no writes (see StorageHealth), or the node is
	// not in the roster yet (see nodeActor.joinRoster), so the pass starts
	// and preempts nothing; it still releases and checks.
	hold bool
}

// passResult is the placer's answer to a passRequest.
type passResult struct {
	round      uint64
	ledger     *Ledger
	gone       []bool
	started    []startedJob
	interrupts []interruptOrder
}

// updateInTree changes an admitted operation's pool, weight and limits in
// one tree (a run-time update, or its rollback).
type updateInTree struct {
	id        scheduler.OperationID
	pool      scheduler.PoolID
	poolField string
	weight    *float64
	limits    scheduler.PartialResources
}

// updateInTreeResult answers updateInTree.
type updateInTreeResult struct {
	tree    string
	err     *pb.Error
	running bool
	pending *pb.PendingReason
}

// applyTrees asks the root to bring the trees to a new configuration.
type applyTrees struct {
	trees       []TreeSpec
	defaultTree string
	reply       func(error)
}

// reconfigureTree asks a tree actor to run a new configuration of itself.
type reconfigureTree struct{ spec TreeSpec }

// reconfigured answers reconfigureTree.
type reconfigured struct{ err error }

// countOperations asks a tree actor for a pool's operation count (running
// and pending in its subtree; "" is the whole tree).
type countOperations struct{ pool string }
