package server

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// EventsSettled reports whether every event the server has accepted so far
// is stored in the events stream (or failed and counted): the tests read
// the stream once it is.
func (s *Server) EventsSettled() bool { return s.events.settled() }

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
