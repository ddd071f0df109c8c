package client

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// scheduler answers submissions on a real NATS server as answer says
// (nil: no answer, see respond), recording the request ids it saw.
type scheduler struct {
	mu   sync.Mutex
	seen []string
}

func (s *scheduler) serve(t *testing.T, nc *nats.Conn, answer func(n int) (*pb.StartOperationResponse, *pb.Error)) {
	t.Helper()
	respond(t, nc, subjects.OpSubmit(), func(n int, data []byte) (proto.Message, *pb.Error) {
		req := &pb.StartOperationRequest{}
		if err := proto.Unmarshal(data, req); err != nil {
			t.Errorf("decode: %v", err)
			return nil, nil
		}
		s.mu.Lock()
		s.seen = append(s.seen, req.GetRequestId())
		s.mu.Unlock()
		resp, e := answer(n)
		if resp == nil {
			return nil, e // not a typed nil in the interface
		}
		return resp, e
	})
}

func (s *scheduler) requestIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// A submission that gets no answer, or UNAVAILABLE, is sent again with
// the same request id; one refused otherwise is not; after submitTries
// tries the last error is returned.
func TestSubmitRetriesWithTheSameRequestID(t *testing.T) {
	srv := testutil.StartNATS(t)
	spec := &pb.OperationSpec{Pool: "p"}
	for _, c := range []struct {
		name    string
		answer  func(n int) (*pb.StartOperationResponse, *pb.Error)
		tries   int
		wantErr bool
	}{
		{"no answer, then an answer", func(n int) (*pb.StartOperationResponse, *pb.Error) {
			if n == 1 {
				return nil, nil
			}
			return &pb.StartOperationResponse{OperationId: "op-1-1"}, nil
		}, 2, false},
		{"unavailable, then an answer", func(n int) (*pb.StartOperationResponse, *pb.Error) {
			if n < 3 {
				return nil, &pb.Error{Code: pb.ErrorCode_ERROR_CODE_UNAVAILABLE, Message: "not stored"}
			}
			return &pb.StartOperationResponse{OperationId: "op-1-1"}, nil
		}, 3, false},
		{"refused", func(int) (*pb.StartOperationResponse, *pb.Error) {
			return nil, &pb.Error{Code: pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, Field: "spec.pool", Message: "no pool p"}
		}, 1, true},
		{"never an answer", func(int) (*pb.StartOperationResponse, *pb.Error) { return nil, nil }, submitTries, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			nc := testutil.Connect(t, srv)
			s := &scheduler{}
			s.serve(t, nc, c.answer)
			cl := New(testutil.Connect(t, srv), 300*time.Millisecond)
			id, err := cl.Submit(context.Background(), spec)
			if (err != nil) != c.wantErr || !c.wantErr && id != "op-1-1" {
				t.Errorf("Submit = %q, %v", id, err)
			}
			seen := s.requestIDs()
			if len(seen) != c.tries {
				t.Errorf("%d tries, want %d", len(seen), c.tries)
			}
			for _, rid := range seen {
				if rid != seen[0] || wire.ValidateRequestID(rid) != nil {
					t.Errorf("request ids %v, want one valid id in every try", seen)
					break
				}
			}
			var api *APIError
			if c.name == "refused" && (!errors.As(err, &api) || api.Code() != pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT) {
				t.Errorf("refused: %v, want the refusal", err)
			}
		})
	}
}

func TestRetriedDurationCoversEveryTry(t *testing.T) {
	if got, want := RetriedDuration(time.Second), 3*time.Second+submitBackoff+2*submitBackoff; got != want {
		t.Errorf("RetriedDuration(1s) = %v, want %v", got, want)
	}
}

// respond answers requests on subject as answer says for the n-th, given
// its payload (nil, nil: no answer, as a scheduler too slow or a lost
// reply), and counts them. The subscription is flushed: the client asks
// on another connection, and the server must hold it before that.
func respond(t *testing.T, nc *nats.Conn, subject string, answer func(n int, data []byte) (proto.Message, *pb.Error)) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
		resp, e := answer(int(n.Add(1)), m.Data)
		if resp == nil && e == nil {
			return
		}
		msg := &nats.Msg{Subject: m.Reply}
		if resp != nil {
			msg.Data, _ = proto.Marshal(resp)
		}
		if err := wire.PublishReply(nc, msg, e); err != nil {
			t.Errorf("reply: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return &n
}

// Abort and Update ask again when no answer comes. An abort whose first
// try took though its answer was lost finds the operation already ended
// at the next: the client returns its ABORTED status, not that refusal;
// a refusal at the first try is returned as it is.
func TestAbortAndUpdateRetry(t *testing.T) {
	srv := testutil.StartNATS(t)
	const id = "op-1-1"
	abortSubj, _ := subjects.Op(id, subjects.OpAbort)
	getSubj, _ := subjects.Op(id, subjects.OpGet)
	updateSubj, _ := subjects.Op(id, subjects.OpUpdate)
	aborted := &pb.OperationStatus{Id: id, State: pb.OperationState_OPERATION_STATE_ABORTED}
	already := &pb.Error{Code: pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, Field: "operation_id", Message: "operation op-1-1 is already aborted"}
	for _, c := range []struct {
		name      string
		abort     func(n int) (proto.Message, *pb.Error)
		tries     int64
		wantState pb.OperationState
		wantCode  pb.ErrorCode
	}{
		{"answer lost, then already aborted", func(n int) (proto.Message, *pb.Error) {
			if n == 1 {
				return nil, nil
			}
			return nil, already
		}, 2, pb.OperationState_OPERATION_STATE_ABORTED, 0},
		{"unavailable, then aborted", func(n int) (proto.Message, *pb.Error) {
			if n == 1 {
				return nil, &pb.Error{Code: pb.ErrorCode_ERROR_CODE_UNAVAILABLE, Message: "not stored"}
			}
			return &pb.AbortOperationResponse{Status: aborted}, nil
		}, 2, pb.OperationState_OPERATION_STATE_ABORTED, 0},
		{"already ended at the first try", func(int) (proto.Message, *pb.Error) { return nil, already }, 1, 0, pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION},
	} {
		t.Run(c.name, func(t *testing.T) {
			nc := testutil.Connect(t, srv)
			tries := respond(t, nc, abortSubj, func(n int, _ []byte) (proto.Message, *pb.Error) { return c.abort(n) })
			respond(t, nc, getSubj, func(int, []byte) (proto.Message, *pb.Error) { return aborted, nil })
			cl := New(testutil.Connect(t, srv), 300*time.Millisecond)
			st, err := cl.Abort(context.Background(), id, "")
			var api *APIError
			switch {
			case c.wantCode != 0 && (!errors.As(err, &api) || api.Code() != c.wantCode):
				t.Errorf("Abort: %v, want %v", err, c.wantCode)
			case c.wantCode == 0 && (err != nil || st.GetState() != c.wantState):
				t.Errorf("Abort: %v, %v; want state %v", st, err, c.wantState)
			}
			if n := tries.Load(); n != c.tries {
				t.Errorf("%d tries, want %d", n, c.tries)
			}
		})
	}

	nc := testutil.Connect(t, srv)
	tries := respond(t, nc, updateSubj, func(n int, _ []byte) (proto.Message, *pb.Error) {
		if n == 1 {
			return nil, nil
		}
		return &pb.UpdateOperationResponse{Status: &pb.OperationStatus{Id: id}}, nil
	})
	w := 2.0
	st, err := New(testutil.Connect(t, srv), 300*time.Millisecond).Update(context.Background(), id, &pb.UpdateOperationRequest{Weight: &w})
	if err != nil || st.GetId() != id || tries.Load() != 2 {
		t.Errorf("Update: %v, %v after %d tries; want the status after 2", st, err, tries.Load())
	}
}
