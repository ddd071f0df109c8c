package actors

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	timer "github.com/asynkron/protoactor-go/scheduler"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/placement"
	"github.com/sharetree/sharetree/subjects"
)

// TreeSpec is one pool tree's configuration as the scheduler loads it.
type TreeSpec struct {
	Name   string
	Config scheduler.TreeConfig
	Pools  []scheduler.PoolConfig
	// Volumes are the integral pools' initial accumulated volumes.
	Volumes map[scheduler.PoolID]scheduler.Resources
	// NodeFilter selects the tree's exec nodes (node_tag_filter); nil takes
	// every node. A node must match exactly one tree.
	NodeFilter NodeFilter
	// MaxEphemeralPoolsPerUser bounds the ephemeral pools one user has in
	// the tree at once (max_ephemeral_pool_per_user); 0 means 1.
	MaxEphemeralPoolsPerUser int
	// PoolOptions are the pool options only the scheduler process reads.
	PoolOptions map[scheduler.PoolID]PoolOptions
}

// PoolOptions are a pool's options the engine does not read.
type PoolOptions struct {
	// ForbidImmediateOperations: operations may be submitted only into the
	// pool's descendants.
	ForbidImmediateOperations bool
	// CreateEphemeralSubpools: an operation submitted into the pool runs in
	// the ephemeral sub-pool "<pool>$<user>", configured by EphemeralSubpool
	// (its Name and Parent are set by the scheduler).
	CreateEphemeralSubpools bool
	EphemeralSubpool        scheduler.PoolConfig
	// Offloading (offloading_settings) runs the pool's operations in other
	// trees as well, each taking at most its share of an operation's jobs.
	Offloading []Offloading
	// SubmitACL (submit_acl) lists the users who may submit into the pool
	// and its subtree ("*": anyone); nil: the pool has no list (see
	// aclIndex), empty: nobody.
	SubmitACL []string
}

// Offloading is one entry of a pool's offloading_settings.
type Offloading struct {
	// Tree runs a share of the jobs; not the pool's own tree.
	Tree string
	// Pool in Tree; "" is a pool of the same name.
	Pool scheduler.PoolID
	// Share of an operation's jobs Tree may run, in (0, 1].
	Share float64
}

// treeOp is an operation the tree admitted.
type treeOp struct {
	msg *admitOperation
	// pool, weight and limits start as the admission's and follow run-time
	// updates (the message itself is never modified).
	pool     scheduler.PoolID
	weight   *float64
	limits   scheduler.PartialResources
	running  bool
	admitted time.Time
	// lastQueue is the pending reason the operation's actor was last
	// told, and queued what it was built from (see refreshPending).
	lastQueue *pb.PendingReason
	queued    queueSpot
}

// queueSpot is where a pending operation waits: the queue's pool, its
// position there and the pool's running count and limit — everything its
// pending reason says.
type queueSpot struct {
	pool                string
	pos, running, limit int
}

// treeActor owns one pool tree: configuration, admission, the fair-share
// update and the ledger the node actors schedule from.
type treeActor struct {
	cfg    *Config
	deps   Deps
	spec   TreeSpec
	ledger *Ledger
	// usage is the ledger snapshot's copy of the operations' usage, brought
	// up to date by every update.
	usage placement.OperationsCopy
	// opsBuf is the snapshot's operations, reused by every update: the
	// engine reads a snapshot only while it updates (one update at a
	// time, see updating), and its Result holds nothing of it but strings.
	opsBuf []scheduler.Operation

	adm   *scheduler.Admission
	ops   map[scheduler.OperationID]*treeOp
	pools map[scheduler.PoolID]*actor.PID
	// poolStarving is each pool's starvation status as its actor was last
	// told, for the pools that are starving (absent: non-starving): a pool
	// actor hears of changes only, not of every update.
	poolStarving map[scheduler.PoolID]scheduler.StarvationStatus
	state        scheduler.State
	updating     bool
	// engine keeps the update's buffers between updates; only the update
	// goroutine uses it, one at a time (updating).
	engine *scheduler.Engine
	// cancel stops the timer of the next tick; tickGen is the generation of
	// the current timer (see startTimer).
	cancel  timer.CancelFunc
	tickGen uint64

	// ephemeral are the pools created for users' operations; they go when
	// their last operation does.
	ephemeral map[scheduler.PoolID]ephemeralPool
	// all caches allPools; nil after the configured or the ephemeral pools
	// changed (see setEphemeral, reconfigure). A new slice replaces it: an
	// update may still read the last one.
	all []scheduler.PoolConfig

	// opStarvation is each operation's starvation status at the last
	// update, and the update that saw it (older entries are gone operations).
	opStarvation map[string]opStarv

	lastFairShareEvent time.Time
	// writer persists the tree's state; lastState is when an update last
	// offered it one (see persistState).
	writer    *stateWriter
	lastState time.Time
	updates   int
	// stats counts the updates for introspection (see UpdateStats).
	stats UpdateStats
}

func newTreeActor(cfg *Config, deps Deps, spec TreeSpec, ledger *Ledger, writer *stateWriter) actor.Producer {
	return func() actor.Actor {
		return &treeActor{cfg: cfg, deps: deps, spec: spec, ledger: ledger, writer: writer, engine: &scheduler.Engine{}}
	}
}

func (t *treeActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		t.start(ctx)
	case *actor.Restarting:
		// A restarted actor is a new treeActor whose timer has a new
		// generation: the old one's tick, if in flight, is ignored.
		t.stopTimer()
	case *actor.Stopping:
		t.stopTimer()
		t.closeState()
	case *admitOperation:
		ctx.Respond(t.admit(ctx, m))
	case *operationDone:
		t.done(ctx, m.id)
	case *treeTick:
		if m.gen == t.tickGen {
			t.scheduleTick(ctx, t.spec.Config.FairShareUpdatePeriod)
			t.tick(ctx)
		}
	case *updateDone:
		t.updated(ctx, m)
	case *countOperations:
		n, _ := t.adm.Counts(scheduler.PoolID(m.pool))
		ctx.Respond(n)
	case *introspectTree:
		ctx.Respond(t.introspect(m.scope))
	case *reconfigureTree:
		ctx.Respond(&reconfigured{err: t.reconfigure(ctx, m.spec)})
	case *updateInTree:
		res := t.updateOperation(ctx, m)
		if ctx.Sender() != nil {
			ctx.Respond(res)
		}
	}
}

func (t *treeActor) start(ctx actor.Context) {
	t.ops = map[scheduler.OperationID]*treeOp{}
	t.pools = map[scheduler.PoolID]*actor.PID{}
	t.poolStarving = map[scheduler.PoolID]scheduler.StarvationStatus{}
	t.ephemeral = map[scheduler.PoolID]ephemeralPool{}
	adm, err := scheduler.NewAdmission(t.spec.Config, t.spec.Pools)
	if err != nil {
		// The configuration was validated before the actor was spawned; a
		// failure here is a bug, and a restart would not fix it.
		panic(fmt.Sprintf("tree %s: admission: %v", t.spec.Name, err))
	}
	t.adm = adm
	if err := t.ledger.setTree(t.spec.Config, t.spec.Pools); err != nil {
		panic(fmt.Sprintf("tree %s: placement: %v", t.spec.Name, err))
	}
	t.state = scheduler.State{Pools: map[scheduler.PoolID]scheduler.PoolState{}}
	for name, v := range t.spec.Volumes {
		t.state.Pools[name] = scheduler.PoolState{AccumulatedVolume: v}
	}
	t.syncPoolActors(ctx)
	t.startTimer(ctx)
}

// syncPoolActors gives every configured pool an actor and stops the actors
// of pools that are gone.
func (t *treeActor) syncPoolActors(ctx actor.Context) {
	all := t.allPools()
	keep := poolSet(all)
	for name, pid := range t.pools {
		if !keep[name] {
			ctx.Stop(pid)
			delete(t.pools, name)
			delete(t.poolStarving, name)
		}
	}
	for _, p := range all {
		if _, ok := t.pools[p.Name]; !ok {
			t.pools[p.Name] = ctx.Spawn(actor.PropsFromProducer(newPoolActor(t.spec.Name, p.Name, t.deps)))
		}
	}
}

// startTimer starts the ticks of fair-share updates: one now, then one
// every fair_share_update_period. Each tick schedules the next as a
// one-shot timer (a time.Timer, whose Stop is safe from any goroutine:
// the pinned protoactor's repeating timer reads its state without
// synchronisation while cancel writes it, which the race detector
// reports when a tree stops or changes its period as a tick fires).
// A new timer generation makes a tick already in flight from the old
// timer ignored.
func (t *treeActor) startTimer(ctx actor.Context) {
	t.stopTimer()
	t.tickGen = tickGens.Add(1)
	t.scheduleTick(ctx, 0)
}

// stopTimer cancels the timer of the next tick, if one is set.
func (t *treeActor) stopTimer() {
	if t.cancel != nil {
		t.cancel()
	}
}

// tickGens numbers the tree actors' timers: unique in the process, so that
// neither a replaced timer's tick nor one of an actor's earlier
// incarnation (a supervision restart starts from a fresh treeActor) is
// taken for the current timer's.
var tickGens atomic.Uint64

// scheduleTick sends the current generation's next tick after delay,
// from the actor system's root context (the timer fires on its own
// goroutine, where the actor's context must not be used).
func (t *treeActor) scheduleTick(ctx actor.Context, delay time.Duration) {
	t.cancel = timer.NewTimerScheduler(ctx.ActorSystem().Root).SendOnce(delay, ctx.Self(), &treeTick{gen: t.tickGen})
}

func placementPools(pools []scheduler.PoolConfig) []placement.PoolSpec {
	out := make([]placement.PoolSpec, len(pools))
	for i, p := range pools {
		out[i] = placement.PoolSpec{Name: p.Name, Parent: p.Parent, Mode: p.Mode, ResourceLimits: p.ResourceLimits}
	}
	return out
}

func (t *treeActor) admit(ctx actor.Context, m *admitOperation) *admitResult {
	res := &admitResult{tree: t.spec.Name}
	if m.ephemeral != nil {
		if perr := t.ensureEphemeral(ctx, *m.ephemeral, m.user); perr != nil {
			res.err = perr
			return res
		}
	}
	st, err := t.adm.Admit(m.id, m.pool, scheduler.AdmitOptions{Vanilla: isVanilla(m.spec), Revived: m.revived})
	if err != nil {
		var lim *scheduler.LimitError
		switch {
		case errors.As(err, &lim):
			res.err = &pb.Error{Code: pb.ErrorCode_ERROR_CODE_LIMIT_EXCEEDED, Message: fmt.Sprintf("tree %s: %v", t.spec.Name, err), Field: "spec.pool"}
		default:
			res.err = &pb.Error{Code: pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, Message: fmt.Sprintf("tree %s: %v", t.spec.Name, err), Field: "spec.pool"}
		}
		return res
	}
	op := &treeOp{msg: m, admitted: t.cfg.Now(), pool: m.pool, weight: m.weight, limits: m.place.ResourceLimits}
	t.ops[m.id] = op
	if !m.revived {
		// Its jobs wait for its first status write (Ledger.unstored).
		t.ledger.markUnstored(m.id)
	}
	if st == scheduler.AdmissionRunning {
		if err := t.run(op); err != nil {
			_, _ = t.adm.Remove(m.id)
			delete(t.ops, m.id)
			t.ledger.forgetUnstored(m.id)
			res.err = &pb.Error{Code: pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, Message: fmt.Sprintf("tree %s: %v", t.spec.Name, err), Field: "spec.tasks"}
			return res
		}
		res.running = true
		res.lightweight = t.lightweight(m.id)
		return res
	}
	res.pending = t.tellQueue(op, m.id)
	return res
}

// run hands an admitted operation to the ledger.
func (t *treeActor) run(op *treeOp) error {
	place := op.msg.place
	place.Pool, place.ResourceLimits, place.Weight = op.pool, op.limits, 1
	// A revived operation starts no job until the nodes had the time to
	// report the jobs they still run for it (see adopt.go).
	place.Held = op.msg.revived && t.ledger.holding(t.cfg.Now())
	if op.weight != nil {
		place.Weight = *op.weight
	}
	if err := t.ledger.addOperation(place, op.msg.spec, op.msg.op, op.msg.done); err != nil {
		return err
	}
	op.running = true
	return nil
}

// tellQueue records and returns a pending operation's reason (nil when
// the admission runs it).
func (t *treeActor) tellQueue(op *treeOp, id scheduler.OperationID) *pb.PendingReason {
	info, ok := t.adm.Info(id)
	if !ok || info.State != scheduler.AdmissionPending {
		op.lastQueue, op.queued = nil, queueSpot{}
		return nil
	}
	op.queued = queueSpot{pool: info.QueuePool, pos: info.QueuePosition, running: info.QueueRunning, limit: info.QueueMaxRunning}
	op.lastQueue = t.pendingReason(op.queued, info.PendingReason)
	return op.lastQueue
}

// pendingReason is what an operation waiting at spot is told; reason is
// the admission's (scheduler.PendingQueue.Reason).
func (t *treeActor) pendingReason(spot queueSpot, reason string) *pb.PendingReason {
	return &pb.PendingReason{
		Tree: t.spec.Name, Pool: spot.pool, Limit: "max_running_operation_count", Value: int64(spot.limit),
		QueuePosition: int64(spot.pos),
		Message:       fmt.Sprintf("tree %s: %s; position %d in the queue of %s", t.spec.Name, reason, spot.pos, spot.pool),
	}
}

func (t *treeActor) done(ctx actor.Context, id scheduler.OperationID) {
	op, ok := t.ops[id]
	if !ok {
		return
	}
	delete(t.ops, id)
	if op.running {
		t.ledger.removeOperation(id)
	} else {
		t.ledger.forgetUnstored(id)
	}
	promoted, err := t.adm.Remove(id)
	if err != nil {
		t.cfg.Logger.Error("admission remove", "tree", t.spec.Name, "operation", id, "err", err)
	}
	t.dropEmptyEphemeral(ctx, op.pool)
	t.startAdmitted(ctx, promoted, "", "start promoted operation")
	t.refreshPending(ctx.Send)
}

// startAdmitted runs the operations the admission has just started (after
// an operation ended or moved, or a reconfiguration) and tells their
// actors, except skip's (its caller answers it); why names the occasion in
// the log of a start that fails.
func (t *treeActor) startAdmitted(ctx actor.Context, ids []scheduler.OperationID, skip scheduler.OperationID, why string) {
	for _, id := range ids {
		op := t.ops[id]
		if op == nil {
			continue
		}
		if err := t.run(op); err != nil {
			t.cfg.Logger.Error(why, "tree", t.spec.Name, "operation", id, "err", err)
			continue
		}
		op.lastQueue, op.queued = nil, queueSpot{}
		if id != skip {
			ctx.Send(op.msg.op, t.started(id))
		}
	}
}

// isVanilla: the operation may run as a lightweight operation.
func isVanilla(spec *pb.OperationSpec) bool {
	switch spec.GetType() {
	case pb.OperationType_OPERATION_TYPE_UNSPECIFIED, pb.OperationType_OPERATION_TYPE_VANILLA:
		return true
	}
	return false
}

// lightweight: the admitted operation runs as a lightweight operation.
func (t *treeActor) lightweight(id scheduler.OperationID) bool {
	info, _ := t.adm.Info(id)
	return info.Lightweight
}

// started is the message telling an operation that the tree runs it now.
func (t *treeActor) started(id scheduler.OperationID) *operationStarted {
	return &operationStarted{tree: t.spec.Name, lightweight: t.lightweight(id)}
}

// refreshPending tells the operations still waiting where they are now in
// their queues, when that changed. It walks the admission's queues once:
// O(pending operations), and a reason is built only for an operation whose
// spot changed (each operation used to be looked up in its queue, O(queue
// length) each, O(pending²) for every operation that ended).
func (t *treeActor) refreshPending(send func(*actor.PID, any)) {
	for q := range t.adm.PendingQueues() {
		reason := ""
		for pos, id := range q.Operations {
			op := t.ops[id]
			spot := queueSpot{pool: q.Pool, pos: pos, running: q.Running, limit: q.MaxRunning}
			if op == nil || (op.lastQueue != nil && op.queued == spot) {
				continue
			}
			if reason == "" {
				reason = q.Reason()
			}
			op.queued, op.lastQueue = spot, t.pendingReason(spot, reason)
			send(op.msg.op, &operationPending{tree: t.spec.Name, reason: op.lastQueue})
		}
	}
}

func (t *treeActor) tick(ctx actor.Context) {
	if t.updating {
		return
	}
	usage, nodes, held := t.ledger.snapshot(&t.usage) // read only below, before the next tick
	snap := &scheduler.Snapshot{
		Now:     t.cfg.Now(),
		Cluster: scheduler.NewClusterFromNodes(nodes),
		Tree:    t.spec.Config,
		Pools:   t.allPools(),
	}
	snap.Operations = t.opsBuf[:0]
	for _, u := range usage {
		op := t.ops[u.ID]
		if op == nil {
			continue
		}
		snap.Operations = append(snap.Operations, scheduler.Operation{
			ID:              u.ID,
			Pool:            u.Pool,
			Weight:          op.weight,
			StartTime:       op.admitted,
			Demand:          u.Demand,
			Usage:           u.Usage,
			ResourceLimits:  op.limits,
			JobResources:    u.JobResources,
			PendingJobCount: u.PendingJobCount,
		})
	}
	t.opsBuf = snap.Operations
	prev := t.state
	t.updating = true
	self, root, engine := ctx.Self(), ctx.ActorSystem().Root, t.engine
	// The update overwrites a Result nobody reads any more, when there is
	// one (see results.go): the tree's latest Result, which prev's maps
	// belong to, is never it.
	results := &t.ledger.results
	res := results.take()
	now := t.cfg.Now
	go func() {
		msg := &updateDone{nodes: len(nodes), ops: len(snap.Operations), snapshotLock: held}
		start := now()
		defer func() {
			msg.took = now().Sub(start)
			if r := recover(); r != nil {
				// res may be half-written: it is dropped, not given back.
				msg.res, msg.err = nil, fmt.Errorf("engine panic: %v\n%s", r, debug.Stack())
			}
			root.Send(self, msg)
		}()
		if err := engine.UpdateInto(res, snap, &prev); err != nil {
			results.giveBack(res) // UpdateInto leaves it as it was
			msg.err = err
			return
		}
		msg.res, msg.reuse = res, engine.LastReuse()
	}()
}

func (t *treeActor) updated(ctx actor.Context, m *updateDone) {
	t.updating = false
	t.stats.count(m.took, m.snapshotLock, m.reuse, m.err)
	if m.err != nil {
		// A failed (or panicked) update may leave the buffers half-written.
		t.engine = &scheduler.Engine{}
		t.cfg.Logger.Error("fair-share update failed", "tree", t.spec.Name, "err", m.err)
		t.deps.Events.Publish(t.spec.Name, subjects.EventFairShare, &pb.Event{
			Time: timestamppb.New(t.cfg.Now()), Tree: t.spec.Name,
			Kind: &pb.Event_FairShare{FairShare: &pb.FairShareSnapshot{Error: m.err.Error()}},
		})
		return
	}
	t.updates++
	t.state = m.res.State
	t.persistState(m.res.Now)
	t.stats.PublishLockSeconds += t.ledger.setResult(m.res).Seconds()
	t.operationStarvation(m.res)
	t.poolStarvation(m.res, func(pid *actor.PID, msg *poolResult) { ctx.Send(pid, msg) })
	now := t.cfg.Now()
	if now.Sub(t.lastFairShareEvent) >= t.cfg.FairShareEventPeriod {
		t.lastFairShareEvent = now
		snap := fairShareSnapshot(m.res, m.ops, m.nodes)
		snap.Reviving = t.ledger.revivingAt(m.res.Now)
		t.deps.Events.Publish(t.spec.Name, subjects.EventFairShare, &pb.Event{
			Time: timestamppb.New(now), Tree: t.spec.Name,
			Kind: &pb.Event_FairShare{FairShare: snap},
		})
	}
}

// fairShareSnapshot keeps the root and the pools of a result.
func fairShareSnapshot(res *scheduler.Result, ops, nodes int) *pb.FairShareSnapshot {
	out := &pb.FairShareSnapshot{OperationCount: int32(ops), NodeCount: int32(nodes)}
	for i := range res.Elements {
		e := &res.Elements[i]
		if e.Kind == scheduler.KindOperation {
			continue
		}
		out.Pools = append(out.Pools, elementShare(e))
	}
	return out
}

func elementShare(e *scheduler.ElementResult) *pb.ElementShare {
	return &pb.ElementShare{
		Name: e.Name, Parent: e.Parent, Kind: e.Kind.String(), Depth: int32(e.Depth),
		FairShare:               e.FairShare.Total.MaxComponent(),
		UsageShare:              e.UsageShare.MaxComponent(),
		DemandShare:             e.DemandShare.MaxComponent(),
		StrongGuaranteeShare:    e.FairShare.StrongGuarantee.MaxComponent(),
		IntegralShare:           e.FairShare.IntegralGuarantee.MaxComponent(),
		WeightProportionalShare: e.FairShare.WeightProportional.MaxComponent(),
		DominantResource:        e.DominantResource.String(),
		StarvationStatus:        e.StarvationStatus.String(),
		Weight:                  e.Weight,
	}
}
