package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// toOwnedOperation is toLiveOperation for a request that changes the
// operation (verb: "abort" or "update"): when user is set (the request
// came on the user's own subject, so NATS vouches for it), only the
// operation's owner — the user its spec names — may; an operation
// submitted without a user belongs to the admins alone. An unknown
// operation is NOT_FOUND whoever asks (operation ids are listed to every
// client anyway).
func (r *rootActor) toOwnedOperation(ctx actor.Context, id, user, verb string, msg any, refuse func(*pb.Error)) {
	if op, ok := r.ops[id]; ok && user != "" {
		if owner := op.spec.GetUser(); owner != user {
			if owner == "" {
				refuse(pbErr(pb.ErrorCode_ERROR_CODE_PERMISSION_DENIED, "operation_id",
					"user %q may not %s operation %s: it was submitted without a user, so only an admin may", user, verb, id))
			} else {
				refuse(pbErr(pb.ErrorCode_ERROR_CODE_PERMISSION_DENIED, "operation_id",
					"user %q may not %s operation %s of user %q: only its owner may", user, verb, id, owner))
			}
			return
		}
	}
	r.toLiveOperation(ctx, id, msg, refuse)
}
