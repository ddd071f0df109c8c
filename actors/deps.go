package actors

import (
	"context"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// EventSink publishes events. Publish must not block for long: an
// implementation buffers and publishes asynchronously, dropping and counting
// when its buffer is full (events are observability, not state).
type EventSink interface {
	Publish(tree string, kind subjects.EventKind, ev *pb.Event)
}

// SignalSink delivers job signals to a node between heartbeats (best effort:
// the next heartbeat response repeats anything still pending).
type SignalSink interface {
	Signal(node string, sig *pb.JobSignal)
}

// OperationStore persists operations. Put is called from a goroutine, never
// from Receive; an operation is acknowledged to its submitter only after its
// first Put succeeded.
type OperationStore interface {
	Put(ctx context.Context, st *pb.OperationStatus) error
	List(ctx context.Context) ([]*pb.OperationStatus, error)
}

// StateStore persists each tree's fair-share state across scheduler
// restarts (the integral pools' accumulated volumes; see TreeSpec.Volumes
// for how they come back). PutTreeState is called from a goroutine of the
// tree's own, never from Receive, one call at a time per tree, each with
// a newer state than the last.
type StateStore interface {
	PutTreeState(ctx context.Context, st *pb.TreeState) error
	// DeleteTreeState deletes the tree's stored state (deleting one that
	// is not there is not an error). It is called once, after the tree's
	// last PutTreeState ended, when the tree is removed from the
	// configuration: a tree added again later starts from its
	// configuration's volumes.
	DeleteTreeState(ctx context.Context, tree string) error
}

// CompletionJournal stores completed and failed jobs ahead of their
// operations' status writes, so that a node's report of a completed or
// failed job is acknowledged only once it is stored (see journal.go).
// Append and Trim are called from the journal's goroutine, one call at a
// time; Load once, from Start.
type CompletionJournal interface {
	// Append stores one batch of completed and of failed jobs' ids and
	// returns its sequence number (increasing from batch to batch).
	Append(ctx context.Context, completed, failed []string) (uint64, error)
	// Trim drops the batches numbered below seq: every job in them is in
	// a stored status, or of an operation that is over.
	Trim(ctx context.Context, seq uint64) error
	// Load returns the stored batches in order. A batch that cannot be
	// read is left out of it, with a warning: its completed jobs run
	// again, its failures are not counted.
	Load(ctx context.Context) ([]JournalBatch, error)
}

// StorageHealth reports whether the stores take writes. While they do not,
// the scheduler fails closed: it starts no job and interrupts none for
// preemption (decisions it could not record), and leaves running jobs
// alone; heartbeats are answered, and finished jobs wait for the journal
// as ever. Available is called on every heartbeat: it must be cheap.
type StorageHealth interface {
	Available() bool
}

// NodeRoster stores the nodes that may run jobs of the cluster, so that a
// scheduler that takes over knows which nodes to wait for before its
// revived operations start jobs again (see revival): a node is added
// before it gets its first job, and removed when it is declared lost.
// Add and Remove are called from goroutines, each node's in order; Load
// once, from Start.
type NodeRoster interface {
	Load(ctx context.Context) ([]string, error)
	Add(ctx context.Context, node string) error
	Remove(ctx context.Context, node string) error
}

// JournalBatch is one stored batch of the completions journal: the ids of
// jobs that completed (JobIDs) and that failed (FailedJobIDs).
type JournalBatch struct {
	Seq          uint64
	JobIDs       []string
	FailedJobIDs []string
}

// Deps are the live scheduler's connections to the outside world.
type Deps struct {
	Events  EventSink
	Signals SignalSink
	Store   OperationStore
	// State persists the trees' fair-share state; nil persists nothing
	// (tests that do not restart the scheduler).
	State StateStore
	// Journal stores completed and failed jobs before their finish is
	// acknowledged; nil acknowledges a finish at once (a completion
	// acknowledged and not yet in its operation's stored status then runs
	// again after a crash, and such a failure is not counted).
	Journal CompletionJournal
	// Storage says whether the stores take writes (nil: always; see
	// StorageHealth).
	Storage StorageHealth
	// Roster keeps the nodes that may run jobs (nil: none is kept, nodes
	// get jobs at once, and a restarted scheduler's revival lasts its
	// whole JobRevivalTimeout).
	Roster NodeRoster
	// Epoch is the leader epoch carried by every command, and part of the
	// ids of the jobs this scheduler starts (see jobRef).
	Epoch uint64
}
