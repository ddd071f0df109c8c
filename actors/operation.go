package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	timer "github.com/asynkron/protoactor-go/scheduler"
	"golang.org/x/time/rate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// errNotStored fails the changes that waited for an operation's write when
// its first write failed: the operation was never acknowledged, its
// admission is undone, and nothing of it is written.
var errNotStored = errors.New("actors: the operation was never stored (its first write failed) and is undone")

// opTree is an operation's place in one tree.
type opTree struct {
	name    string
	pool    scheduler.PoolID
	pid     *actor.PID
	ledger  *Ledger
	running bool
	// lightweight: it runs as a lightweight operation in this tree.
	lightweight bool
	pending     *pb.PendingReason
}

// admitted delivers the trees' admission answers to the operation actor,
// which persists the operation and only then answers the submitter.
type admitted struct {
	results []*admitResult
	reply   func(*pb.StartOperationResponse, *pb.Error)
}

// operationActor runs one operation's state machine.
type operationActor struct {
	cfg   *Config
	deps  Deps
	root  *actor.PID
	id    string
	spec  *pb.OperationSpec
	trees []*opTree

	state                      pb.OperationState
	submit, started, finished  time.Time
	total                      int64
	running, completed, failed int64
	aborted, lost, interrupted int64
	maxFailed                  int64
	err                        *pb.Error
	// failedIDs are the ids of the most recent failures counted in failed
	// (at most maxFailedIDs, oldest first), stored with the status: a
	// failure a restarted scheduler finds in the journal, or that a node
	// reports again, counts only when it is not among them.
	failedIDs []string
	// requestID is the submission's request id ("" for none), stored with
	// the status (see idempotent.go).
	requestID string

	acked bool
	// submitReply answers the submitter once the operation is stored; nil
	// after (it holds the request's reply subject for as long as it is
	// kept).
	submitReply func(*pb.StartOperationResponse, *pb.Error)
	persisting  bool
	dirty       bool
	// persistBackoff is the wait before the next try of a status write
	// that failed (0: the last write succeeded); persisting stays set
	// during it, so that the changes made meanwhile go with the retry.
	persistBackoff time.Duration
	// retired: the final status went to the root, which poisons the actor.
	retired bool
	// undone: the first write failed, so the operation was never
	// acknowledged; its admission is undone and nothing of it is written
	// after (a later write would store an operation its submitter was told
	// does not exist).
	undone bool
	// waitAcks are called once a write that includes their change is
	// stored; writeAcks belong to the write in flight.
	waitAcks, writeAcks []func(error)
	// updating is set while an update goes from tree to tree; queued
	// updates wait for it.
	updating bool
	queued   []*UpdateOperation
	// progress are the jobs that completed for good; progressUnsaved is
	// set when the last write does not have them all. stopProgress
	// cancels the pending progressTick (nil: none) and progressSlot is its
	// place in progressWrites.
	progress        jobProgress
	progressUnsaved bool
	stopProgress    func()
	progressSlot    *rate.Reservation
	progressWrites  *rate.Limiter
	// journal stores completions before their nodes acknowledge them (nil:
	// none). journaled numbers the completions sent to it; uncovered is set
	// while one of them (or, for a revived operation, one found in it at
	// start) is in no status write; finalStored once the final status is
	// stored (the journal is then told the operation is over, and a later
	// completion needs no journal).
	journal     *journalWriter
	journaled   uint64
	uncovered   bool
	finalStored bool
}

// opShared is what every operation actor shares: the pacing of the writes
// of completed jobs and the completions journal (either may be nil).
type opShared struct {
	writes  *rate.Limiter
	journal *journalWriter
}

// newOperationActor makes an operation's actor; revived is its stored
// status when it is revived after a restart (nil for a new one), progress
// the completed jobs stored with it (and found in the journal).
func newOperationActor(cfg *Config, deps Deps, root *actor.PID, id, requestID string, spec *pb.OperationSpec, trees []*opTree, submit time.Time,
	revived *pb.OperationStatus, progress jobProgress, shared opShared) actor.Producer {
	return func() actor.Actor {
		a := &operationActor{cfg: cfg, deps: deps, root: root, id: id, requestID: requestID, spec: spec, trees: trees, submit: submit,
			state: pb.OperationState_OPERATION_STATE_PENDING, progress: progress, completed: progress.count,
			progressWrites: shared.writes, journal: shared.journal}
		a.uncovered = revived != nil && shared.journal.owes(id)
		if revived != nil {
			j := revived.GetJobs()
			a.failed, a.aborted, a.interrupted = j.GetFailed(), j.GetAborted(), j.GetInterrupted()
			a.failedIDs = slices.Clone(revived.GetFailedJobIds())
			if revived.GetStartTime() != nil {
				a.started = revived.GetStartTime().AsTime()
			}
		}
		for _, t := range spec.GetTasks() {
			a.total += int64(t.GetJobCount())
		}
		a.maxFailed = int64(spec.GetMaxFailedJobCount())
		if a.maxFailed == 0 {
			a.maxFailed = int64(cfg.DefaultMaxFailedJobCount)
		}
		return a
	}
}

func (o *operationActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *admitted:
		o.onAdmitted(ctx, m)
	case *operationStarted:
		o.treeRunning(ctx, m.tree, m.lightweight)
	case *operationPending:
		for _, t := range o.trees {
			if t.name == m.tree {
				t.pending = m.reason
			}
		}
	case *jobStarted:
		o.running++
	case *jobFinished:
		o.onJobFinished(ctx, m)
	case *journalAgain:
		if !o.progress.has(m.ref.key.Task, m.ref.key.Index) {
			// Not its completed job (a copy of a job that runs or
			// completed elsewhere): nothing to store.
			ctx.Send(m.notify, &completionsStored{ids: []string{m.jobID}})
			return
		}
		o.journalFinish(ctx, &jobFinished{ref: m.ref, state: pb.JobState_JOB_STATE_COMPLETED, notify: m.notify, jobID: m.jobID})
	case *GetOperation:
		m.Reply(o.status(), nil)
	case *AbortOperation:
		o.onAbort(ctx, m)
	case *UpdateOperation:
		o.onUpdate(ctx, m)
	case *persisted:
		o.onPersisted(ctx, m)
	case persistRetry:
		o.persisting = false
		o.persist(ctx)
	case progressTick:
		o.stopProgress, o.progressSlot = nil, nil
		if o.progressUnsaved && !o.terminal() {
			o.persist(ctx)
		}
	}
}

func (o *operationActor) terminal() bool { return terminalState(o.state) }

// terminalState reports whether an operation in state s has finished.
func terminalState(s pb.OperationState) bool {
	switch s {
	case pb.OperationState_OPERATION_STATE_COMPLETED, pb.OperationState_OPERATION_STATE_FAILED, pb.OperationState_OPERATION_STATE_ABORTED:
		return true
	}
	return false
}

func (o *operationActor) onAdmitted(ctx actor.Context, m *admitted) {
	o.submitReply = m.reply
	// A revived operation was acknowledged before the restart.
	o.acked = m.reply == nil
	skipped := map[string]bool{}
	for _, r := range m.results {
		skipped[r.tree] = r.skipped
		for _, t := range o.trees {
			if t.name == r.tree {
				t.running, t.pending, t.lightweight = r.running, r.pending, r.lightweight
			}
		}
	}
	// An offloading tree that refused is not one of the operation's trees.
	o.trees = slices.DeleteFunc(o.trees, func(t *opTree) bool { return skipped[t.name] })
	if o.terminal() {
		// It finished while its trees admitted it (a revived operation
		// aborted, or its last job reported, meanwhile): it stays
		// finished, and the trees that admitted it after they were told
		// it was done forget it now.
		for _, t := range o.trees {
			ctx.Send(t.pid, &operationDone{id: scheduler.OperationID(o.id)})
		}
		o.persist(ctx)
		return
	}
	for _, t := range o.trees {
		if t.running {
			o.state = pb.OperationState_OPERATION_STATE_RUNNING
			if o.started.IsZero() { // a revived operation keeps its start
				o.started = o.cfg.Now()
			}
		}
	}
	o.publishState(pb.OperationState_OPERATION_STATE_UNSPECIFIED, o.pendingText())
	o.persist(ctx)
	o.completeIfDone(ctx)
}

// completeIfDone completes a running operation revived with every job
// completed before the restart, and fails one revived with more failed
// jobs than max_failed_job_count (the scheduler before the restart
// stopped before it ended it; the last failure may have been found in the
// completions journal): no job is left to end it.
func (o *operationActor) completeIfDone(ctx actor.Context) {
	if o.state != pb.OperationState_OPERATION_STATE_RUNNING {
		return
	}
	switch {
	case o.total > 0 && o.completed >= o.total:
		o.finish(ctx, pb.OperationState_OPERATION_STATE_COMPLETED, nil, "every job completed")
	case o.failed > o.maxFailed:
		e := pbErr(pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "",
			"%d jobs failed, more than max_failed_job_count %d (counted before the scheduler restarted)", o.failed, o.maxFailed)
		o.finish(ctx, pb.OperationState_OPERATION_STATE_FAILED, e, e.GetMessage())
	}
}

func (o *operationActor) pendingText() string {
	for _, t := range o.trees {
		if t.pending != nil {
			return t.pending.GetMessage()
		}
	}
	return ""
}

func (o *operationActor) treeRunning(ctx actor.Context, tree string, lightweight bool) {
	for _, t := range o.trees {
		if t.name == tree {
			t.running, t.pending, t.lightweight = true, nil, lightweight
		}
	}
	if o.state != pb.OperationState_OPERATION_STATE_PENDING {
		return
	}
	o.setState(ctx, pb.OperationState_OPERATION_STATE_RUNNING, "running slot free in tree "+tree)
	o.completeIfDone(ctx)
}

func (o *operationActor) onJobFinished(ctx actor.Context, m *jobFinished) {
	o.journalFinish(ctx, m)
	o.running--
	counted := true
	switch {
	case m.interrupted && m.state == pb.JobState_JOB_STATE_COMPLETED:
		o.interrupted++
	case m.state == pb.JobState_JOB_STATE_COMPLETED:
		if !o.progress.mark(o.spec, m.ref.key.Task, m.ref.key.Index) {
			// Completed twice (a copy the scheduler had given up on):
			// counted once.
			counted = false
			break
		}
		o.completed++
	case m.state == pb.JobState_JOB_STATE_FAILED:
		if m.lost {
			o.lost++
			break
		}
		var added bool
		if o.failedIDs, added = countFailure(o.failedIDs, m.ref.String()); added {
			o.failed++
		} else {
			// Counted already: a failure counted before a restart that
			// its node reports again (unacknowledged).
			counted = false
		}
	default:
		o.aborted++
	}
	if counted {
		// Completed jobs and every count are stored: a revived operation
		// goes on from them (max_failed_job_count counts the failures
		// before a restart).
		o.progressChanged(ctx)
	}
	if o.terminal() {
		o.notifyRoot(ctx)
		o.persist(ctx)
		return
	}
	switch {
	case o.completed >= o.total:
		o.finish(ctx, pb.OperationState_OPERATION_STATE_COMPLETED, nil, "every job completed")
	case m.state == pb.JobState_JOB_STATE_FAILED && !m.lost && counted && o.failed > o.maxFailed:
		e := pbErr(pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "",
			"%d jobs failed, more than max_failed_job_count %d; last: job %s on node %s: %s", o.failed, o.maxFailed, m.ref, m.node, m.reason)
		o.finish(ctx, pb.OperationState_OPERATION_STATE_FAILED, e, e.GetMessage())
	}
}

func (o *operationActor) onAbort(ctx actor.Context, m *AbortOperation) {
	if o.terminal() {
		m.Reply(nil, pbErr(pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "operation_id",
			"operation %s is already %s", o.id, stateName(o.state)))
		return
	}
	reason := m.Reason
	if reason == "" {
		reason = "aborted by user"
	}
	// The abort is answered once a write that has it is stored, as a
	// submission and an update are: an acknowledged abort survives a
	// restart (the operation is not revived to run again).
	o.ackStored("aborted, but the abort", func(e *pb.Error) {
		if e != nil {
			m.Reply(nil, e)
			return
		}
		m.Reply(&pb.AbortOperationResponse{Status: o.status()}, nil)
	})
	o.finish(ctx, pb.OperationState_OPERATION_STATE_ABORTED,
		pbErr(pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "", "%s", reason), reason)
}

// finish moves to a terminal state: the trees forget the operation, its
// running jobs are aborted on their nodes.
func (o *operationActor) finish(ctx actor.Context, to pb.OperationState, err *pb.Error, reason string) {
	o.cancelProgress()
	o.err = err
	o.finished = o.cfg.Now()
	for _, t := range o.trees {
		if o.journal != nil && !o.finalStored {
			// Its nodes' completions wait for the journal or the final
			// status (awaited), not for it to leave the ledger.
			t.ledger.markUnsettled(scheduler.OperationID(o.id))
		}
		for _, j := range t.ledger.runningJobRefs(scheduler.OperationID(o.id)) {
			o.deps.Signals.Signal(string(j.node), &pb.JobSignal{
				LeaderEpoch: o.deps.Epoch,
				Signal:      &pb.JobSignal_Abort{Abort: &pb.JobAbort{JobId: j.ref.String(), Reason: reason}},
			})
		}
		ctx.Send(t.pid, &operationDone{id: scheduler.OperationID(o.id)})
	}
	o.setState(ctx, to, reason)
}

func (o *operationActor) setState(ctx actor.Context, to pb.OperationState, reason string) {
	from := o.state
	o.state = to
	if to == pb.OperationState_OPERATION_STATE_RUNNING && o.started.IsZero() {
		o.started = o.cfg.Now()
	}
	o.publishState(from, reason)
	o.persist(ctx)
	o.notifyRoot(ctx)
}

func (o *operationActor) publishState(from pb.OperationState, reason string) {
	if len(o.trees) == 0 {
		return
	}
	t := o.trees[0]
	o.deps.Events.Publish(t.name, subjects.EventOperation, &pb.Event{
		Time: timestamppb.New(o.cfg.Now()), Tree: t.name, LeaderEpoch: o.deps.Epoch,
		Kind: &pb.Event_Operation{Operation: &pb.OperationEvent{
			OperationId: o.id, From: from, To: o.state, Pool: string(t.pool), Reason: reason, Error: o.err,
		}},
	})
}

func (o *operationActor) notifyRoot(ctx actor.Context) {
	ctx.Send(o.root, &statusUpdate{status: o.status(), acked: o.acked})
}

// retire hands the final status to the root, which answers for the
// operation from then on and poisons this actor. The actor does not stop
// itself: a request the root forwarded before it learned of the end is
// still in the mailbox, ahead of the poison pill, and gets its answer.
func (o *operationActor) retire(ctx actor.Context) {
	if o.retired {
		return
	}
	o.retired = true
	o.cancelProgress()
	ctx.Send(o.root, &statusUpdate{status: o.status(), final: true, acked: o.acked, undone: o.undone})
}

// progressChanged notes a newly completed job: the completed jobs are
// written with the next write, at the latest ProgressPersistPeriod from
// now, or later when the operations together would write more than
// ProgressWriteRate a second.
func (o *operationActor) progressChanged(ctx actor.Context) {
	o.progressUnsaved = true
	if o.stopProgress != nil || o.terminal() {
		return
	}
	delay := o.cfg.ProgressPersistPeriod
	if o.progressWrites != nil {
		now := o.cfg.Now()
		o.progressSlot = o.progressWrites.ReserveN(now, 1)
		delay = max(delay, o.progressSlot.DelayFrom(now))
	}
	o.stopProgress = timer.NewTimerScheduler(ctx.ActorSystem().Root).SendOnce(delay, ctx.Self(), progressTick{})
}

// cancelProgress drops the pending progressTick and gives its place in
// progressWrites back: a finished operation's last write has every
// completed job.
func (o *operationActor) cancelProgress() {
	if o.stopProgress != nil {
		o.stopProgress()
		o.stopProgress = nil
	}
	if o.progressSlot != nil {
		o.progressSlot.CancelAt(o.cfg.Now())
		o.progressSlot = nil
	}
}

// journalFinish sends a completed or failed job whose node waits for it
// to be stored to the journal; the journal tells the node once it is. An
// operation whose final status is stored needs no journal: the node is
// told at once.
func (o *operationActor) journalFinish(ctx actor.Context, m *jobFinished) {
	if m.notify == nil {
		return
	}
	if o.journal == nil || o.finalStored {
		ctx.Send(m.notify, &completionsStored{ids: []string{m.jobID}})
		return
	}
	o.journaled++
	o.uncovered = true
	o.journal.append(o.id, m.jobID, m.state == pb.JobState_JOB_STATE_FAILED, m.notify, o.journaled)
}

// persist writes the status in a goroutine; one write at a time, the latest
// status wins.
func (o *operationActor) persist(ctx actor.Context) {
	if o.undone {
		o.failAcks(errNotStored)
		return
	}
	if o.persisting {
		o.dirty = true
		return
	}
	o.persisting, o.dirty, o.progressUnsaved = true, false, false
	o.writeAcks, o.waitAcks = append(o.writeAcks, o.waitAcks...), nil
	st := o.status()
	covers := journalCover{owed: o.uncovered, idx: o.journaled}
	o.uncovered = false
	self, root, store, timeout := ctx.Self(), ctx.ActorSystem().Root, o.deps.Store, o.cfg.RequestTimeout
	go func() {
		c, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		root.Send(self, &persisted{status: st, err: store.Put(c, st), journal: covers})
	}()
}

func (o *operationActor) onPersisted(ctx actor.Context, m *persisted) {
	o.persisting = false
	o.journalPersisted(m)
	acks := o.writeAcks
	o.writeAcks = nil
	for _, ack := range acks {
		ack(m.err)
	}
	if !o.acked {
		// The first write: it answers the submitter (a revived operation,
		// acked from the start, has no first write).
		reply := o.submitReply
		if reply == nil {
			reply = func(*pb.StartOperationResponse, *pb.Error) {}
		}
		o.submitReply = nil
		if m.err != nil {
			// Not acknowledged, so nothing is lost: undo the admission,
			// once; the changes that waited for a later write fail with it.
			o.undone, o.dirty = true, false
			o.failAcks(errNotStored)
			for _, t := range o.trees {
				ctx.Send(t.pid, &operationDone{id: scheduler.OperationID(o.id)})
			}
			reply(nil, pbErr(pb.ErrorCode_ERROR_CODE_UNAVAILABLE, "", "operation %s could not be stored: %v", o.id, m.err))
			o.state = pb.OperationState_OPERATION_STATE_FAILED
			if errors.Is(m.err, context.DeadlineExceeded) {
				o.overwriteUnacknowledged(ctx, m.status, m.err)
			}
			o.retire(ctx)
			return
		}
		o.acked = true
		// Stored: its jobs may start now (see Ledger.unstored).
		for _, t := range o.trees {
			t.ledger.markStored(scheduler.OperationID(o.id))
		}
		reply(&pb.StartOperationResponse{OperationId: o.id}, nil)
		o.notifyRoot(ctx)
	} else if m.err != nil {
		// Tried again after a wait that doubles up to persistBackoffMax:
		// a store that refuses at once (JetStream down or full) is not
		// hammered by every operation. The first failure is a warning.
		log := o.cfg.Logger.Debug
		if o.persistBackoff == 0 {
			log = o.cfg.Logger.Warn
		}
		o.persistBackoff = min(max(2*o.persistBackoff, persistBackoffMin), persistBackoffMax)
		log("operation status not stored; trying again", "operation", o.id, "in", o.persistBackoff, "err", m.err)
		o.persisting, o.dirty = true, true
		timer.NewTimerScheduler(ctx.ActorSystem().Root).SendOnce(o.persistBackoff, ctx.Self(), persistRetry{})
		return
	}
	o.persistBackoff = 0
	if o.dirty {
		o.persist(ctx)
		return
	}
	if o.terminal() && o.running <= 0 {
		// Final status stored and no job left to hear from: the root keeps
		// the status, the actor goes.
		o.retire(ctx)
	}
}

// overwriteUnacknowledged writes an operation whose first write timed out
// once more, failed and without its request id: the first write may have
// been stored after all (its answer lost), and a restarted scheduler
// would then revive an operation its submitter was told does not exist,
// and which a retry of the submission started again. This write comes
// after that one, so it wins; it is best effort (logged when it fails).
func (o *operationActor) overwriteUnacknowledged(ctx actor.Context, first *pb.OperationStatus, cause error) {
	st := proto.Clone(first).(*pb.OperationStatus)
	st.State, st.RequestId = pb.OperationState_OPERATION_STATE_FAILED, ""
	st.Error = &pb.Error{Code: pb.ErrorCode_ERROR_CODE_UNAVAILABLE,
		Message: fmt.Sprintf("submission not acknowledged: its first write timed out (%v); this record replaces that write if it was stored after all", cause)}
	st.FinishTime = timestamppb.New(o.cfg.Now())
	store, timeout, logger, id := o.deps.Store, o.cfg.RequestTimeout, o.cfg.Logger, o.id
	go func() {
		c, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := store.Put(c, st); err != nil {
			logger.Warn("operation whose first write timed out not overwritten; a restart may revive it", "operation", id, "err", err)
		}
	}()
}

// journalPersisted tells the journal what a status write stored: the
// completions it covers, or that the operation is over.
func (o *operationActor) journalPersisted(m *persisted) {
	if o.journal == nil || o.finalStored {
		return
	}
	switch {
	case m.err != nil && !o.acked:
		// The first write failed: the operation is undone, never to run.
		o.finalStored = true
		o.journal.dropped(o.id)
	case m.err != nil:
		o.uncovered = o.uncovered || m.journal.owed
	case terminalState(m.status.GetState()):
		o.finalStored = true
		o.journal.dropped(o.id)
	case m.journal.owed:
		o.journal.covered(o.id, m.journal.idx)
	}
	if o.finalStored {
		for _, t := range o.trees {
			t.ledger.markSettled(scheduler.OperationID(o.id))
		}
	}
}

// ackStored answers a change once a write that has it is stored (reply
// with nil), or with the write's failure: FAILED_PRECONDITION when the
// operation was never stored, else UNAVAILABLE saying that what ("the
// update is in effect but") could not be stored yet, the write retried.
func (o *operationActor) ackStored(what string, reply func(*pb.Error)) {
	o.waitAcks = append(o.waitAcks, func(err error) {
		switch {
		case errors.Is(err, errNotStored):
			reply(pbErr(pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, "operation_id", "operation %s: %v", o.id, err))
		case err != nil:
			reply(pbErr(pb.ErrorCode_ERROR_CODE_UNAVAILABLE, "", "operation %s: %s could not be stored yet (retrying): %v", o.id, what, err))
		default:
			reply(nil)
		}
	})
}

// failAcks calls the acks that wait for a write with err.
func (o *operationActor) failAcks(err error) {
	acks := append(o.writeAcks, o.waitAcks...)
	o.writeAcks, o.waitAcks = nil, nil
	for _, ack := range acks {
		ack(err)
	}
}

// status builds the operation's status; the result is never modified after.
func (o *operationActor) status() *pb.OperationStatus {
	st := &pb.OperationStatus{
		Id: o.id, Spec: o.spec, State: o.state, Error: o.err,
		SubmitTime: timestamppb.New(o.submit),
		Jobs: &pb.JobCounters{
			Total: o.total, Running: max(o.running, 0), Completed: o.completed, Failed: o.failed, Aborted: o.aborted + o.lost,
			Interrupted: o.interrupted,
			Pending:     max(o.total-o.completed-max(o.running, 0), 0),
		},
	}
	if o.terminal() {
		st.Jobs.Pending = 0
	}
	st.CompletedJobs = o.progress.ranges()
	st.FailedJobIds = slices.Clone(o.failedIDs)
	st.RequestId = o.requestID
	if !o.started.IsZero() {
		st.StartTime = timestamppb.New(o.started)
	}
	if !o.finished.IsZero() {
		st.FinishTime = timestamppb.New(o.finished)
	}
	for _, t := range o.trees {
		rt := &pb.TreeRuntime{Tree: t.name, Pool: string(t.pool), PendingReason: t.pending, Lightweight: t.lightweight}
		res, release := t.ledger.results.acquire()
		if res != nil {
			if e, ok := res.Element(o.id); ok {
				rt.Weight = e.Weight
				rt.FairShare = e.FairShare.Total.MaxComponent()
				rt.UsageShare = e.UsageShare.MaxComponent()
				rt.DemandShare = e.DemandShare.MaxComponent()
				rt.StarvationStatus = e.StarvationStatus.String()
				if st.Usage == nil {
					st.Usage, st.Demand = wire.ToResources(e.ResourceUsage), wire.ToResources(e.ResourceDemand)
				}
			}
		}
		release()
		st.Trees = append(st.Trees, rt)
	}
	return st
}

// stateName is "completed" for OPERATION_STATE_COMPLETED.
func stateName(s pb.OperationState) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "OPERATION_STATE_"))
}
