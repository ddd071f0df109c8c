package server

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/natsembed"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// EventsSettled reports whether every event the server has accepted so far
// is stored in the events stream (or failed and counted): the tests read
// the stream once it is.
func (s *Server) EventsSettled() bool { return s.events.settled() }

// EventLosses returns the events dropped before publishing and the
// publishes that failed.
func (s *Server) EventLosses() (dropped, failed uint64) { return s.events.stats() }

// PutTreeState stores st in kv (the scheduler bucket) as the scheduler
// does (kvState.PutTreeState).
func PutTreeState(ctx context.Context, kv jetstream.KeyValue, st *pb.TreeState) error {
	return (&kvState{kv: kv}).PutTreeState(ctx, st)
}

// EmbeddedSyncAlways reports whether the embedded NATS server fsyncs every
// JetStream write (false without an embedded server).
func (s *Server) EmbeddedSyncAlways() bool {
	return s.embedded != nil && s.embedded.JetStreamConfig().SyncAlways
}

// EventStreamConfig is the events stream's configuration (eventStreamConfig).
var EventStreamConfig = eventStreamConfig

// Crash stops the server as a killed process leaves it as far as the
// others can tell: it stops renewing the leader lease without releasing
// it, so that a standby takes over only when the lease runs out.
func (s *Server) Crash() {
	s.lease.Abandon()
	s.Close()
}

// FencedWrites makes one write of each kind the actors make, through this
// server's fences: an operation's status, a tree's state, a journal batch.
func (s *Server) FencedWrites(ctx context.Context, op *pb.OperationStatus, tree *pb.TreeState) (opErr, treeErr, journalErr error) {
	opErr = s.store.Put(ctx, op)
	treeErr = s.state.PutTreeState(ctx, tree)
	_, journalErr = s.journal.Append(ctx, []string{"stale.main.0.0.1"}, nil)
	return opErr, treeErr, journalErr
}

// PauseLease stops renewing the leader lease until resume is called, as if
// the process were stopped (leader.Lease.Pause).
func (s *Server) PauseLease() (resume func()) { return s.lease.Pause() }

// Serving reports whether the scheduler service still takes requests.
func (s *Server) Serving() bool { return !s.svc.Stopped() }

// FencedWriteCount is sharetree_fenced_writes_total.
func (s *Server) FencedWriteCount() uint64 { return s.fenced.Load() }

// StorageAvailable reports whether the server holds the storage for
// available (sharetree_storage_available).
func (s *Server) StorageAvailable() bool { return s.storage.Available() }

// Embedded is the embedded NATS server (nil with Config.NATSURL).
func (s *Server) Embedded() *natsembed.Server { return s.embedded }

// ConnectedServer is the id of the NATS server the scheduler's main
// connection uses.
func (s *Server) ConnectedServer() string { return s.nc.nc.ConnectedServerId() }
