package actors

import (
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/placement"
)

// A scheduler that restarts knows its operations (revived from the store)
// but not their jobs: the nodes do. Each node actor adopts the jobs its
// node reports that it did not start: a running job becomes the
// operation's running job on that node, and a job that completed while
// no scheduler listened counts as completed. Until the revival is over
// (every node of the roster reported its jobs, or Config.JobRevivalTimeout
// passed: see revival), the revived operations start no new jobs (the
// ledger holds them), so that a job whose node has not reported yet is not
// started a second time elsewhere; reported jobs whose operation is not
// scheduled yet are left running and reported again.

// adoptOutcome is what became of a job a node reported that its node
// actor did not start.
type adoptOutcome int

const (
	// adoptNotScheduled: the job's operation is not scheduled in this tree
	// (finished, unknown, or not admitted yet).
	adoptNotScheduled adoptOutcome = iota
	// adoptTaken: the operation runs (adoptedJob.op is its actor), but
	// the job is not pending: it runs
	// elsewhere, is done, or is out of the operation's range.
	adoptTaken
	// adoptDone: the job is the operation's now.
	adoptDone
)

// adoptedJob is a job the ledger adopted.
type adoptedJob struct {
	res    scheduler.Resources
	op     *actor.PID
	claims *claimView
}

// adopt makes a job the node reports, and that no pass of this scheduler
// started, the operation's job on node: running, or with completed done
// for good (it completed while no scheduler listened). The operation's
// other trees forget it. It changes nothing unless the outcome is
// adoptDone.
func (l *Ledger) adopt(ref jobRef, node scheduler.NodeID, completed bool) (adoptedJob, adoptOutcome) {
	a, out := l.adoptLocked(ref, node, completed)
	if out == adoptDone && a.claims != nil {
		a.claims.forgetElsewhere([]placement.JobKey{ref.key})
	}
	return a, out
}

func (l *Ledger) adoptLocked(ref jobRef, node scheduler.NodeID, completed bool) (adoptedJob, adoptOutcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	op := l.ops[ref.key.Operation]
	if op == nil {
		return adoptedJob{}, adoptNotScheduled
	}
	if !l.p.Adopt(ref.key, node) {
		return adoptedJob{op: op.pid}, adoptTaken
	}
	rj, _ := l.p.Job(ref.key)
	a := adoptedJob{res: rj.Resources, op: op.pid, claims: op.claims}
	if completed {
		l.p.JobFinished(ref.key, false)
		return a, adoptDone
	}
	// The running job's id carries its attempt and epoch
	// (runningJobRefs; a retry is this scheduler's next attempt).
	if a := (attemptOf{n: ref.attempt, epoch: ref.epoch}); a != l.currentAttempt(op, ref.key) {
		op.setAttempt(ref.key, a)
	}
	return a, adoptDone
}

// holding reports whether operations revived now are held: the restarted
// scheduler's revival is still on (l.revival never changes: no lock).
func (l *Ledger) holding(now time.Time) bool { return l.revival.active(now) }

// revivingAt reports whether a fair-share update computed at t may miss
// jobs that run: the restarted scheduler still waited for its nodes' jobs
// then.
func (l *Ledger) revivingAt(t time.Time) bool { return l.revival.activeAt(t) }

// releaseHeldLocked lets the held operations start jobs once the revival
// window is over.
func (l *Ledger) releaseHeldLocked(now time.Time) {
	if !l.held || l.revival.active(now) {
		return
	}
	l.held = false
	// (Operations not yet stored stay held; see Ledger.unstored.)
	l.p.ReleaseAll(func(id scheduler.OperationID) bool { return l.unstored[id] })
}

// notHeld drops the held operations from a list of starving ones:
// preemption does not make room for jobs that may not start yet.
func (l *Ledger) notHeld(ids []scheduler.OperationID) []scheduler.OperationID {
	if !l.held && len(l.unstored) == 0 {
		return ids
	}
	return slices.DeleteFunc(slices.Clone(ids), l.p.Held)
}

// reviving reports whether the restarted scheduler still waits for the
// nodes to report their jobs.
func (n *nodeActor) reviving(now time.Time) bool { return n.revival.active(now) }

// leftForRevival counts a reported job left for later because its
// operation, revived unfinished, is not scheduled in the node's tree yet:
// the node has not reported all its jobs for good (see
// nodeActor.reportRevival).
func (n *nodeActor) leftForRevival(op scheduler.OperationID) {
	if n.revival.awaits(op) {
		n.unresolved++
	}
}

// settledUnlessReviving is whether a finished job whose operation is not
// scheduled is acknowledged: not during the revival (its operation may be
// scheduled yet, and the node reports it again), else yes.
func (n *nodeActor) settledUnlessReviving(op scheduler.OperationID, now time.Time) bool {
	if n.reviving(now) {
		n.leftForRevival(op)
		return false
	}
	return true
}

// reportRevival tells the revival, once, that the node has reported
// every job it runs for good: none was left for an operation still being
// revived (n.unresolved, counted over the heartbeat just handled).
func (n *nodeActor) reportRevival(now time.Time) {
	if n.revivalReported || n.unresolved > 0 || !n.reviving(now) {
		return
	}
	n.revivalReported = true
	n.revival.reported(n.id, now)
}

// unknownRunning handles a running job the node reports that the node
// actor did not start: adopted when its operation runs in the node's tree
// and the job is pending there, left running while the scheduler revives
// its operations, else aborted. It returns the abort reason, "" for none.
func (n *nodeActor) unknownRunning(ctx actor.Context, id string, seq uint64, now time.Time) string {
	ref, ok := parseJobRef(id)
	if !ok {
		return "unknown to the scheduler: not a job id it makes"
	}
	if n.tree == nil {
		if n.reviving(now) {
			n.leftForRevival(ref.key.Operation)
			return ""
		}
		return "unknown to the scheduler: the node is in no pool tree"
	}
	a, out := n.tree.ledger.adopt(ref, scheduler.NodeID(n.id), false)
	switch out {
	case adoptDone:
		n.jobs[id] = &nodeJob{ref: ref, res: a.res, op: a.op, ledger: n.tree.ledger, sentAt: seq, seen: seq}
		ctx.Send(a.op, &jobStarted{ref: ref, node: n.id})
		n.publishJob(n.tree.name, id, ref, pb.JobState_JOB_STATE_RUNNING, 0, "adopted: the node runs it", pb.JobEndCause_JOB_END_CAUSE_UNSPECIFIED)
		n.cfg.Logger.Debug("job adopted", "node", n.id, "job", id)
		return ""
	case adoptNotScheduled:
		if n.reviving(now) {
			n.leftForRevival(ref.key.Operation)
			return ""
		}
		return fmt.Sprintf("unknown to the scheduler: operation %s is not running in tree %s", ref.key.Operation, n.tree.name)
	default:
		return fmt.Sprintf("unknown to the scheduler: job %s of operation %s runs elsewhere or is done", ref, ref.key.Operation)
	}
}

// unknownFinished handles a finished job the node reports that the node
// actor did not start: one that completed (and was not interrupted) while
// its operation's job was pending, as after a restart when it completed
// while no scheduler listened, counts as the operation's completed job. A
// failed one counts as its operation's failure unless the operation
// counted it already (before a restart; see unknownFailed); an aborted one
// is only acknowledged. A job that did not complete runs again. It
// reports whether to acknowledge the job: not while the scheduler revives
// its operations and the job's is not scheduled yet (the node reports it
// again), nor one adopted while the journal stores it (see journal.go).
func (n *nodeActor) unknownFinished(ctx actor.Context, f *pb.FinishedJob, now time.Time) bool {
	ref, ok := parseJobRef(f.GetJobId())
	if !ok {
		return true
	}
	if n.tree == nil {
		return n.settledUnlessReviving(ref.key.Operation, now)
	}
	if f.GetState() == pb.JobState_JOB_STATE_FAILED {
		return n.unknownFailed(ctx, ref, f, now)
	}
	if f.GetState() != pb.JobState_JOB_STATE_COMPLETED || f.GetInterrupted() {
		return true
	}
	a, out := n.tree.ledger.adopt(ref, scheduler.NodeID(n.id), true)
	switch out {
	case adoptDone:
		fin := &jobFinished{ref: ref, node: n.id, state: pb.JobState_JOB_STATE_COMPLETED, exitCode: f.GetExitCode()}
		if n.journaling() {
			fin.notify, fin.jobID = ctx.Self(), f.GetJobId()
			n.await(f.GetJobId(), n.tree.ledger, ref.key.Operation, now)
		}
		ctx.Send(a.op, &jobStarted{ref: ref, node: n.id})
		ctx.Send(a.op, fin)
		n.publishJob(n.tree.name, f.GetJobId(), ref, pb.JobState_JOB_STATE_COMPLETED, f.GetExitCode(), "adopted: the node reports it completed", pb.JobEndCause_JOB_END_CAUSE_UNSPECIFIED)
		n.cfg.Logger.Debug("completed job adopted", "node", n.id, "job", f.GetJobId())
		return !n.journaling()
	case adoptNotScheduled:
		return n.settledUnlessReviving(ref.key.Operation, now)
	case adoptTaken:
		if !n.journaling() {
			return true
		}
		// Completed already (or running elsewhere). Its completion may
		// be counted and still unstored: an earlier node actor of this
		// node that awaited it was stopped (the node was lost) with the
		// journal down. The operation journals it again if it counts it,
		// and the node acknowledges it once that is stored.
		ctx.Send(a.op, &journalAgain{notify: ctx.Self(), ref: ref, jobID: f.GetJobId()})
		n.await(f.GetJobId(), n.tree.ledger, ref.key.Operation, now)
		return false
	default:
		return true
	}
}

// unknownFailed handles a failed job the node reports that the node actor
// did not start (see unknownFinished): the failure of a job an earlier
// scheduler started, reported to it and not acknowledged, or that failed
// while no scheduler listened. Its operation counts it unless it counted
// it already (its id is in the stored status or the journal), and the node
// acknowledges it once the journal stored it. The job itself stays
// pending: it runs again as a new attempt.
func (n *nodeActor) unknownFailed(ctx actor.Context, ref jobRef, f *pb.FinishedJob, now time.Time) bool {
	op := n.tree.ledger.operationPID(ref.key.Operation)
	if op == nil {
		return n.settledUnlessReviving(ref.key.Operation, now)
	}
	fin := &jobFinished{ref: ref, node: n.id, state: pb.JobState_JOB_STATE_FAILED, exitCode: f.GetExitCode(),
		reason: f.GetError(), interrupted: f.GetInterrupted()}
	if n.journaling() {
		fin.notify, fin.jobID = ctx.Self(), f.GetJobId()
		n.await(f.GetJobId(), n.tree.ledger, ref.key.Operation, now)
	}
	// Started and finished: its operation's running count is unchanged.
	ctx.Send(op, &jobStarted{ref: ref, node: n.id})
	ctx.Send(op, fin)
	reason := "reported failed by the node, not started by this scheduler"
	if e := f.GetError(); e != "" {
		reason += ": " + e
	}
	n.publishJob(n.tree.name, f.GetJobId(), ref, pb.JobState_JOB_STATE_FAILED, f.GetExitCode(), reason, pb.JobEndCause_JOB_END_CAUSE_UNSPECIFIED)
	return !n.journaling()
}

// operationPID returns the actor of an operation scheduled in the tree,
// nil when it is not.
func (l *Ledger) operationPID(id scheduler.OperationID) *actor.PID {
	l.mu.Lock()
	defer l.mu.Unlock()
	if op := l.ops[id]; op != nil {
		return op.pid
	}
	return nil
}
