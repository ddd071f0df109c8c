package treeconf

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/subjects"
)

// Default coalescing of Watch.
const (
	// DefaultQuiet is how long the bucket must stay unchanged before a
	// snapshot is emitted.
	DefaultQuiet = 100 * time.Millisecond
	// DefaultMaxDelay bounds how long changes wait under a steady stream of
	// writes.
	DefaultMaxDelay = time.Second
)

// WatchOption configures Watch.
type WatchOption func(*watchOptions) error

type watchOptions struct {
	quiet, maxDelay time.Duration
}

// WithCoalescing sets how long the bucket must stay quiet before a snapshot
// is emitted, and the longest a change may wait for one (maxDelay >=
// quiet > 0).
func WithCoalescing(quiet, maxDelay time.Duration) WatchOption {
	return func(o *watchOptions) error {
		if quiet <= 0 || maxDelay < quiet {
			return fmt.Errorf("%w: coalescing quiet %s, max delay %s: want 0 < quiet <= max delay", ErrInvalid, quiet, maxDelay)
		}
		o.quiet, o.maxDelay = quiet, maxDelay
		return nil
	}
}

// Watch emits a full, consistent Snapshot of the configuration: first the
// current one (read as Load reads it), then one after every burst of changes. Changes are coalesced:
// a snapshot is emitted once the bucket has been quiet for DefaultQuiet, or
// DefaultMaxDelay after the first change not yet emitted, whichever comes
// first (see WithCoalescing), so an apply that writes many keys produces
// one snapshot or a few, never one per key. Each snapshot reflects every
// write up to its Revision, in order (it is built from the watcher's ordered
// stream of changes, not by re-reading keys).
//
// The channel holds at most one snapshot: when the reader is slow, an
// unread snapshot is replaced by the newer one (every snapshot is complete,
// so nothing is lost but intermediate states). The channel is closed when
// ctx ends or the watcher stops (the connection closed); a reader that
// wants to go on calls Watch again.
func (s *Store) Watch(ctx context.Context, opts ...WatchOption) (<-chan Snapshot, error) {
	o := watchOptions{quiet: DefaultQuiet, maxDelay: DefaultMaxDelay}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	w, err := s.kv.WatchAll(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: watch %s: %w", ErrStore, subjects.ConfigBucket, err)
	}
	out := make(chan Snapshot, 1)
	go s.watchLoop(ctx, w, out, o)
	return out, nil
}

func (s *Store) watchLoop(ctx context.Context, w jetstream.KeyWatcher, out chan Snapshot, o watchOptions) {
	defer close(out)
	defer func() { _ = w.Stop() }()
	st := newState()
	initial := true
	var cu catchUp
	var (
		quiet, deadline *time.Timer
		quietC, maxC    <-chan time.Time
		emitted         uint64
	)
	emit := func() {
		if quiet != nil {
			quiet.Stop()
			deadline.Stop()
			quiet, deadline, quietC, maxC = nil, nil, nil, nil
		}
		if !initial && st.rev == emitted {
			return
		}
		emitted = st.rev
		snap := st.snapshot()
		select {
		case out <- snap:
		default:
			select { // replace the unread snapshot
			case <-out:
			default:
			}
			out <- snap
		}
		s.logger.Debug("configuration snapshot", "revision", snap.Revision, "trees", len(snap.Trees))
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-quietC:
			emit()
		case <-maxC:
			emit()
		case e, ok := <-w.Updates():
			if !ok {
				s.logger.Warn("configuration watcher stopped")
				return
			}
			// Snapshots copy what they hold out of the state, so the
			// state is changed in place.
			if e != nil && e.Operation() == jetstream.KeyValuePut {
				st.put(e.Key(), e.Value(), e.Revision())
			} else if e != nil {
				st.del(e.Key(), e.Revision())
			}
			if initial {
				done, err := cu.observe(ctx, s.kv, e)
				if err != nil {
					s.logger.Warn("configuration watcher failed", "err", err)
					return
				}
				if done {
					emit()
					initial = false
				}
				continue
			}
			if e == nil {
				continue
			}
			if quiet == nil {
				quiet, deadline = time.NewTimer(o.quiet), time.NewTimer(o.maxDelay)
				quietC, maxC = quiet.C, deadline.C
			} else {
				quiet.Reset(o.quiet)
			}
		}
	}
}
