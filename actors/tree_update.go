package actors

import (
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// updateOperation applies a run-time update of an admitted operation: a
// pool change moves its admission (max_operation_count of the pools it
// newly counts toward must allow it) and its placement with the running
// jobs; weight and limits take effect in the next scheduling pass and
// fair-share update. Operations a move frees a running slot for start.
func (t *treeActor) updateOperation(ctx actor.Context, m *updateInTree) *updateInTreeResult {
	res := &updateInTreeResult{tree: t.spec.Name}
	op := t.ops[m.id]
	if op == nil {
		res.err = pbErr(pb.ErrorCode_ERROR_CODE_NOT_FOUND, "operation_id", "operation %s is not in tree %s", m.id, t.spec.Name)
		return res
	}
	var started []scheduler.OperationID
	if m.pool != op.pool {
		// The operation's user must be admitted into the new pool, as at
		// submission.
		if e := newACLIndex(&t.spec).deny(t.spec.Name, m.pool, op.msg.user, m.poolField); e != nil {
			res.err = e
			return res
		}
		var err error
		started, err = t.adm.Move(m.id, m.pool)
		var lim *scheduler.LimitError
		switch {
		case errors.As(err, &lim):
			res.err = pbErr(pb.ErrorCode_ERROR_CODE_LIMIT_EXCEEDED, m.poolField, "tree %s: %v", t.spec.Name, err)
			return res
		case err != nil:
			res.err = pbErr(pb.ErrorCode_ERROR_CODE_NOT_FOUND, m.poolField, "%s: pool %q does not exist in tree %s", m.poolField, m.pool, t.spec.Name)
			return res
		}
		if op.running {
			if err := t.ledger.moveOperation(m.id, m.pool); err != nil {
				// The admission knew the pool, so the placement must too.
				panic(fmt.Sprintf("tree %s: move %s to %q: %v", t.spec.Name, m.id, m.pool, err))
			}
		}
		op.pool = m.pool
	}
	if op.running {
		w := 1.0
		if m.weight != nil {
			w = *m.weight
		}
		if err := t.ledger.updateOperation(m.id, w, m.limits); err != nil {
			res.err = pbErr(pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "resource_limits", "tree %s: %v", t.spec.Name, err)
			return res
		}
	}
	op.weight, op.limits = m.weight, m.limits
	t.startAdmitted(ctx, started, m.id, "start operation after a move")
	t.refreshPending(ctx.Send)
	res.running = op.running
	if !op.running {
		res.pending = t.tellQueue(op, m.id)
	}
	return res
}
