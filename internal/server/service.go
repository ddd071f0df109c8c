package server

import (
	"fmt"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/internal/failpoint"
	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// service is the micro service: decode, validate, send to the actors.
type service struct {
	sys *actors.System
	// nc, the connection the requests came in on, sends the replies the
	// actors give after the handler returned.
	nc *nats.Conn
	// rejected counts refused requests (bad subject, payload or fields),
	// shared by the connections' services.
	rejected *atomic.Uint64
	// leading reports whether the server may act as the leader (see
	// leader.Lease.Valid): while it may not, every request is answered
	// UNAVAILABLE, and so is one the actors answer after it stopped being
	// (a heartbeat's reply carries commands).
	leading func() bool
}

func (s *service) fail(req micro.Request, e *pb.Error) {
	s.rejected.Add(1)
	_ = wire.RespondError(req, e)
}

func invalid(field, format string, args ...any) *pb.Error {
	return &pb.Error{Code: pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, Field: field, Message: fmt.Sprintf(format, args...)}
}

// decode unmarshals a request payload or answers with a typed error.
func (s *service) decode(req micro.Request, m proto.Message) bool {
	if err := proto.Unmarshal(req.Data(), m); err != nil {
		s.fail(req, invalid("payload", "payload on %s is not a %s: %v", req.Subject(), m.ProtoReflect().Descriptor().FullName(), err))
		return false
	}
	return true
}

// reply returns a reply function for an actor message. The actors answer
// after the handler has returned, so the reply is published on the
// request's reply subject directly: micro.Request's Respond and Error record
// their outcome in the request, which micro reads when the handler returns
// (a data race when they run later on another goroutine). Micro's stats
// therefore count these requests without their errors; s.rejected counts
// them. A reply too large for a NATS message is answered with
// LIMIT_EXCEEDED instead (see wire.PublishReply).
func reply[T proto.Message](s *service, req micro.Request) func(T, *pb.Error) {
	subject := req.Reply()
	return func(m T, e *pb.Error) {
		msg := &nats.Msg{Subject: subject}
		if !s.leading() {
			e = wire.NotLeader()
		}
		if e == nil {
			data, err := proto.Marshal(m)
			if err == nil {
				msg.Data = data
			} else {
				e = &pb.Error{Code: pb.ErrorCode_ERROR_CODE_INTERNAL, Message: fmt.Sprintf("encode reply: %v", err)}
			}
		}
		if e != nil {
			s.rejected.Add(1)
		}
		_ = wire.PublishReply(s.nc, msg, e)
	}
}

func (s *service) heartbeat(req micro.Request) {
	node, err := subjects.ParseNodeHeartbeat(req.Subject())
	if err != nil {
		s.fail(req, invalid("subject", "%v", err))
		return
	}
	hb := &pb.Heartbeat{}
	if !s.decode(req, hb) {
		return
	}
	if hb.GetNodeId() != node {
		s.fail(req, &pb.Error{Code: pb.ErrorCode_ERROR_CODE_NODE_MISMATCH, Field: "node_id",
			Message: fmt.Sprintf("heartbeat on the subject of node %q claims node %q", node, hb.GetNodeId())})
		return
	}
	for i, f := range hb.GetFinishedJobs() {
		switch f.GetState() {
		case pb.JobState_JOB_STATE_COMPLETED, pb.JobState_JOB_STATE_FAILED, pb.JobState_JOB_STATE_ABORTED:
		default:
			s.fail(req, invalid(fmt.Sprintf("finished_jobs[%d].state", i), "finished job %q of node %q is in state %v; a finished job is completed, failed or aborted",
				f.GetJobId(), node, f.GetState()))
			return
		}
	}
	r := reply[*pb.HeartbeatResponse](s, req)
	if failpoint.Armed() {
		inner := r
		r = func(m *pb.HeartbeatResponse, e *pb.Error) {
			inner(m, e)
			if e == nil && len(m.GetJobsToStart()) > 0 {
				failpoint.Hit(failpoint.StartsAfterReply, func() { _ = s.nc.Flush() })
			}
		}
	}
	s.sys.Heartbeat(&actors.NodeHeartbeat{Heartbeat: hb, Reply: r})
}

func (s *service) submit(req micro.Request) {
	in := &pb.StartOperationRequest{}
	if !s.decode(req, in) {
		return
	}
	s.sys.Submit(&actors.SubmitOperation{Spec: in.GetSpec(), RequestID: in.GetRequestId(), Reply: reply[*pb.StartOperationResponse](s, req)})
}

// userSubmit is submit on a user's own subject (subjects.UserSubmit): the
// user comes from the subject, whatever the spec says, since a secured
// NATS server lets only that user publish there.
func (s *service) userSubmit(req micro.Request) {
	user, err := subjects.ParseUserSubmit(req.Subject())
	if err != nil {
		s.fail(req, invalid("subject", "%v", err))
		return
	}
	in := &pb.StartOperationRequest{}
	if !s.decode(req, in) {
		return
	}
	if in.GetSpec() == nil {
		in.Spec = &pb.OperationSpec{}
	}
	in.Spec.User = user
	s.sys.Submit(&actors.SubmitOperation{Spec: in.GetSpec(), RequestID: in.GetRequestId(), Reply: reply[*pb.StartOperationResponse](s, req)})
}

func (s *service) list(req micro.Request) {
	in := &pb.ListOperationsRequest{}
	if !s.decode(req, in) {
		return
	}
	if in.GetLimit() < 0 {
		s.fail(req, invalid("limit", "limit must be >= 0, got %d", in.GetLimit()))
		return
	}
	for i, st := range in.GetStates() {
		if _, ok := pb.OperationState_name[int32(st)]; !ok || st == pb.OperationState_OPERATION_STATE_UNSPECIFIED {
			s.fail(req, invalid(fmt.Sprintf("states[%d]", i), "%v is not an operation state; want pending, running, completed, failed or aborted", st))
			return
		}
	}
	if p := in.GetPool(); p != "" {
		if err := subjects.ValidateToken("pool", p); err != nil {
			s.fail(req, invalid("pool", "%v", err))
			return
		}
	}
	s.sys.List(&actors.ListOperations{Request: in, MaxBytes: wire.MaxReplyBytes(s.nc), Reply: reply[*pb.ListOperationsResponse](s, req)})
}

// opID checks an operation request's subject — the anonymous
// subjects.Op, or a user's own subjects.UserOp, whose user it returns —
// and that the payload (when it names an operation) agrees.
func (s *service) opID(req micro.Request, payloadID string) (user, id string, ok bool) {
	user, id, _, err := subjects.ParseAnyOp(req.Subject())
	if err != nil {
		s.fail(req, invalid("subject", "%v", err))
		return "", "", false
	}
	if payloadID != "" && payloadID != id {
		s.fail(req, invalid("operation_id", "payload names operation %q but the subject names %q", payloadID, id))
		return "", "", false
	}
	return user, id, true
}

func (s *service) get(req micro.Request) {
	in := &pb.GetOperationRequest{}
	if !s.decode(req, in) {
		return
	}
	if _, id, ok := s.opID(req, in.GetOperationId()); ok {
		s.sys.Get(&actors.GetOperation{ID: id, Reply: reply[*pb.OperationStatus](s, req)})
	}
}

func (s *service) abort(req micro.Request) {
	in := &pb.AbortOperationRequest{}
	if !s.decode(req, in) {
		return
	}
	if user, id, ok := s.opID(req, in.GetOperationId()); ok {
		s.sys.Abort(&actors.AbortOperation{ID: id, Reason: in.GetReason(), User: user, Reply: reply[*pb.AbortOperationResponse](s, req)})
	}
}

func (s *service) update(req micro.Request) {
	in := &pb.UpdateOperationRequest{}
	if !s.decode(req, in) {
		return
	}
	if user, id, ok := s.opID(req, in.GetOperationId()); ok {
		s.sys.Update(&actors.UpdateOperation{ID: id, Req: in, User: user, Reply: reply[*pb.UpdateOperationResponse](s, req)})
	}
}

// addService registers the endpoints.
func addService(svc micro.Service, s *service) error {
	eps := []struct {
		name, subject string
		h             micro.HandlerFunc
	}{
		{"heartbeat", subjects.NodeHeartbeatAll(), s.heartbeat},
		{"submit", subjects.OpSubmit(), s.submit},
		{"user-submit", subjects.UserSubmitAll(), s.userSubmit},
		{"list", subjects.OpList(), s.list},
		{"get", subjects.OpAll(subjects.OpGet), s.get},
		{"abort", subjects.OpAll(subjects.OpAbort), s.abort},
		{"update", subjects.OpAll(subjects.OpUpdate), s.update},
		// On a user's own subjects: only the operation's owner may.
		{"user-abort", subjects.UserOpAll(subjects.OpAbort), s.abort},
		{"user-update", subjects.UserOpAll(subjects.OpUpdate), s.update},
	}
	// Only the leader handles a request or a heartbeat; every scheduler
	// serving gets each (see wire.Leader), and standbys serve nothing, so
	// in a steady state the leader is the only subscriber.
	leader := wire.Leader{NC: s.nc, Leading: s.leading, Refused: func() { s.rejected.Add(1) }}
	for _, e := range eps {
		if err := leader.AddEndpoint(svc, e.name, e.subject, e.h); err != nil {
			return fmt.Errorf("endpoint %s: %w", e.name, err)
		}
	}
	return nil
}
