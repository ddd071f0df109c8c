package actors

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// gatedStateStore records the trees' states it is given (puts, by the
// state's tree field) and every call in order (calls: "put X" and
// "delete T"); the first Put waits until release is closed, and fail makes
// a Put fail.
type gatedStateStore struct {
	mu      sync.Mutex
	puts    []string
	calls   []string
	started chan struct{}
	release chan struct{}
	fail    map[string]bool
}

func (s *gatedStateStore) PutTreeState(ctx context.Context, st *pb.TreeState) error {
	s.mu.Lock()
	first := len(s.puts) == 0
	s.puts = append(s.puts, st.GetTree())
	s.calls = append(s.calls, "put "+st.GetTree())
	s.mu.Unlock()
	if first {
		close(s.started)
		<-s.release
	}
	if s.fail[st.GetTree()] {
		return errors.New("bucket unavailable")
	}
	return nil
}

func (s *gatedStateStore) DeleteTreeState(ctx context.Context, tree string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "delete "+tree)
	return nil
}

// mustEnd fails the test unless writer w ends within ten seconds; what
// names it in the failure.
func mustEnd(t *testing.T, w *stateWriter, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !w.wait(ctx) {
		t.Fatalf("%s did not end", what)
	}
}

// TestStateWriterWritesTheLatestStateLast: states offered while a write
// runs replace each other; close's state is written after everything
// offered before it, and nothing after it.
func TestStateWriterWritesTheLatestStateLast(t *testing.T) {
	store := &gatedStateStore{started: make(chan struct{}), release: make(chan struct{}), fail: map[string]bool{"s1": true}}
	w := newStateWriter(store, "tree", time.Second, slog.New(slog.DiscardHandler), nil)
	w.offer(&pb.TreeState{Tree: "s1"})
	<-store.started // s1 is being written
	w.offer(&pb.TreeState{Tree: "s2"})
	w.offer(&pb.TreeState{Tree: "s3"})
	w.close(&pb.TreeState{Tree: "final"})
	w.offer(&pb.TreeState{Tree: "after close"})
	close(store.release)
	mustEnd(t, w, "the writer (after close)")
	if diff := cmp.Diff([]string{"s1", "final"}, store.puts); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if w.writes.Load() != 1 || w.failures.Load() != 1 {
		t.Errorf("writes %d, failures %d; want 1 and 1", w.writes.Load(), w.failures.Load())
	}
	w.close(nil) // twice is harmless
}

// TestStateWriterWithoutStore: with no store nothing is written, and
// close still ends the writer.
func TestStateWriterWithoutStore(t *testing.T) {
	w := newStateWriter(nil, "tree", time.Second, slog.New(slog.DiscardHandler), nil)
	w.offer(&pb.TreeState{Tree: "s1"})
	w.close(&pb.TreeState{Tree: "final"})
	mustEnd(t, w, "the writer without a store")
	if w.writes.Load() != 0 || w.failures.Load() != 0 {
		t.Fatalf("writes %d, failures %d; want 0 and 0", w.writes.Load(), w.failures.Load())
	}
}

// TestStateWriterDeletesARemovedTreesState: remove drops what was offered,
// lets the write in flight end, then deletes the stored state, and nothing
// is written after it (close's state neither); a writer started for the
// same tree afterwards writes only once the deletion is done.
func TestStateWriterDeletesARemovedTreesState(t *testing.T) {
	store := &gatedStateStore{started: make(chan struct{}), release: make(chan struct{})}
	logger := slog.New(slog.DiscardHandler)
	old := newStateWriter(store, "tree", time.Second, logger, nil)
	old.offer(&pb.TreeState{Tree: "s1"})
	<-store.started // s1 is being written
	old.offer(&pb.TreeState{Tree: "s2"})
	old.remove()
	old.offer(&pb.TreeState{Tree: "after remove"})
	// The tree is added again while the old writer still waits on s1.
	next := newStateWriter(store, "tree", time.Second, logger, old.done)
	next.offer(&pb.TreeState{Tree: "new"})
	old.close(&pb.TreeState{Tree: "close after remove"})
	close(store.release)
	mustEnd(t, old, "the removed tree's writer")
	testutil.WaitFor(t, 10*time.Second, "the new writer's first write", func() bool { return next.writes.Load() == 1 })
	next.close(nil)
	mustEnd(t, next, "the new writer")
	store.mu.Lock()
	defer store.mu.Unlock()
	if diff := cmp.Diff([]string{"put s1", "delete tree", "put new"}, store.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if old.writes.Load() != 1 || old.failures.Load() != 0 {
		t.Errorf("old writer: writes %d, failures %d; want 1 and 0", old.writes.Load(), old.failures.Load())
	}
	old.remove() // after close: nothing
}
