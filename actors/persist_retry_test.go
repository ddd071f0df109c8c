package actors

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// refusingStore refuses every write at once while down (as JetStream does
// when it is disabled or the bucket is full) and counts the refusals.
type refusingStore struct {
	mu      sync.Mutex
	down    bool
	refused atomic.Int32
	stored  map[string]*pb.OperationStatus
}

func (s *refusingStore) Put(_ context.Context, st *pb.OperationStatus) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		s.refused.Add(1)
		return errors.New("jetstream not enabled")
	}
	if s.stored == nil {
		s.stored = map[string]*pb.OperationStatus{}
	}
	s.stored[st.GetId()] = st
	return nil
}

func (*refusingStore) List(context.Context) ([]*pb.OperationStatus, error) { return nil, nil }

func (s *refusingStore) setDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

func (s *refusingStore) state(id string) pb.OperationState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stored[id].GetState()
}

// An operation whose status write is refused tries again after a wait that
// doubles (100ms, 200ms, ...), not at once: a store that refuses at once
// would otherwise take a write a few microseconds apart from every
// operation. Its status is stored once the store is back.
func TestRefusedStatusWritesBackOff(t *testing.T) {
	store := &refusingStore{}
	h := startHarness(t, func(d *Deps) { d.Store = store })
	op, started := h.submitStarted(1)
	store.setDown(true)
	h.beat("n1", nil, map[string]pb.JobState{started[0]: pb.JobState_JOB_STATE_COMPLETED})
	testutil.WaitFor(t, 30*time.Second, "four refused writes", func() bool { return store.refused.Load() >= 4 })
	// Polled every few milliseconds: tries a few microseconds apart would
	// be in the thousands by now; with the backoff they are 4, maybe 5.
	if n := store.refused.Load(); n > 6 {
		t.Fatalf("%d writes refused by the time 4 were seen: the operation does not wait between tries", n)
	}
	store.setDown(false)
	testutil.WaitFor(t, 30*time.Second, "the final status to be stored once the store is back", func() bool {
		return store.state(op) == pb.OperationState_OPERATION_STATE_COMPLETED
	})
}
