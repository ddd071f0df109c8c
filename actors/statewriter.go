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
//
// When the tree is removed from the configuration (remove), the writer
// deletes the stored state instead, after any write in flight, and writes
// nothing more. A writer started for a tree of the same name after that
// waits for this one to end before its first write (after), so that the
// deletion never lands on the new tree's state.
type stateWriter struct {
	store   StateStore
	timeout time.Duration
	logger  *slog.Logger
	tree    string
	after   <-chan struct{} // nil, or the done of the tree's previous writer

	mu      sync.Mutex
	next    *pb.TreeState // offered, not yet taken
	closed  bool
	removed bool          // the state is to be deleted; nothing more is written
	deleted bool          // the deletion was taken (done or failed)
	wake    chan struct{} // capacity 1: a state (or the deletion) is waiting
	done    chan struct{} // closed when the last write ended

	writes, failures atomic.Uint64
}

// newStateWriter starts the writer of tree's state; a nil store gives a
// writer that writes nothing (offer and close still work). after, when not
// nil, is the done channel of the tree's previous writer: nothing is
// written before it is closed.
func newStateWriter(store StateStore, tree string, timeout time.Duration, logger *slog.Logger, after <-chan struct{}) *stateWriter {
	w := &stateWriter{store: store, timeout: timeout, logger: logger, tree: tree, after: after,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	go w.run()
	return w
}

// offer hands the writer a state to write; it never blocks. After close or
// remove, it does nothing.
func (w *stateWriter) offer(st *pb.TreeState) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.removed {
		return
	}
	w.next = st
	w.signal()
}

// remove turns the writer's last action into deleting the tree's stored
// state: what was offered and not yet taken is dropped, a write in flight
// ends first, and later offers (close's state included) are ignored. It
// never blocks. Call it before the tree actor stops, when the tree is
// removed from the configuration (not when the scheduler stops).
func (w *stateWriter) remove() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.removed {
		return
	}
	w.removed, w.next = true, nil
	w.signal()
}

// signal wakes the writer up; w.mu is held and the writer is not closed.
func (w *stateWriter) signal() {
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
	if w.after != nil {
		<-w.after // bounded: the previous writer ends after its last write's timeout
	}
	for range w.wake {
		w.mu.Lock()
		st := w.next
		w.next = nil
		del := w.removed && !w.deleted
		w.deleted = w.deleted || del
		w.mu.Unlock()
		if w.store == nil {
			continue
		}
		if del {
			w.delete()
			continue
		}
		if st == nil {
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

// delete deletes the tree's stored state (see remove).
func (w *stateWriter) delete() {
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	if err := w.store.DeleteTreeState(ctx, w.tree); err != nil {
		w.failures.Add(1)
		w.logger.Warn("removed tree's state not deleted; it is deleted when the scheduler next starts without the tree", "tree", w.tree, "err", err)
		return
	}
	w.logger.Info("removed tree's state deleted", "tree", w.tree)
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
