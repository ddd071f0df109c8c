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

// Deps are the live scheduler's connections to the outside world.
type Deps struct {
	Events  EventSink
	Signals SignalSink
	Store   OperationStore
	// Epoch is the leader epoch carried by every command.
	Epoch uint64
}
