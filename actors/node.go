package actors

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sharetree/sharetree/internal/failpoint"
	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/preemption"
	"github.com/sharetree/sharetree/subjects"
)

// nodeJob is a job the scheduler believes runs on the node.
type nodeJob struct {
	ref jobRef
	res scheduler.Resources
	op  *actor.PID
	// ledger is the ledger of the tree that started the job (the node may
	// have moved to another tree since).
	ledger *Ledger
	// sentAt is the heartbeat sequence whose response started the job: a
	// later heartbeat that does not report it means it vanished.
	sentAt uint64
	// seen is the sequence of the last heartbeat that reported it running.
	seen uint64
	// abortReason is set once the scheduler wants the job gone; the abort is
	// repeated in every response until the node reports the job finished.
	abortReason string
	// interrupt is set once the job is interrupted (preemption); it is
	// repeated in every response until the node reports the job finished.
	interrupt *pb.JobInterrupt
	// cause is why it was interrupted (for the finish event).
	cause pb.JobEndCause
}

// awaitingJob is a completed or failed job whose finish the node actor
// acknowledges once the completions journal stored it (see journal.go).
type awaitingJob struct {
	ledger *Ledger
	op     scheduler.OperationID
	since  time.Time
	stored bool
}

// nodeActor is one exec node's session.
type nodeActor struct {
	cfg  *Config
	deps Deps
	id   string
	live *nodeLiveness
	// passes counts the heartbeats in their pass across all nodes (see
	// Config.MaxHeartbeatPasses); each node actor adds its own.
	passes *atomic.Int64
	dir    func() *treeDirectory
	// onOffline and onLost tell the router the node went offline and
	// was declared lost (it counts both and forgets a lost node).
	onOffline func()
	onLost    func(id string)
	// revival is a restarted scheduler's wait for its nodes' jobs (nil:
	// it revived nothing unfinished). unresolved counts the jobs of the
	// heartbeat being handled that were left for an operation still being
	// revived; revivalReported is set once the node reported all its jobs
	// for good (reportRevival).
	revival         *revival
	unresolved      int
	revivalReported bool
	// roster keeps the nodes that may run jobs (nil: none is kept);
	// rostered says where this node is in it: the node gets no job until
	// rosterDone.
	roster   *roster
	rostered rosterState
	// rosterFailures counts the failed adds in a row (the first is
	// logged).
	rosterFailures int

	// tree is the node's tree, nil while it belongs to none; dirSeen is the
	// directory it was resolved from.
	tree    *nodeTree
	dirSeen *treeDirectory

	incarnation string
	// retired are the node's earlier incarnations, the latest last (at
	// most maxRetiredIncarnations): a heartbeat of one arriving late (sent
	// by the agent's previous run before it died) is stale, and must not
	// take the node back to it and lose the running incarnation's jobs.
	retired   []string
	lastSeq   uint64
	total     scheduler.Resources
	tags      []string
	online    bool
	lastHeard time.Time
	jobs      map[string]*nodeJob
	// awaiting are the completed and failed jobs the node reported whose
	// finish is acknowledged once stored in the completions journal (held
	// by value: no allocation per completion on the heartbeat path).
	awaiting map[string]awaitingJob
	// period is the heartbeat period every response carries (immutable,
	// shared by the responses).
	period *durationpb.Duration
	// inflight is the heartbeat waiting for the placer's answer; deferred
	// holds the messages that arrived meanwhile.
	inflight *heartbeatInFlight
	deferred []any
	// round counts the passes asked of the placer.
	round uint64
	// jobEvents collects the job transitions of one heartbeat (or of the
	// node's loss), by the tree that started each job (a node may have
	// left that tree since, or belong to none); flushJobEvents publishes
	// one event per tree.
	jobEvents []treeJobEvents
	// hb is the heartbeat in flight (inflight points to it) and buf the
	// buffers every heartbeat reuses: the node's job ids, the jobs that
	// left, and the placer's request with its slices, which are the
	// placer's until it answers (a request given up on is left to it: req
	// and its slices are allocated anew).
	hb  heartbeatInFlight
	buf struct {
		ids, checkIDs []string
		left          []leftJob
		req           *passRequest
	}
}

// rosterState is where a node actor's node is in the roster.
type rosterState int

const (
	rosterNone   rosterState = iota // not known to be there
	rosterAdding                    // being added
	rosterDone                      // there: the node may get jobs
)

// rosterAdded is the outcome of adding the node to the roster.
type rosterAdded struct{ err error }

func newNodeActor(cfg *Config, deps Deps, id string, live *nodeLiveness, passes *atomic.Int64, dir func() *treeDirectory, onOffline func(), onLost func(string), rv *revival, ro *roster) actor.Producer {
	return func() actor.Actor {
		return &nodeActor{cfg: cfg, deps: deps, id: id, live: live, passes: passes, dir: dir, onOffline: onOffline, onLost: onLost, jobs: map[string]*nodeJob{},
			period: durationpb.New(cfg.HeartbeatPeriod), revival: rv, roster: ro}
	}
}

// joinRoster makes sure the roster holds the node before it gets a job:
// known there already, or added now (rosterAdded comes back; a failed add
// is tried again at the next heartbeat).
func (n *nodeActor) joinRoster(ctx actor.Context) {
	if n.roster == nil || n.rostered != rosterNone {
		return
	}
	n.roster.heard(n.id)
	if n.roster.has(n.id) {
		n.rostered = rosterDone
		return
	}
	if n.deps.Storage != nil && !n.deps.Storage.Available() {
		return // no write would take; no job starts meanwhile anyway
	}
	n.rostered = rosterAdding
	root, self := ctx.ActorSystem().Root, ctx.Self()
	n.roster.add(n.id, func(err error) { root.Send(self, &rosterAdded{err: err}) })
}

// mayStart reports whether the node may get jobs: the stores take writes
// and the roster holds it.
func (n *nodeActor) mayStart() bool {
	return (n.deps.Storage == nil || n.deps.Storage.Available()) && (n.roster == nil || n.rostered == rosterDone)
}

func (n *nodeActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *passResult:
		n.finishHeartbeat(ctx, m)
		n.drainDeferred(ctx)
	case *rosterAdded:
		if m.err != nil {
			n.rostered = rosterNone
			if n.rosterFailures++; n.rosterFailures == 1 {
				n.cfg.Logger.Warn("node not added to the node roster; it gets no job until it is (tried again at each heartbeat)", "node", n.id, "err", m.err)
			}
		} else {
			if n.rosterFailures > 0 {
				n.cfg.Logger.Info("node added to the node roster", "node", n.id, "failed_tries", n.rosterFailures)
			}
			n.rostered, n.rosterFailures = rosterDone, 0
		}
	case *completionsStored:
		for _, id := range m.ids {
			if a, ok := n.awaiting[id]; ok {
				a.stored = true
				n.awaiting[id] = a
			}
		}
	case *actor.Stopping:
		if n.inflight != nil {
			n.abandon(ctx, pbErr(pb.ErrorCode_ERROR_CODE_UNAVAILABLE, "", "node %s: session stopped", n.id))
		}
		if n.online && n.tree != nil {
			n.tree.ledger.removeNode(scheduler.NodeID(n.id))
		}
	default:
		if n.inflight != nil && n.cfg.Now().Sub(n.inflight.since) > n.cfg.RequestTimeout {
			// The placer did not answer (its tree was removed): give up on
			// the heartbeat; the agent sends the next one.
			n.abandon(ctx, pbErr(pb.ErrorCode_ERROR_CODE_UNAVAILABLE, "", "node %s: the tree's placer did not answer within %s", n.id, n.cfg.RequestTimeout))
			n.buf.req = nil // still the placer's
			n.drainDeferred(ctx)
		}
		if n.inflight != nil {
			// One heartbeat at a time: what arrives while the placer works
			// on the current one waits its turn.
			n.deferMessage(m)
			return
		}
		n.handle(ctx, m)
	}
}

// abandon gives up the heartbeat in flight with an error. The jobs that
// left are already gone from the node actor's books, and the agent's next
// report of them is only acknowledged, so their operations hear of them
// now; the placer releases their resources if it ever runs the pass, and
// its late answer is recognised by its round.
func (n *nodeActor) abandon(ctx actor.Context, e *pb.Error) {
	h := n.inflight
	h.reply(nil, e)
	n.notifyLeft(ctx, h.left)
	n.flushJobEvents()
	clear(h.left)
	h.resp, h.reply = nil, nil
	n.setInflight(nil)
}

// setInflight records the heartbeat in flight, and publishes when it went
// to the placer for the liveness monitor.
func (n *nodeActor) setInflight(h *heartbeatInFlight) {
	switch {
	case n.inflight == nil && h != nil:
		n.passes.Add(1)
	case n.inflight != nil && h == nil:
		n.passes.Add(-1)
	}
	n.inflight = h
	var since int64
	if h != nil {
		since = n.live.stamp(h.since)
	}
	n.live.inflight.Store(since)
}

// deferMessage keeps a heartbeat or a liveness check that arrived during a
// pass for after it. At most one of each waits: a heartbeat is the node's
// whole state, so a newer one supersedes the one waiting, which is
// answered UNAVAILABLE at once (its agent gave up on it, or sent two at a
// time); a second check adds nothing. A node flooding heartbeats holds no
// more memory than one that does not.
func (n *nodeActor) deferMessage(m any) {
	switch m := m.(type) {
	case *NodeHeartbeat:
		for i, d := range n.deferred {
			if old, ok := d.(*NodeHeartbeat); ok {
				old.Reply(nil, pbErr(pb.ErrorCode_ERROR_CODE_UNAVAILABLE, "",
					"node %s: heartbeat %d superseded by heartbeat %d while another was being processed",
					n.id, old.Heartbeat.GetSequence(), m.Heartbeat.GetSequence()))
				n.deferred[i] = m
				return
			}
		}
		n.deferred = append(n.deferred, m)
	case *nodeCheck:
		for _, d := range n.deferred {
			if _, ok := d.(*nodeCheck); ok {
				return
			}
		}
		n.deferred = append(n.deferred, m)
	}
}

// drainDeferred handles the messages that arrived during a pass, in
// arrival order, until one of them starts another pass.
func (n *nodeActor) drainDeferred(ctx actor.Context) {
	for n.inflight == nil && len(n.deferred) > 0 {
		next := n.deferred[0]
		n.deferred = n.deferred[1:]
		n.handle(ctx, next)
	}
}

func (n *nodeActor) handle(ctx actor.Context, msg any) {
	switch m := msg.(type) {
	case *NodeHeartbeat:
		if err := n.heartbeat(ctx, m); err != nil {
			m.Reply(nil, err)
			n.flushJobEvents()
		}
	case *nodeCheck:
		n.check(ctx)
	}
}

// heartbeat reconciles a report with what the node actor believes and asks
// the tree's placer for the ledger work; finishHeartbeat completes the
// response when the placer answers. A refused heartbeat returns its error
// and changes nothing.
func (n *nodeActor) heartbeat(ctx actor.Context, m *NodeHeartbeat) *pb.Error {
	hb := m.Heartbeat
	total, err := wire.Resources("resource_limits", hb.GetResourceLimits())
	if err != nil {
		return pbErr(pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "resource_limits", "%v", err)
	}
	if hb.GetIncarnation() == "" {
		return pbErr(pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "incarnation", "heartbeat of node %s has no incarnation", n.id)
	}
	now := n.cfg.Now()
	if hb.GetIncarnation() != n.incarnation {
		if slices.Contains(n.retired, hb.GetIncarnation()) {
			return pbErr(pb.ErrorCode_ERROR_CODE_STALE_HEARTBEAT, "incarnation",
				"heartbeat %d of node %s is of its incarnation %s, which %s replaced", hb.GetSequence(), n.id, hb.GetIncarnation(), n.incarnation)
		}
		if n.incarnation != "" {
			n.vanishAll(ctx, fmt.Sprintf("node %s restarted (incarnation %s → %s)", n.id, n.incarnation, hb.GetIncarnation()))
			n.retired = append(n.retired, n.incarnation)
			if len(n.retired) > maxRetiredIncarnations {
				n.retired = slices.Delete(n.retired, 0, len(n.retired)-maxRetiredIncarnations)
			}
		}
		clear(n.awaiting) // the node's new incarnation reports none of them
		n.incarnation, n.lastSeq = hb.GetIncarnation(), 0
	} else if hb.GetSequence() <= n.lastSeq {
		return pbErr(pb.ErrorCode_ERROR_CODE_STALE_HEARTBEAT, "sequence",
			"heartbeat %d of node %s is not newer than %d, already processed", hb.GetSequence(), n.id, n.lastSeq)
	}
	seq := hb.GetSequence()
	n.lastSeq, n.lastHeard = seq, now
	n.live.heard.Store(n.live.stamp(now))
	n.joinRoster(ctx)
	n.unresolved = 0
	tags := n.tags
	if !slices.IsSorted(hb.GetTags()) || !slices.Equal(hb.GetTags(), n.tags) {
		tags = slices.Clone(hb.GetTags())
		slices.Sort(tags)
	}
	if dir := n.dir(); !n.online || total != n.total || !slices.Equal(tags, n.tags) || dir != n.dirSeen {
		n.total, n.tags, n.online, n.dirSeen = total, tags, true, dir
		n.join(dir)
	}
	resp := &pb.HeartbeatResponse{LeaderEpoch: n.deps.Epoch, HeartbeatPeriod: n.period}

	// Finished jobs: acknowledge every one; act on those we believed running.
	req := n.buf.req
	if req == nil {
		req = &passRequest{}
		n.buf.req = req
	}
	left, done, check, jobs := n.buf.left[:0], req.done[:0], req.check[:0], req.jobs[:0]
	checkIDs := n.buf.checkIDs[:0]
	for _, f := range hb.GetFinishedJobs() {
		if a, ok := n.awaiting[f.GetJobId()]; ok {
			if n.awaited(a, now) {
				resp.AcknowledgedFinishedJobs = append(resp.AcknowledgedFinishedJobs, f.GetJobId())
				delete(n.awaiting, f.GetJobId())
			}
			continue
		}
		j, ok := n.jobs[f.GetJobId()]
		if !ok {
			if n.unknownFinished(ctx, f, now) {
				resp.AcknowledgedFinishedJobs = append(resp.AcknowledgedFinishedJobs, f.GetJobId())
			}
			continue
		}
		delete(n.jobs, f.GetJobId())
		reason := f.GetError()
		if j.abortReason != "" && reason == "" {
			reason = j.abortReason
		}
		interrupted := f.GetInterrupted() || j.interrupt != nil
		if interrupted && reason == "" && j.interrupt != nil {
			reason = "interrupted: " + j.interrupt.GetReason()
		}
		l := leftJob{id: f.GetJobId(), job: j, state: f.GetState(), exit: f.GetExitCode(), reason: reason, interrupted: interrupted}
		if l.await = n.journaling() && journaled(l.state, interrupted); l.await {
			n.await(f.GetJobId(), j.ledger, j.ref.key.Operation, now)
		} else {
			resp.AcknowledgedFinishedJobs = append(resp.AcknowledgedFinishedJobs, f.GetJobId())
		}
		left = append(left, l)
	}
	// Running jobs: known ones are marked seen, unknown ones adopted or
	// aborted (see adopt.go).
	for _, r := range hb.GetRunningJobs() {
		if j, ok := n.jobs[r.GetJobId()]; ok {
			j.seen = seq
		} else if reason := n.unknownRunning(ctx, r.GetJobId(), seq, now); reason != "" {
			resp.JobsToAbort = append(resp.JobsToAbort, &pb.JobAbort{JobId: r.GetJobId(), Reason: reason})
		}
	}
	n.reportRevival(now)
	// Jobs we believe running that the node no longer reports vanished;
	// ids keeps the others.
	ids := n.sortedJobIDs(n.buf.ids[:0])
	n.buf.ids = ids
	kept := ids[:0]
	for _, id := range ids {
		j := n.jobs[id]
		if j.seen == seq || j.sentAt >= seq {
			kept = append(kept, id)
			continue
		}
		delete(n.jobs, id)
		left = append(left, leftJob{id: id, job: j, state: pb.JobState_JOB_STATE_FAILED, reason: "vanished: not reported by the node", lost: true})
	}
	ids = kept
	// Jobs that left: the node's tree releases its own in the pass, the
	// ledgers of other trees (the node moved) at once.
	for _, l := range left {
		f := l.finishing()
		if n.tree != nil && l.job.ledger == n.tree.ledger {
			done = append(done, f)
		} else {
			l.job.ledger.release([]finishing{f})
		}
	}
	// What is left runs on: its resources are taken, and its operations are
	// checked to still be scheduled.
	free := total
	for _, id := range ids {
		j := n.jobs[id]
		free = free.Sub(j.res)
		if n.tree != nil && j.ledger == n.tree.ledger {
			jobs = append(jobs, preemption.NodeJob{ID: preemption.JobID(id), Key: j.ref.key, Resources: j.res,
				Leaving: j.abortReason != "" || j.interrupt != nil})
		}
		switch {
		case j.abortReason != "":
		case n.tree != nil && j.ledger == n.tree.ledger:
			check = append(check, j.ref.key.Operation)
			checkIDs = append(checkIDs, id)
		case !j.ledger.hasOperation(j.ref.key.Operation):
			j.abortReason = "operation finished"
		}
	}
	n.buf.left, n.buf.checkIDs = left, checkIDs
	n.round++
	n.hb = heartbeatInFlight{reply: m.Reply, resp: resp, left: left, ids: ids, checkIDs: checkIDs, seq: seq, since: now, round: n.round}
	n.setInflight(&n.hb)
	if n.tree == nil {
		// In no tree: nothing to place.
		req.done, req.check, req.jobs = done, check, jobs
		n.finishHeartbeat(ctx, &passResult{round: n.round, gone: make([]bool, len(checkIDs))})
		return nil
	}
	*req = passRequest{
		round: n.round, node: scheduler.NodeID(n.id), done: done, check: check,
		free: free.Max(scheduler.Resources{}), maxJobs: n.cfg.MaxJobsPerHeartbeat,
		total: total, jobs: jobs, now: now,
		hold: !n.mayStart(),
	}
	ctx.Request(n.tree.placer, req)
	return nil
}

// interruptJob starts a job's interruption: a signal now, the interrupt
// in this and every later response until the job leaves, and an event.
func (n *nodeActor) interruptJob(o interruptOrder) {
	j := n.jobs[o.jobID]
	if j == nil || j.abortReason != "" || j.interrupt != nil {
		return
	}
	j.interrupt = &pb.JobInterrupt{JobId: o.jobID, Timeout: durationpb.New(o.timeout), Reason: o.reason}
	j.cause = pb.JobEndCause_JOB_END_CAUSE_PREEMPTION
	if o.graceful {
		j.cause = pb.JobEndCause_JOB_END_CAUSE_GRACEFUL_PREEMPTION
	}
	n.deps.Signals.Signal(n.id, &pb.JobSignal{LeaderEpoch: n.deps.Epoch, Signal: &pb.JobSignal_Interrupt{Interrupt: j.interrupt}})
	n.deps.Events.Publish(n.tree.name, subjects.EventPreemption, &pb.Event{
		Time: timestamppb.New(n.cfg.Now()), Tree: n.tree.name, LeaderEpoch: n.deps.Epoch,
		Kind: &pb.Event_Preemption{Preemption: &pb.PreemptionEvent{
			JobId: o.jobID, OperationId: string(j.ref.key.Operation), NodeId: n.id, Graceful: o.graceful,
			ForOperationId: string(o.forOp), Reason: o.reason, Timeout: j.interrupt.GetTimeout(),
		}},
	})
	n.cfg.Logger.Debug("job interrupted", "node", n.id, "job", o.jobID, "graceful", o.graceful, "for", o.forOp, "timeout", o.timeout)
}

// join (re)resolves the node's tree from the directory and registers the
// node's resources and tags in that tree's ledger.
func (n *nodeActor) join(dir *treeDirectory) {
	tree, matches := dir.resolve(n.tags)
	if tree == nil && n.tree != nil || tree != nil && n.tree != nil && tree.ledger != n.tree.ledger {
		n.tree.ledger.removeNode(scheduler.NodeID(n.id))
	}
	switch {
	case tree == nil && len(matches) > 1:
		n.cfg.Logger.Warn("node matches the node_tag_filter of several trees; it joins none", "node", n.id, "tags", n.tags, "trees", matches)
	case tree == nil:
		n.cfg.Logger.Warn("node matches no tree's node_tag_filter", "node", n.id, "tags", n.tags)
	case n.tree == nil || n.tree.name != tree.name:
		n.cfg.Logger.Info("node joins tree", "node", n.id, "tree", tree.name)
	}
	n.tree = tree
	if tree != nil {
		tree.ledger.setNode(scheduler.Node{ID: scheduler.NodeID(n.id), Resources: n.total, Tags: n.tags})
	}
}

// heartbeatInFlight is a heartbeat waiting for the placer.
type heartbeatInFlight struct {
	reply func(*pb.HeartbeatResponse, *pb.Error)
	resp  *pb.HeartbeatResponse
	left  []leftJob
	// ids are the jobs that run on, sorted; checkIDs those of them the
	// pass checks, in the order of its gone answers.
	ids, checkIDs []string
	seq           uint64
	since         time.Time
	// round is the pass asked for it.
	round uint64
}

// finishHeartbeat completes the heartbeat in flight with the placer's
// answer: aborts of jobs whose operation is gone, the jobs started, the
// notifications and the job event.
func (n *nodeActor) finishHeartbeat(ctx actor.Context, res *passResult) {
	h := n.inflight
	if h == nil || h.round != res.round {
		// An answer after its heartbeat was given up (another may be in
		// flight now): the jobs it started never reach the node, so they
		// go back to pending.
		if res.ledger == nil || len(res.started) == 0 {
			return
		}
		done := make([]finishing, len(res.started))
		for i, st := range res.started {
			done[i] = finishing{ref: st.ref, requeue: true}
		}
		res.ledger.release(done)
		return
	}
	n.setInflight(nil)
	resp, reply := h.resp, h.reply
	h.resp, h.reply = nil, nil // h is reused by the next heartbeat
	for k, id := range h.checkIDs {
		if res.gone[k] {
			n.jobs[id].abortReason = "operation finished"
		}
	}
	for _, o := range res.interrupts {
		n.interruptJob(o)
	}
	for _, id := range h.ids {
		if j := n.jobs[id]; j.abortReason == "" && j.interrupt != nil {
			resp.JobsToInterrupt = append(resp.JobsToInterrupt, j.interrupt)
		}
		if j := n.jobs[id]; j.abortReason != "" {
			resp.JobsToAbort = append(resp.JobsToAbort, &pb.JobAbort{JobId: id, Reason: j.abortReason})
		}
	}
	for _, s := range res.started {
		n.jobs[s.spec.GetJobId()] = &nodeJob{ref: s.ref, res: s.res, op: s.op, ledger: n.tree.ledger, sentAt: h.seq}
		resp.JobsToStart = append(resp.JobsToStart, s.spec)
	}
	// The node is answered first: the operations' bookkeeping and the job
	// event are not on its round trip (each message to an idle operation
	// actor starts a goroutine the reply would queue behind). The messages
	// to an operation keep their order: they all come from this actor.
	if len(res.started) > 0 {
		failpoint.Hit(failpoint.StartsBeforeReply, nil)
	}
	reply(resp, nil)
	n.notifyLeft(ctx, h.left)
	clear(h.left) // the buffer's, reused: hold no finished jobs
	for _, s := range res.started {
		ctx.Send(s.op, &jobStarted{ref: s.ref, node: n.id})
		n.publishJob(n.tree.name, s.spec.GetJobId(), s.ref, pb.JobState_JOB_STATE_RUNNING, 0, "", pb.JobEndCause_JOB_END_CAUSE_UNSPECIFIED)
	}
	n.flushJobEvents()
}

// leftJob is a job that left the node: finished, or vanished or lost.
type leftJob struct {
	id     string
	job    *nodeJob
	state  pb.JobState
	exit   int32
	reason string
	lost   bool
	// interrupted: the job finished after an interruption; its work runs
	// again as a new attempt even when it completed.
	interrupted bool
	// await: the job completed or failed and is acknowledged once that is
	// stored (n.awaiting).
	await bool
}

// journaled reports whether a job that finished in state, interrupted or
// not, is stored in the completions journal before its finish is
// acknowledged: a completion (an interrupted job's work runs again) and a
// failure (it counts towards max_failed_job_count).
func journaled(state pb.JobState, interrupted bool) bool {
	return state == pb.JobState_JOB_STATE_COMPLETED && !interrupted || state == pb.JobState_JOB_STATE_FAILED
}

// finishing is the ledger release of a job that left: all but completed
// jobs go back to pending (unless their operation is gone).
func (l leftJob) finishing() finishing {
	return finishing{ref: l.job.ref, requeue: l.state != pb.JobState_JOB_STATE_COMPLETED || l.interrupted}
}

// notifyLeft tells the operations and the event stream about jobs that
// left, once the ledger has released them.
func (n *nodeActor) notifyLeft(ctx actor.Context, left []leftJob) {
	for _, l := range left {
		f := &jobFinished{ref: l.job.ref, node: n.id, state: l.state, exitCode: l.exit, reason: l.reason, lost: l.lost, interrupted: l.interrupted}
		if l.await {
			f.notify, f.jobID = ctx.Self(), l.id
		}
		ctx.Send(l.job.op, f)
		n.publishJob(l.job.ledger.tree, l.id, l.job.ref, l.state, l.exit, l.reason, l.job.cause)
	}
}

// sortedJobIDs appends the node's job ids to ids, sorted.
func (n *nodeActor) sortedJobIDs(ids []string) []string {
	for id := range n.jobs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// treeJobEvents are the job transitions of one tree for the next event.
type treeJobEvents struct {
	tree string
	jobs []*pb.JobEvent
}

// publishJob records a job transition for the next job event of tree, the
// tree that started the job; id is ref's string.
func (n *nodeActor) publishJob(tree, id string, ref jobRef, state pb.JobState, exit int32, reason string, cause pb.JobEndCause) {
	ev := &pb.JobEvent{
		JobId: id, OperationId: string(ref.key.Operation), NodeId: n.id,
		State: state, Reason: reason, ExitCode: exit, Cause: cause,
	}
	for i := range n.jobEvents {
		if g := &n.jobEvents[i]; g.tree == tree {
			g.jobs = append(g.jobs, ev)
			return
		}
	}
	n.jobEvents = append(n.jobEvents, treeJobEvents{tree: tree, jobs: []*pb.JobEvent{ev}})
}

// flushJobEvents publishes the recorded job transitions, one event per
// tree, in the order the trees were first recorded.
func (n *nodeActor) flushJobEvents() {
	for _, g := range n.jobEvents {
		n.deps.Events.Publish(g.tree, subjects.EventJob, &pb.Event{
			Time: timestamppb.New(n.cfg.Now()), Tree: g.tree, LeaderEpoch: n.deps.Epoch,
			Kind: &pb.Event_Jobs{Jobs: &pb.JobEvents{NodeId: n.id, Jobs: g.jobs}},
		})
	}
	clear(n.jobEvents)
	n.jobEvents = n.jobEvents[:0]
}

// vanishAll fails every job believed on the node.
func (n *nodeActor) vanishAll(ctx actor.Context, reason string) {
	var left []leftJob
	for _, id := range n.sortedJobIDs(nil) {
		left = append(left, leftJob{id: id, job: n.jobs[id], state: pb.JobState_JOB_STATE_FAILED, reason: reason, lost: true})
		delete(n.jobs, id)
	}
	for _, l := range left {
		l.job.ledger.release([]finishing{l.finishing()})
	}
	n.notifyLeft(ctx, left)
}

// maxRetiredIncarnations bounds the earlier incarnations a node actor
// remembers to refuse their late heartbeats (see nodeActor.retired).
const maxRetiredIncarnations = 8

// check takes a silent node offline, and forgets a lost one.
func (n *nodeActor) check(ctx actor.Context) {
	if n.lastHeard.IsZero() {
		return
	}
	last := n.lastHeard
	if shed := n.live.shed.Load(); shed > n.live.stamp(last) {
		last = n.live.at(shed) // its heartbeats are shed: alive, not heard
	}
	silent := n.cfg.Now().Sub(last)
	if n.online && silent >= n.cfg.NodeOfflineTimeout {
		n.online = false
		if n.tree != nil {
			n.tree.ledger.removeNode(scheduler.NodeID(n.id))
		}
		n.onOffline()
		n.cfg.Logger.Warn("node offline", "node", n.id, "silent", silent)
	}
	if silent >= n.cfg.NodeLostTimeout {
		n.cfg.Logger.Warn("node lost", "node", n.id, "silent", silent, "jobs", len(n.jobs))
		n.vanishAll(ctx, fmt.Sprintf("node %s lost: silent for %s", n.id, silent.Round(time.Second)))
		n.flushJobEvents()
		n.roster.remove(n.id) // before the router forgets it: a new session of the node adds it after
		n.onLost(n.id)
		ctx.Stop(ctx.Self())
	}
}
