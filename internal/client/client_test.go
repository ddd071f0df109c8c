package client

import (
	"context"
	"errors"
	"sync"
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
// (nil: no answer, as a scheduler too slow or a lost reply), recording
// the request ids it saw.
type scheduler struct {
	mu   sync.Mutex
	seen []string
}

func (s *scheduler) serve(t *testing.T, nc *nats.Conn, answer func(n int) (*pb.StartOperationResponse, *pb.Error)) {
	t.Helper()
	sub, err := nc.Subscribe(subjects.OpSubmit(), func(m *nats.Msg) {
		req := &pb.StartOperationRequest{}
		if err := proto.Unmarshal(m.Data, req); err != nil {
			t.Errorf("decode: %v", err)
			return
		}
		s.mu.Lock()
		s.seen = append(s.seen, req.GetRequestId())
		n := len(s.seen)
		s.mu.Unlock()
		resp, e := answer(n)
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
	// The client asks on another connection: the server must hold the
	// subscription before that, or the first request finds no responder.
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
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

func TestSubmitDurationCoversEveryTry(t *testing.T) {
	if got, want := SubmitDuration(time.Second), 3*time.Second+submitBackoff+2*submitBackoff; got != want {
		t.Errorf("SubmitDuration(1s) = %v, want %v", got, want)
	}
}
