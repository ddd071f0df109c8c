package actors

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// stateWriter persists one tree's fair-share state (its integral pools'
// accumulated volumes) through the StateStore, on a goroutine of its own:
// the tree actor offers the latest state without waiting, and the writer
// writes the latest one offered, one write at a time, so that a newer state
// is never overwritten by an older one still in flight. States offered
// while a write runs replace each other; only the last is written.
type stateWriter struct {
	store   StateStore
	timeout time.Duration
	logger  *slog.Logger
	tree    string

	mu     sync.Mutex
	next   *pb.TreeState // offered, not yet taken
	closed bool
	wake   chan struct{} // capacity 1: a state is waiting
	done   chan struct{} // closed when the last write ended

	writes, failures atomic.Uint64
}

// newStateWriter starts the writer of tree's state; a nil store gives a
// writer that writes nothing (offer and close still work).
func newStateWriter(store StateStore, tree string, timeout time.Duration, logger *slog.Logger) *stateWriter {
	w := &stateWriter{store: store, timeout: timeout, logger: logger, tree: tree,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	go w.run()
	return w
}

// offer hands the writer a state to write; it never blocks. After close,
// it does nothing.
func (w *stateWriter) offer(st *pb.TreeState) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.next = st
	select {
	case w.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// close offers a last state (nil: none) and lets the writer end once it
// wrote it; wait waits for that.
func (w *stateWriter) close(final *pb.TreeState) {
	if final != nil {
		w.offer(final)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.wake)
	}
}

// wait waits until the writer ended (after close) or the context is done,
// and reports whether it ended.
func (w *stateWriter) wait(ctx context.Context) bool {
	select {
	case <-w.done:
		return true
	case <-ctx.Done():
		return false
	}
}

// ended reports whether the writer ended (after close).
func (w *stateWriter) ended() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

func (w *stateWriter) run() {
	defer close(w.done)
	for range w.wake {
		w.mu.Lock()
		st := w.next
		w.next = nil
		w.mu.Unlock()
		if st == nil || w.store == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
		err := w.store.PutTreeState(ctx, st)
		cancel()
		if err != nil {
			w.failures.Add(1)
			w.logger.Warn("tree state not persisted; the next write carries a newer one", "tree", w.tree, "err", err)
			continue
		}
		w.writes.Add(1)
	}
}

// treeStateOf is what a tree persists of the engine's state: the pools
// with a non-zero accumulated volume, by name, as of the update at now.
func treeStateOf(tree string, now time.Time, st *scheduler.State) *pb.TreeState {
	out := &pb.TreeState{Tree: tree, Time: timestamppb.New(now)}
	names := make([]scheduler.PoolID, 0, len(st.Pools))
	for name, ps := range st.Pools {
		if !ps.AccumulatedVolume.IsZero() {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		out.Pools = append(out.Pools, &pb.PoolVolume{Pool: string(name), AccumulatedVolume: wire.ToResources(st.Pools[name].AccumulatedVolume)})
	}
	return out
}
