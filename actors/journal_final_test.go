package actors

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// downStore is an OperationStore that can be taken down: a write then
// waits for its deadline and fails. It keeps the statuses stored.
type downStore struct {
	mu     sync.Mutex
	down   bool
	stored map[string]*pb.OperationStatus
}

func (s *downStore) Put(ctx context.Context, st *pb.OperationStatus) error {
	s.mu.Lock()
	down := s.down
	if !down {
		if s.stored == nil {
			s.stored = map[string]*pb.OperationStatus{}
		}
		s.stored[st.GetId()] = st
	}
	s.mu.Unlock()
	if down {
		<-ctx.Done()
		return errors.New("store down")
	}
	return nil
}

func (*downStore) List(context.Context) ([]*pb.OperationStatus, error) { return nil, nil }

func (s *downStore) setDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

func (s *downStore) get(id string) *pb.OperationStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stored[id]
}

// A completion whose operation finished is acknowledged only once the
// journal or the operation's final status stored it: the operation leaving
// its tree's ledger (which it does as it finishes, before its final status
// is written) is no reason. Acknowledged with the journal and the store
// down, the completion was in no stored state: a restart revived the
// operation from its last stored (running) status and ran the job again.
func TestFinishedOperationsCompletionWaitsForItsFinalStatus(t *testing.T) {
	j := newMemJournal()
	store := &downStore{}
	h := startHarness(t, func(d *Deps) { d.Journal, d.Store = j, store })
	op, started := h.submitStarted(1)
	a := started[0]

	// NATS is down: neither the journal nor the store can be written. The
	// job completes, and with it the operation.
	j.setDown(true)
	store.setDown(true)
	completed := map[string]pb.JobState{a: pb.JobState_JOB_STATE_COMPLETED}
	if got := acks(h.beat("n1", nil, completed)); len(got) != 0 {
		t.Fatalf("acknowledged %v with the journal down", got)
	}
	testutil.WaitFor(t, 10*time.Second, "the operation to complete and leave its tree", func() bool {
		return h.status(op).GetState() == pb.OperationState_OPERATION_STATE_COMPLETED &&
			!h.sys.dir.Load().trees[0].ledger.hasOperation(scheduler.OperationID(op))
	})
	h.clock.advance(h.sys.cfg.RequestTimeout + time.Second)
	got := acks(h.beat("n1", nil, completed))
	stored := store.get(op)
	if slices.Contains(got, a) && len(j.jobIDs()) == 0 && stored.GetJobs().GetCompleted() == 0 {
		t.Fatalf("completion %s acknowledged while neither the journal nor a stored status has it (stored status: %v, %d completed)",
			a, stored.GetState(), stored.GetJobs().GetCompleted())
	}

	// NATS is back: the completion is stored, then acknowledged.
	j.setDown(false)
	store.setDown(false)
	testutil.WaitFor(t, 20*time.Second, "the completion to be acknowledged once stored", func() bool {
		return slices.Contains(acks(h.beat("n1", nil, completed)), a)
	})
}
