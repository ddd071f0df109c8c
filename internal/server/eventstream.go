package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/subjects"
)

// eventStreamConfig is the events stream's configuration. The stream is
// written in JetStream's asynchronous persist mode: the server acknowledges
// an event before it is flushed and never fsyncs it on its own account, so
// that Config.SyncAlways (the server-wide fsync of every write) costs only
// the operation and state buckets their fsyncs, not the thousands of job
// events a second a busy cluster makes. Events are observations the
// scheduler derives from its state, and nobody is told an event is stored:
// a power loss or a crash of the embedded server may lose the newest ones,
// never an acknowledged submission or state change (docs/OPERATIONS.md).
func eventStreamConfig(retention time.Duration, maxBytes int64) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name: subjects.EventsStream, Subjects: []string{subjects.EventsAll()},
		Retention: jetstream.LimitsPolicy, MaxAge: retention, MaxBytes: maxBytes,
		Discard: jetstream.DiscardOld, Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute,
		PersistMode: jetstream.AsyncPersistMode,
	}
}

// ensureEventStream creates the events stream or updates its limits. A
// stream's persist mode cannot change once it exists, so one made by an
// older sharetree (each event flushed before its acknowledgement) keeps
// its mode, with a warning: deleting it would lose the events it holds.
func ensureEventStream(ctx context.Context, js jetstream.JetStream, retention time.Duration, maxBytes int64, replicas int, logger *slog.Logger) error {
	cfg := eventStreamConfig(retention, maxBytes)
	cfg.Replicas = max(replicas, 1)
	if cfg.Replicas > 1 {
		// JetStream has no asynchronous persist mode for replicated
		// streams: their writes are acknowledged once a quorum has them.
		cfg.PersistMode = jetstream.DefaultPersistMode
	}
	s, err := js.Stream(ctx, cfg.Name)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
	case err != nil:
		return fmt.Errorf("events stream: %w", err)
	default:
		if old := s.CachedInfo().Config.PersistMode; old != cfg.PersistMode {
			logger.Warn("the events stream keeps its persist mode: a stream's mode cannot change; delete the stream (losing its events) to have each event no longer flushed before its acknowledgement",
				"stream", cfg.Name, "persist_mode", old.String(), "wanted", cfg.PersistMode.String())
			cfg.PersistMode = old
		}
	}
	if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("events stream: %w", err)
	}
	return nil
}
