package actors

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// A fresh operation's jobs start only once its first status write is
// stored: until then its submitter may yet be told it does not exist
// (the write fails), and a retried submission would run the same work
// again.
func TestNoJobStartsBeforeTheOperationIsStored(t *testing.T) {
	store := &heldStore{release: make(chan struct{})}
	h := startHarness(t, func(d *Deps) { d.Store = store })
	h.beat("n1", nil, nil) // the node is known
	submitted := make(chan string, 1)
	h.sys.Submit(&SubmitOperation{Spec: revivedOp("", 2).GetSpec(), Reply: func(r *pb.StartOperationResponse, e *pb.Error) {
		if e != nil {
			t.Errorf("submit: %v", e)
		}
		submitted <- r.GetOperationId()
	}})
	testutil.WaitFor(t, 10*time.Second, "the first status write to be under way", func() bool { return store.waiting.Load() == 1 })
	for range 50 {
		h.clock.advance(10 * time.Millisecond)
		if s := startIDs(h.beat("n1", nil, nil)); len(s) != 0 {
			t.Fatalf("jobs %v started before their operation was stored", s)
		}
	}
	close(store.release)
	op := await(t, submitted, "the submission's answer")
	var started []string
	testutil.WaitFor(t, 10*time.Second, "the jobs to start once stored", func() bool {
		h.clock.advance(10 * time.Millisecond)
		started = append(started, startIDs(h.beat("n1", started, nil))...)
		return len(started) == 2
	})
	h.waitJobs(op, 2, 0)
}

// lostAckStore stores every write, but answers the first with a timeout:
// a write whose acknowledgement was lost.
type lostAckStore struct {
	mu     sync.Mutex
	puts   int
	stored map[string]*pb.OperationStatus
}

func (s *lostAckStore) Put(_ context.Context, st *pb.OperationStatus) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.puts++
	if s.stored == nil {
		s.stored = map[string]*pb.OperationStatus{}
	}
	s.stored[st.GetId()] = st
	if s.puts == 1 {
		return fmt.Errorf("write: %w", context.DeadlineExceeded)
	}
	return nil
}

func (*lostAckStore) List(context.Context) ([]*pb.OperationStatus, error) { return nil, nil }

func (s *lostAckStore) get(id string) *pb.OperationStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stored[id]
}

// A submission whose first write timed out is refused UNAVAILABLE; as that
// write may have been stored after all, the operation is written once more,
// failed and without its request id, so that a restart does not revive
// it (a retry of the submission is a new operation).
func TestAnUnacknowledgedFirstWriteIsOverwritten(t *testing.T) {
	store := &lostAckStore{}
	h := startHarness(t, func(d *Deps) { d.Store = store })
	answer := make(chan *pb.Error, 1)
	var id string
	h.sys.Submit(&SubmitOperation{Spec: revivedOp("", 1).GetSpec(), RequestID: "r-1", Reply: func(r *pb.StartOperationResponse, e *pb.Error) {
		answer <- e
	}})
	if e := await(t, answer, "the submission's answer"); e.GetCode() != pb.ErrorCode_ERROR_CODE_UNAVAILABLE {
		t.Fatalf("answer %v, want UNAVAILABLE", e)
	}
	testutil.WaitFor(t, 10*time.Second, "the operation to be written again", func() bool {
		store.mu.Lock()
		defer store.mu.Unlock()
		for k := range store.stored {
			id = k
		}
		return store.puts >= 2
	})
	st := store.get(id)
	if st.GetState() != pb.OperationState_OPERATION_STATE_FAILED || st.GetRequestId() != "" || !strings.Contains(st.GetError().GetMessage(), "not acknowledged") {
		t.Errorf("stored %v %q %v; want failed, no request id, a message saying it was not acknowledged", st.GetState(), st.GetRequestId(), st.GetError())
	}
}
