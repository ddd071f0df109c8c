package actors

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// submitted is one submission's answer.
type submitted struct {
	id string
	e  *pb.Error
}

// submitAsync submits spec with request id rid; the answer comes on the
// channel returned.
func (h *adoptHarness) submitAsync(spec *pb.OperationSpec, rid string) <-chan submitted {
	out := make(chan submitted, 1)
	h.sys.Submit(&SubmitOperation{Spec: spec, RequestID: rid, Reply: func(r *pb.StartOperationResponse, e *pb.Error) {
		out <- submitted{r.GetOperationId(), e}
	}})
	return out
}

// submitWith submits spec with request id rid and waits for the answer.
func (h *adoptHarness) submitWith(spec *pb.OperationSpec, rid string) submitted {
	h.t.Helper()
	return await(h.t, h.submitAsync(spec, rid), "the submission's answer")
}

// heldFailStore holds its first write until release is closed, then fails
// it; later writes store.
type heldFailStore struct {
	release chan struct{}
	puts    atomic.Int32
}

func (s *heldFailStore) Put(ctx context.Context, _ *pb.OperationStatus) error {
	if s.puts.Add(1) > 1 {
		return nil
	}
	select {
	case <-s.release:
		return errors.New("stream unavailable")
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (*heldFailStore) List(context.Context) ([]*pb.OperationStatus, error) { return nil, nil }

// Submissions with one request id start one operation: one that comes
// while the first is being stored waits and gets its answer, one after it
// gets the operation's id at once. The same request id with another spec,
// and a request id that is not one, are refused; submissions without a
// request id each start an operation.
func TestSubmitWithARequestIDStartsOneOperation(t *testing.T) {
	store := &heldStore{release: make(chan struct{})}
	h := startHarness(t, func(d *Deps) { d.Store = store })
	spec := revivedOp("", 2).GetSpec()

	first := h.submitAsync(spec, "nightly:2026-11-28")
	testutil.WaitFor(t, 10*time.Second, "the first write to wait", func() bool { return store.waiting.Load() > 0 })
	second := h.submitAsync(spec, "nightly:2026-11-28")
	select {
	case a := <-second:
		t.Fatalf("the second submission was answered %v before the operation was stored", a)
	default:
	}
	close(store.release)
	a, b := await(t, first, "the first answer"), await(t, second, "the second answer")
	if a.e != nil || b.e != nil || a.id == "" || a.id != b.id {
		t.Fatalf("answers %v and %v, want the same operation", a, b)
	}
	if c := h.submitWith(spec, "nightly:2026-11-28"); c.e != nil || c.id != a.id {
		t.Errorf("a third submission: %v, want %s", c, a.id)
	}
	if st := h.status(a.id); st.GetRequestId() != "nightly:2026-11-28" {
		t.Errorf("status request id %q", st.GetRequestId())
	}
	ops, _ := h.list(&pb.ListOperationsRequest{}, 0)
	if n := len(ops.GetOperations()); n != 1 {
		t.Errorf("%d operations listed, want 1", n)
	}

	other := revivedOp("", 3).GetSpec()
	if c := h.submitWith(other, "nightly:2026-11-28"); c.e.GetCode() != pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT || c.e.GetField() != "request_id" {
		t.Errorf("another spec with the request id: %v, want INVALID_ARGUMENT on request_id", c)
	}
	if c := h.submitWith(spec, "not an id"); c.e.GetCode() != pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT || c.e.GetField() != "request_id" {
		t.Errorf("a bad request id: %v, want INVALID_ARGUMENT on request_id", c)
	}
	x, y := h.submitWith(spec, ""), h.submitWith(spec, "")
	if x.e != nil || y.e != nil || x.id == y.id || x.id == a.id {
		t.Errorf("submissions without a request id: %v, %v; want two new operations", x, y)
	}
}

// An operation whose first write fails was never stored: the submissions
// that waited for it get the refusal, and a retry with the same request
// id starts an operation.
func TestSubmitRetryAfterAFailedWriteStartsTheOperation(t *testing.T) {
	store := &heldFailStore{release: make(chan struct{})}
	h := startHarness(t, func(d *Deps) { d.Store = store })
	spec := revivedOp("", 1).GetSpec()
	first := h.submitAsync(spec, "r-1")
	testutil.WaitFor(t, 10*time.Second, "the first write", func() bool { return store.puts.Load() > 0 })
	second := h.submitAsync(spec, "r-1")
	close(store.release)
	for _, ch := range []<-chan submitted{first, second} {
		if a := await(t, ch, "an answer"); a.e.GetCode() != pb.ErrorCode_ERROR_CODE_UNAVAILABLE {
			t.Errorf("answer %v, want UNAVAILABLE (not stored)", a)
		}
	}
	retry := h.submitWith(spec, "r-1")
	if retry.e != nil || retry.id == "" {
		t.Fatalf("the retry: %v, want a new operation", retry)
	}
	if st := h.status(retry.id); st.GetState() == pb.OperationState_OPERATION_STATE_FAILED {
		t.Errorf("the retry's operation is %v", st.GetState())
	}
}

// A restarted scheduler knows the request ids of the operations it
// revived, finished or not.
func TestRevivedOperationsKeepTheirRequestIDs(t *testing.T) {
	running := revivedOp("op-1-1", 2)
	running.RequestId = "r-running"
	done := revivedOp("op-1-2", 2)
	done.State, done.RequestId = pb.OperationState_OPERATION_STATE_COMPLETED, "r-done"
	h := startRevived(t, running, done)
	testutil.WaitFor(t, 10*time.Second, "the revived operation to be scheduled", func() bool {
		return h.sys.dir.Load().trees[0].ledger.hasOperation("op-1-1")
	})
	for rid, want := range map[string]string{"r-running": "op-1-1", "r-done": "op-1-2"} {
		if a := h.submitWith(revivedOp("", 2).GetSpec(), rid); a.e != nil || a.id != want {
			t.Errorf("request id %s: %v, want %s", rid, a, want)
		}
	}
}
