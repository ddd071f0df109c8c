package actors

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// gateStore stores at once until closed; then its writes wait for release
// (or their deadline) and the last status it was given is kept.
type gateStore struct {
	closed  atomic.Bool
	release chan struct{}
	waiting atomic.Int32
	last    atomic.Pointer[pb.OperationStatus]
}

func (s *gateStore) Put(ctx context.Context, st *pb.OperationStatus) error {
	if s.closed.Load() {
		s.waiting.Add(1)
		defer s.waiting.Add(-1)
		select {
		case <-s.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.last.Store(st)
	return nil
}

func (*gateStore) List(context.Context) ([]*pb.OperationStatus, error) { return nil, nil }

// An abort is answered only once the aborted status is stored: an
// acknowledged abort is not undone by a crash (the operation would be
// revived and run again).
func TestAbortAnsweredOnceStored(t *testing.T) {
	store := &gateStore{release: make(chan struct{})}
	h := startHarness(t, func(d *Deps) { d.Store = store }, revivedOp("op-1-1", 2))
	ledger := h.sys.dir.Load().trees[0].ledger
	testutil.WaitFor(t, 10*time.Second, "the revived operation to be scheduled", func() bool { return ledger.hasOperation("op-1-1") })

	store.closed.Store(true)
	aborted := make(chan *pb.Error, 1)
	h.sys.Abort(&AbortOperation{ID: "op-1-1", Reply: func(_ *pb.AbortOperationResponse, e *pb.Error) { aborted <- e }})
	testutil.WaitFor(t, 10*time.Second, "the aborted status's write", func() bool { return store.waiting.Load() > 0 })
	select {
	case e := <-aborted:
		t.Fatalf("abort answered (error %v) while its status is not stored", e)
	default:
	}
	close(store.release)
	if e := await(t, aborted, "the abort's answer"); e != nil {
		t.Fatalf("abort: %v", e)
	}
	if got := store.last.Load().GetState(); got != pb.OperationState_OPERATION_STATE_ABORTED {
		t.Errorf("stored state %v when the abort was answered, want aborted", got)
	}
}
