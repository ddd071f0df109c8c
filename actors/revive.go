package actors

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// reviveAll restores the registry from the store: finished operations are
// listed, unfinished ones are admitted again, in submission order (submit
// time, then id) so that the pools' queues keep their order, and rerun
// their jobs.
func (r *rootActor) reviveAll(ctx actor.Context) {
	slices.SortStableFunc(r.revive, func(a, b *pb.OperationStatus) int {
		if c := a.GetSubmitTime().AsTime().Compare(b.GetSubmitTime().AsTime()); c != 0 {
			return c
		}
		return strings.Compare(a.GetId(), b.GetId())
	})
	for _, st := range r.revive {
		if terminalState(st.GetState()) {
			r.ops[st.GetId()] = &rootOp{status: st, spec: r.storedSpec(st), requestID: st.GetRequestId(), acked: true}
			r.noteRequest(st)
		} else {
			r.submit(ctx, st.GetSpec(), st.GetId(), st.GetRequestId(), nil, st)
		}
	}
	r.revive = nil
}

// reviveFailed keeps an acknowledged operation that cannot be admitted
// again after a restart (its pool or tree is gone, its spec no longer
// passes): stored, its status as stored, fails with the reason, stays
// listed, and the failure is stored and published. An acknowledged
// operation is never dropped.
func (r *rootActor) reviveFailed(id string, stored *pb.OperationStatus, e *pb.Error) {
	if stored == nil {
		r.cfg.Logger.Error("revive operation", "operation", id, "err", e.GetMessage())
		return
	}
	st := proto.Clone(stored).(*pb.OperationStatus)
	from := st.GetState()
	now := r.cfg.Now()
	st.State, st.FinishTime = pb.OperationState_OPERATION_STATE_FAILED, timestamppb.New(now)
	st.Error = &pb.Error{Code: e.GetCode(), Field: e.GetField(), Message: "not revived after the scheduler restarted: " + e.GetMessage()}
	if j := st.GetJobs(); j != nil {
		j.Pending, j.Running = 0, 0
	}
	st.Usage = nil
	r.ops[id] = &rootOp{status: st, spec: r.storedSpec(st), requestID: st.GetRequestId(), acked: true}
	r.noteRequest(st)
	r.cfg.Logger.Error("operation not revived: failed", "operation", id, "err", e.GetMessage())
	r.sys.revival.forget(scheduler.OperationID(id))

	tree, pool := r.defaultTree, ""
	if ts := st.GetTrees(); len(ts) > 0 {
		tree, pool = ts[0].GetTree(), ts[0].GetPool()
	}
	if _, err := subjects.Events(tree, subjects.EventOperation); err != nil {
		tree = r.defaultTree
	}
	r.deps.Events.Publish(tree, subjects.EventOperation, &pb.Event{
		Time: timestamppb.New(now), Tree: tree, LeaderEpoch: r.deps.Epoch,
		Kind: &pb.Event_Operation{Operation: &pb.OperationEvent{
			OperationId: id, From: from, To: st.GetState(), Pool: pool, Reason: "not revived", Error: st.GetError(),
		}},
	})
	store, timeout, logger, journal, stop := r.deps.Store, r.cfg.RequestTimeout, r.cfg.Logger, r.sys.journal, r.sys.stop
	go func() {
		// Retried until stored (or the system stops): until then the
		// journal keeps this operation's completions, and every batch
		// after them.
		for wait := journalRetryMin; ; wait = min(2*wait, journalRetryMax) {
			c, cancel := context.WithTimeout(context.Background(), timeout)
			err := store.Put(c, st)
			cancel()
			if err == nil {
				break
			}
			logger.Warn("persist operation not revived; retrying", "operation", id, "err", err, "retry_in", wait)
			select {
			case <-stop:
				return
			case <-time.After(wait):
			}
		}
		// Over and stored: the completions the journal holds for it are
		// not needed.
		if journal != nil {
			journal.dropped(id)
		}
	}()
}
