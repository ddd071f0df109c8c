package actors

import (
	"fmt"
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/placement"
)

// treeRef is how the root and the node router reach a tree.
type treeRef struct {
	spec   TreeSpec
	pid    *actor.PID
	ledger *Ledger
	placer *actor.PID
	// writer persists the tree's state (the tree actor's; stopTree tells
	// it the tree is removed).
	writer *stateWriter
	pools  map[scheduler.PoolID]bool
	// parents maps each pool to its parent when some pool has
	// offloading_settings (nil otherwise: submissions skip the walk).
	parents map[scheduler.PoolID]scheduler.PoolID
	// acl says who may submit into the pools (nil: anyone anywhere).
	acl *aclIndex
}

// setSpec records the tree's configuration and what submissions derive
// from it.
func (r *treeRef) setSpec(spec TreeSpec) {
	r.spec, r.pools, r.parents = spec, poolSet(spec.Pools), nil
	r.acl = newACLIndex(&spec)
	for _, o := range spec.PoolOptions {
		if len(o.Offloading) > 0 {
			r.parents = make(map[scheduler.PoolID]scheduler.PoolID, len(spec.Pools))
			for _, p := range spec.Pools {
				r.parents[p.Name] = p.Parent
			}
			break
		}
	}
}

func (r *treeRef) nodeTree() *nodeTree {
	return &nodeTree{name: r.spec.Name, ledger: r.ledger, pid: r.pid, placer: r.placer, filter: r.spec.NodeFilter}
}

// rootOp is the root's registry entry of an operation.
type rootOp struct {
	pid    *actor.PID // nil once the operation actor stopped
	trees  []string   // the pool trees it runs in
	status *pb.OperationStatus
	// spec is the normalized spec; requestID the submission's request id
	// ("" for none); acked is set once the operation is stored and its
	// submitter answered, and waiting are the submissions with its
	// request id that wait for that (see idempotent.go).
	spec      *pb.OperationSpec
	requestID string
	acked     bool
	waiting   []func(*pb.StartOperationResponse, *pb.Error)
}

// rootActor owns the operation registry and routes requests.
type rootActor struct {
	cfg   *Config
	deps  Deps
	sys   *System
	trees map[string]*treeRef
	// order is the trees' configuration order.
	order       []string
	defaultTree string
	revive      []*pb.OperationStatus

	ops   map[string]*rootOp
	byPID map[string]string
	seq   uint64
	// requests maps the request ids of submissions to their operations
	// (see idempotent.go).
	requests map[string]string
}

func newRootActor(cfg *Config, deps Deps, sys *System, trees map[string]*treeRef, defaultTree string, revive []*pb.OperationStatus) actor.Producer {
	var order []string
	for _, t := range sys.dir.Load().trees {
		order = append(order, t.name)
	}
	return func() actor.Actor {
		return &rootActor{cfg: cfg, deps: deps, sys: sys, trees: trees, order: order, defaultTree: defaultTree, revive: revive,
			ops: map[string]*rootOp{}, byPID: map[string]string{}, requests: map[string]string{}}
	}
}

func (r *rootActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		r.reviveAll(ctx)
	case *SubmitOperation:
		r.submitRequest(ctx, m)
	case *GetOperation:
		r.get(ctx, m)
	case *ListOperations:
		m.Reply(r.list(m.Request, m.MaxBytes))
	case *AbortOperation:
		r.toOwnedOperation(ctx, m.ID, m.User, "abort", m, func(e *pb.Error) { m.Reply(nil, e) })
	case *UpdateOperation:
		r.toOwnedOperation(ctx, m.ID, m.User, "update", m, func(e *pb.Error) { m.Reply(nil, e) })
	case *applyTrees:
		r.applyTrees(ctx, m)
	case *statusUpdate:
		if op, ok := r.ops[m.status.GetId()]; ok {
			op.status = m.status
			r.settleRequest(op, m)
			if m.final && op.pid != nil {
				// Poison, not Stop: it queues behind what was forwarded.
				delete(r.byPID, op.pid.GetId())
				ctx.Poison(op.pid)
				op.pid = nil
			}
		}
	case *actor.Terminated:
		if id, ok := r.byPID[m.Who.GetId()]; ok {
			delete(r.byPID, m.Who.GetId())
			if op := r.ops[id]; op != nil {
				op.pid = nil
			}
		}
	}
}

// toLiveOperation forwards a request to an operation's actor, or refuses
// it: unknown operation, or one already finished.
func (r *rootActor) toLiveOperation(ctx actor.Context, id string, msg any, refuse func(*pb.Error)) {
	op, ok := r.ops[id]
	switch {
	case !ok:
		refuse(notFound(id))
	case op.pid == nil:
		refuse(pbErr(pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "operation_id", "operation %s is already %s", id, stateName(op.status.GetState())))
	default:
		ctx.Send(op.pid, msg)
	}
}

func notFound(id string) *pb.Error {
	return pbErr(pb.ErrorCode_ERROR_CODE_NOT_FOUND, "operation_id", "operation %q does not exist", id)
}

func (r *rootActor) get(ctx actor.Context, m *GetOperation) {
	op, ok := r.ops[m.ID]
	switch {
	case !ok:
		m.Reply(nil, notFound(m.ID))
	case op.pid == nil:
		m.Reply(op.status, nil)
	default:
		ctx.Send(op.pid, m)
	}
}

// submit validates and admits an operation. reply is nil for a revived
// operation (already acknowledged); id is then its existing id.
func (r *rootActor) submit(ctx actor.Context, in *pb.OperationSpec, id, requestID string, reply func(*pb.StartOperationResponse, *pb.Error), revived *pb.OperationStatus) {
	fail := func(e *pb.Error) {
		if reply != nil {
			reply(nil, e)
		} else {
			r.reviveFailed(id, revived, e)
		}
	}
	spec, perr := normalizeSpec(in, r.defaultTree)
	if perr != nil {
		fail(perr)
		return
	}
	r.seq++
	if id == "" {
		id = fmt.Sprintf("op-%d-%d", r.deps.Epoch, r.seq)
	}
	var progress jobProgress
	if revived != nil {
		p, err := storedProgress(spec, revived)
		if err != nil {
			r.cfg.Logger.Warn("stored completed jobs not trusted: they run again", "operation", id, "err", err)
		}
		progress = p
	}
	done := progress.keys(scheduler.OperationID(id))
	var trees []*opTree
	var admits []*admitOperation
	for i, name := range spec.GetPoolTrees() {
		tr := r.trees[name]
		if tr == nil {
			fail(pbErr(pb.ErrorCode_ERROR_CODE_NOT_FOUND, fmt.Sprintf("spec.pool_trees[%d]", i), "pool tree %q does not exist (trees: %s)", name, strings.Join(r.treeNames(), ", ")))
			return
		}
		a, perr := r.admitMessage(tr, spec, scheduler.OperationID(id), "", revived != nil)
		if perr != nil {
			fail(perr)
			return
		}
		a.revived, a.done = revived != nil, done
		trees = append(trees, &opTree{name: name, pool: a.pool, pid: tr.pid, ledger: tr.ledger})
		admits = append(admits, a)
	}
	caps := make([]int64, len(admits))
	for i := range caps {
		caps[i] = -1
	}
	for _, off := range r.offloads(spec, admits) {
		tr := r.trees[off.Tree]
		a, perr := r.admitMessage(tr, spec, scheduler.OperationID(id), off.Pool, revived != nil)
		if perr != nil {
			r.cfg.Logger.Warn("operation not offloaded", "operation", id, "tree", off.Tree, "err", perr.GetMessage())
			continue
		}
		a.offload, a.revived, a.done = true, revived != nil, done
		trees = append(trees, &opTree{name: off.Tree, pool: a.pool, pid: tr.pid, ledger: tr.ledger})
		admits = append(admits, a)
		caps = append(caps, offloadCap(spec, off.Share))
	}
	if len(admits) > 1 {
		counts := make([]int, len(spec.GetTasks()))
		for i, t := range spec.GetTasks() {
			counts[i] = int(t.GetJobCount())
		}
		ledgers := make([]*Ledger, len(trees))
		for i, t := range trees {
			ledgers[i] = t.ledger
		}
		claims := newJobClaims(counts, ledgers, caps)
		for i, a := range admits {
			a.place.Claims = claims.view(i)
		}
	}
	submitTime := r.cfg.Now()
	if revived != nil && revived.GetSubmitTime() != nil {
		submitTime = revived.GetSubmitTime().AsTime()
	}
	props := actor.PropsFromProducer(newOperationActor(r.cfg, r.deps, ctx.Self(), id, requestID, spec, trees, submitTime, revived, progress, opShared{writes: r.sys.progressWrites, journal: r.sys.journal}), inline)
	pid, err := ctx.SpawnNamed(props, "op:"+id)
	if err != nil {
		fail(pbErr(pb.ErrorCode_ERROR_CODE_ALREADY_EXISTS, "", "operation %s: %v", id, err))
		return
	}
	// No ctx.Watch: the operation actor is the root's child, and a parent
	// hears of a child's end (*actor.Terminated) without watching it. A
	// watch would only give every operation actor a watcher set (a map
	// and the context's extras, ≈ 430 bytes each) and the root each
	// Terminated twice.
	names := make([]string, len(trees))
	for i, t := range trees {
		names[i] = t.name
	}
	// A revived operation is listed at once with its stored status, until
	// its actor tells the live one.
	r.ops[id] = &rootOp{pid: pid, trees: names, status: revived, spec: spec, requestID: requestID, acked: revived != nil}
	r.byPID[pid.GetId()] = id
	if requestID != "" {
		r.requests[requestID] = id
	}
	for _, a := range admits {
		a.op = pid
	}
	r.admitChain(ctx, id, pid, trees, admits, nil, reply)
}

func (r *rootActor) treeNames() []string {
	names := make([]string, 0, len(r.trees))
	for n := range r.trees {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// admitMessage builds an operation's admission in one tree and checks what
// depends on the tree: the pool exists, the user may submit into it (its
// submit_acl; not for a revived operation, admitted before whatever the
// lists say now, nor in an offloading tree, whose pool the configuration
// chose), every job fits some node. offload, when set, is the pool of an
// offloading tree (no ephemeral pool then).
func (r *rootActor) admitMessage(tr *treeRef, spec *pb.OperationSpec, id scheduler.OperationID, offload scheduler.PoolID, revived bool) (*admitOperation, *pb.Error) {
	o, perr := treeOptions(spec, tr.spec.Name)
	if perr != nil {
		return nil, perr
	}
	pool, weight, limits := o.pool, o.weight, o.limits
	var eph *scheduler.PoolConfig
	if offload != "" {
		pool = offload
	} else if eph, pool, perr = ephemeralFor(tr, spec, pool, o.poolField); perr != nil {
		return nil, perr
	} else if !revived {
		if perr = tr.acl.deny(tr.spec.Name, aclPool(pool, eph), userOf(spec), o.poolField); perr != nil {
			return nil, perr
		}
	}
	place := placement.OperationSpec{ID: id, Pool: pool, Order: r.seq, ResourceLimits: limits, Weight: 1}
	if weight != nil {
		place.Weight = *weight
	}
	for i, t := range spec.GetTasks() {
		res, _ := wire.Resources("", t.GetJobResources())
		if fits, known := tr.ledger.fitsSomeNode(res); known && !fits {
			f := fmt.Sprintf("spec.tasks[%d].job_resources", i)
			return nil, pbErr(pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, f, "%s: a job needs %v, more than any node of tree %s has", f, res, tr.spec.Name)
		}
		place.Tasks = append(place.Tasks, placement.TaskSpec{Name: t.GetName(), JobCount: int(t.GetJobCount()), JobResources: res})
	}
	return &admitOperation{id: id, pool: pool, spec: spec, place: place, weight: weight, ephemeral: eph, user: userOf(spec)}, nil
}

// aclPool is the pool whose submit_acl chain admits an operation into
// pool: the parent of an ephemeral pool (which has no options of its own).
func aclPool(pool scheduler.PoolID, eph *scheduler.PoolConfig) scheduler.PoolID {
	if eph != nil {
		return eph.Parent
	}
	return pool
}

// admitChain asks the trees one after another; the first refusal undoes the
// admissions made so far.
func (r *rootActor) admitChain(ctx actor.Context, id string, pid *actor.PID, trees []*opTree, admits []*admitOperation, results []*admitResult, reply func(*pb.StartOperationResponse, *pb.Error)) {
	i := len(results)
	if i == len(admits) {
		ctx.Send(pid, &admitted{results: results, reply: reply})
		return
	}
	// undo undoes the admissions in the first n trees.
	undo := func(n int, e *pb.Error) {
		for _, t := range trees[:n] {
			ctx.Send(t.pid, &operationDone{id: scheduler.OperationID(id)})
		}
		ctx.Stop(pid)
		var stored *pb.OperationStatus // a revived operation's, until admitted
		if op := r.ops[id]; op != nil {
			stored = op.status
			r.refuseWaiting(id, op, e)
		}
		delete(r.ops, id)
		if reply != nil {
			reply(nil, e)
		} else {
			r.reviveFailed(id, stored, e)
		}
	}
	f := ctx.RequestFuture(trees[i].pid, admits[i], r.cfg.RequestTimeout)
	ctx.ReenterAfter(f, func(res any, err error) {
		if err != nil {
			// The tree may still admit it, late: it forgets it after.
			undo(i+1, pbErr(pb.ErrorCode_ERROR_CODE_UNAVAILABLE, "", "tree %s did not answer: %v", trees[i].name, err))
			return
		}
		ar, ok := res.(*admitResult)
		if !ok {
			undo(i, pbErr(pb.ErrorCode_ERROR_CODE_INTERNAL, "", "tree %s answered %T", trees[i].name, res))
			return
		}
		if ar.err != nil && admits[i].offload {
			// An offloading tree is optional: the operation runs without it.
			r.cfg.Logger.Warn("operation not offloaded", "operation", id, "tree", trees[i].name, "err", ar.err.GetMessage())
			ar = &admitResult{tree: trees[i].name, skipped: true, err: ar.err}
		} else if ar.err != nil {
			undo(i, ar.err)
			return
		}
		r.admitChain(ctx, id, pid, trees, admits, append(results, ar), reply)
	})
}

// offloads returns the offloading entries that apply to an operation: those
// of the nearest pool with offloading_settings on the operation's path in
// each of its trees (its pool, then the ancestors), for trees it does not
// run in already, each tree once, in the order found.
func (r *rootActor) offloads(spec *pb.OperationSpec, admits []*admitOperation) []Offloading {
	var out []Offloading
	in := map[string]bool{}
	for _, name := range spec.GetPoolTrees() {
		in[name] = true
	}
	for i, name := range spec.GetPoolTrees() {
		tr := r.trees[name]
		// An ephemeral pool has no settings of its own: its parent's apply,
		// and the parent names the default pool in the other tree.
		pool := admits[i].pool
		if e := admits[i].ephemeral; e != nil {
			pool = e.Parent
		}
		for _, off := range tr.offloadingOf(pool) {
			if in[off.Tree] || r.trees[off.Tree] == nil {
				continue
			}
			in[off.Tree] = true
			if off.Pool == "" {
				off.Pool = pool
			}
			out = append(out, off)
		}
	}
	return out
}

// offloadingOf returns the offloading_settings of the pool or its nearest
// ancestor that has them.
func (r *treeRef) offloadingOf(pool scheduler.PoolID) []Offloading {
	if r.parents == nil {
		return nil
	}
	// The pools form a tree (validated), so the walk ends at the root; the
	// depth bound only guards against a malformed spec.
	for p, depth := pool, 0; p != "" && depth <= len(r.parents); p, depth = r.parents[p], depth+1 {
		if o := r.spec.PoolOptions[p].Offloading; len(o) > 0 {
			return o
		}
	}
	return nil
}

// offloadCap is how many of the operation's jobs an offloading tree may
// run: share of them, rounded down (-1: no cap, for share 1).
func offloadCap(spec *pb.OperationSpec, share float64) int64 {
	if share >= 1 {
		return -1
	}
	var total int64
	for _, t := range spec.GetTasks() {
		total += int64(t.GetJobCount())
	}
	return int64(share * float64(total))
}
