package actors

import (
	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// A client that submits an operation and hears nothing back (a timeout, a
// lost reply, a scheduler that restarted meanwhile) cannot tell whether
// the operation was stored, and a retry would start a second one. So a
// submission may carry a request id (StartOperationRequest.request_id).
// The root maps each request id to its operation for as long as it keeps
// the operation, and the id is stored with the operation's status, so a
// restarted scheduler maps it again. A submission with a known request id
// starts nothing; it is answered with the first submission's answer:
//   - at once with the operation's id once the operation is stored;
//   - while it is being admitted or stored, when that ends: with its id,
//     or with the refusal (an operation never stored leaves the map, and a
//     retry after the refusal is a new submission).
//
// The same request id with another spec is refused (INVALID_ARGUMENT on
// request_id): that is a client's mistake, not a retry. Specs are compared
// normalized, as the operation stores its spec (so a retry after the
// scheduler's default tree changed, of a spec that names no tree, is
// refused too).

// validateRequestID checks a request id (see wire.ValidateRequestID).
func validateRequestID(id string) *pb.Error {
	if err := wire.ValidateRequestID(id); err != nil {
		return invalidArg("request_id", "%v", err)
	}
	return nil
}

// submitRequest submits an operation, or answers a submission whose
// request id names one already submitted.
func (r *rootActor) submitRequest(ctx actor.Context, m *SubmitOperation) {
	rid := m.RequestID
	if rid == "" {
		r.submit(ctx, m.Spec, "", "", m.Reply, nil)
		return
	}
	if e := validateRequestID(rid); e != nil {
		m.Reply(nil, e)
		return
	}
	id, ok := r.requests[rid]
	if !ok {
		r.submit(ctx, m.Spec, "", rid, m.Reply, nil)
		return
	}
	op := r.ops[id]
	// (A stored spec that no longer normalizes, as one revived only to
	// fail, is compared as it is.)
	spec, perr := normalizeSpec(m.Spec, r.defaultTree)
	if !(perr == nil && proto.Equal(spec, op.spec) || proto.Equal(m.Spec, op.spec)) {
		if perr == nil {
			perr = invalidArg("request_id", "request id %q was used for operation %s with another spec: a retry sends the same spec, another submission another request id", rid, id)
		}
		m.Reply(nil, perr)
		return
	}
	if op.acked {
		m.Reply(&pb.StartOperationResponse{OperationId: id}, nil)
		return
	}
	op.waiting = append(op.waiting, m.Reply)
}

// storedSpec is a stored operation's spec as submissions compare it:
// normalized (as stored), or as it is when it no longer normalizes.
func (r *rootActor) storedSpec(st *pb.OperationStatus) *pb.OperationSpec {
	if spec, perr := normalizeSpec(st.GetSpec(), r.defaultTree); perr == nil {
		return spec
	}
	return st.GetSpec()
}

// noteRequest maps a stored operation's request id to it.
func (r *rootActor) noteRequest(st *pb.OperationStatus) {
	if rid := st.GetRequestId(); rid != "" {
		r.requests[rid] = st.GetId()
	}
}

// settleRequest answers the submissions waiting for op (see submitRequest)
// when its actor tells that it is stored, or refuses them when it never
// will be.
func (r *rootActor) settleRequest(op *rootOp, m *statusUpdate) {
	id := m.status.GetId()
	switch {
	case m.undone:
		r.refuseWaiting(id, op, pbErr(pb.ErrorCode_ERROR_CODE_UNAVAILABLE, "", "operation %s could not be stored (its first write failed); submit again", id))
	case m.acked && !op.acked:
		op.acked = true
		for _, reply := range op.waiting {
			reply(&pb.StartOperationResponse{OperationId: id}, nil)
		}
		op.waiting = nil
	}
}

// refuseWaiting answers the submissions waiting for operation id, which
// was never stored, with e, and forgets its request id: a retry is a new
// submission.
func (r *rootActor) refuseWaiting(id string, op *rootOp, e *pb.Error) {
	for _, reply := range op.waiting {
		reply(nil, e)
	}
	op.waiting = nil
	if op.requestID != "" && r.requests[op.requestID] == id {
		delete(r.requests, op.requestID)
	}
}
