package actors

import (
	"fmt"
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// applyUpdate returns the spec with a request's changes, validated.
func applyUpdate(spec *pb.OperationSpec, req *pb.UpdateOperationRequest) (*pb.OperationSpec, *pb.Error) {
	next := proto.Clone(spec).(*pb.OperationSpec)
	if req.Weight != nil {
		next.Weight = proto.Float64(req.GetWeight())
	}
	if req.GetClearResourceLimits() && req.GetResourceLimits() != nil {
		return nil, pbErr(pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "clear_resource_limits", "set either resource_limits or clear_resource_limits, not both")
	}
	if req.GetClearResourceLimits() {
		next.ResourceLimits = nil
	}
	if req.GetResourceLimits() != nil {
		next.ResourceLimits = req.GetResourceLimits()
	}
	if req.GetPool() != "" {
		if err := subjects.ValidateToken("pool", req.GetPool()); err != nil {
			return nil, pbErr(pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "pool", "%v", err)
		}
		next.Pool = req.GetPool()
	}
	trees := make([]string, 0, len(req.GetSchedulingOptionsPerPoolTree()))
	for tree := range req.GetSchedulingOptionsPerPoolTree() {
		trees = append(trees, tree)
	}
	slices.Sort(trees)
	for _, tree := range trees {
		in := req.GetSchedulingOptionsPerPoolTree()[tree]
		f := fmt.Sprintf("scheduling_options_per_pool_tree[%s]", tree)
		if !slices.Contains(next.GetPoolTrees(), tree) {
			return nil, pbErr(pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, f, "%s: the operation does not run in tree %q (pool_trees %v); its trees cannot change", f, tree, next.GetPoolTrees())
		}
		if next.SchedulingOptionsPerPoolTree == nil {
			next.SchedulingOptionsPerPoolTree = map[string]*pb.PoolTreeOptions{}
		}
		cur := next.SchedulingOptionsPerPoolTree[tree]
		if cur == nil {
			cur = &pb.PoolTreeOptions{}
			next.SchedulingOptionsPerPoolTree[tree] = cur
		}
		if in.GetPool() != "" {
			if err := subjects.ValidateToken("pool", in.GetPool()); err != nil {
				return nil, pbErr(pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, f+".pool", "%v", err)
			}
			cur.Pool = in.GetPool()
		}
		if in.Weight != nil {
			cur.Weight = proto.Float64(in.GetWeight())
		}
		if in.GetResourceLimits() != nil {
			cur.ResourceLimits = in.GetResourceLimits()
		}
	}
	checked, perr := normalizeSpec(next, "")
	if perr != nil {
		// Name the request's field rather than the spec's.
		perr.Field = strings.TrimPrefix(perr.GetField(), "spec.")
		return nil, perr
	}
	return checked, nil
}

// onUpdate applies a run-time update tree by tree; the first tree that
// refuses undoes the trees already changed. The reply comes once the
// updated operation is stored.
func (o *operationActor) onUpdate(ctx actor.Context, m *UpdateOperation) {
	if o.terminal() {
		m.Reply(nil, pbErr(pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "operation_id", "operation %s is already %s", o.id, stateName(o.state)))
		return
	}
	if o.updating {
		o.queued = append(o.queued, m)
		return
	}
	next, perr := applyUpdate(o.spec, m.Req)
	if perr != nil {
		m.Reply(nil, perr)
		return
	}
	var msgs, undo []*updateInTree
	for _, t := range o.trees {
		nw, perr := treeOptions(next, t.name)
		if perr != nil {
			m.Reply(nil, perr)
			return
		}
		old, _ := treeOptions(o.spec, t.name)
		id := scheduler.OperationID(o.id)
		pool := nw.pool
		if pool == old.pool {
			// The update leaves the pool alone: the operation stays where
			// it runs, which its spec does not always name (its user's
			// ephemeral pool, an offloading tree's pool).
			pool = t.pool
		}
		msgs = append(msgs, &updateInTree{id: id, pool: pool, poolField: strings.TrimPrefix(nw.poolField, "spec."), weight: nw.weight, limits: nw.limits})
		undo = append(undo, &updateInTree{id: id, pool: t.pool, poolField: old.poolField, weight: old.weight, limits: old.limits})
	}
	o.updating = true
	o.updateChain(ctx, m, next, msgs, undo, nil)
}

func (o *operationActor) updateChain(ctx actor.Context, m *UpdateOperation, next *pb.OperationSpec, msgs, undo []*updateInTree, results []*updateInTreeResult) {
	i := len(results)
	if i == len(msgs) {
		o.updated(ctx, m, next, msgs, results)
		return
	}
	// fail undoes the update in the first n trees.
	fail := func(n int, e *pb.Error) {
		for k := range n {
			ctx.Send(o.trees[k].pid, undo[k])
		}
		m.Reply(nil, e)
		o.updateDone(ctx)
	}
	f := ctx.RequestFuture(o.trees[i].pid, msgs[i], o.cfg.RequestTimeout)
	ctx.ReenterAfter(f, func(res any, err error) {
		if err != nil {
			// The tree may still apply it, late: it is undone after.
			fail(i+1, pbErr(pb.ErrorCode_ERROR_CODE_UNAVAILABLE, "", "tree %s did not answer: %v", o.trees[i].name, err))
			return
		}
		r, ok := res.(*updateInTreeResult)
		if !ok {
			fail(i, pbErr(pb.ErrorCode_ERROR_CODE_INTERNAL, "", "tree %s answered %T", o.trees[i].name, res))
			return
		}
		if r.err != nil {
			fail(i, r.err)
			return
		}
		o.updateChain(ctx, m, next, msgs, undo, append(results, r))
	})
}

// updated records an update every tree applied, publishes it and replies
// once it is stored.
func (o *operationActor) updated(ctx actor.Context, m *UpdateOperation, next *pb.OperationSpec, msgs []*updateInTree, results []*updateInTreeResult) {
	var changes []string
	for i, t := range o.trees {
		if t.pool != msgs[i].pool {
			changes = append(changes, fmt.Sprintf("tree %s: pool %s → %s", t.name, poolName(t.pool), poolName(msgs[i].pool)))
		}
		t.pool = msgs[i].pool
		t.pending = results[i].pending
		if results[i].running {
			t.running = true
		}
	}
	o.spec = next
	reason := "runtime parameters updated"
	if len(changes) > 0 {
		reason += "; " + strings.Join(changes, ", ")
	}
	from := o.state
	if o.state == pb.OperationState_OPERATION_STATE_PENDING && slices.ContainsFunc(o.trees, func(t *opTree) bool { return t.running }) {
		o.state = pb.OperationState_OPERATION_STATE_RUNNING
		if o.started.IsZero() {
			o.started = o.cfg.Now()
		}
	}
	o.publishState(from, reason)
	o.ackStored("the update is in effect but", func(e *pb.Error) {
		if e != nil {
			m.Reply(nil, e)
			return
		}
		m.Reply(&pb.UpdateOperationResponse{Status: o.status()}, nil)
	})
	o.persist(ctx)
	o.notifyRoot(ctx)
	o.updateDone(ctx)
}

// updateDone starts the next queued update.
func (o *operationActor) updateDone(ctx actor.Context) {
	o.updating = false
	if len(o.queued) > 0 {
		next := o.queued[0]
		o.queued = o.queued[1:]
		o.onUpdate(ctx, next)
	}
}

func poolName(p scheduler.PoolID) string {
	if p == "" {
		return scheduler.RootID
	}
	return string(p)
}
