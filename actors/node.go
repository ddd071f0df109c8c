package actors

import (
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// nodeJob is a job the scheduler believes runs on the node.
type nodeJob struct {
	ref jobRef
	res scheduler.Resources
	op  *actor.PID
	// sentAt is the heartbeat sequence whose response started the job: a
	// later heartbeat that does not report it means it vanished.
	sentAt uint64
	// abortReason is set once the scheduler wants the job gone; the abort is
	// repeated in every response until the node reports the job finished.
	abortReason string
}

// nodeTree is the tree a node belongs to.
type nodeTree struct {
	name   string
	pid    *actor.PID
	ledger *Ledger
}

// nodeActor is one exec node's session.
type nodeActor struct {
	cfg    *Config
	deps   Deps
	id     string
	tree   nodeTree
	onLost func(id string)

	incarnation string
	lastSeq     uint64
	total       scheduler.Resources
	tags        []string
	online      bool
	lastHeard   time.Time
	jobs        map[string]*nodeJob
}

func newNodeActor(cfg *Config, deps Deps, id string, tree nodeTree, onLost func(string)) actor.Producer {
	return func() actor.Actor {
		return &nodeActor{cfg: cfg, deps: deps, id: id, tree: tree, onLost: onLost, jobs: map[string]*nodeJob{}}
	}
}

func (n *nodeActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *NodeHeartbeat:
		resp, err := n.heartbeat(ctx, m.Heartbeat)
		m.Reply(resp, err)
	case *nodeCheck:
		n.check(ctx)
	case *actor.Stopping:
		if n.online {
			ctx.Send(n.tree.pid, &nodeDown{id: scheduler.NodeID(n.id)})
		}
	}
}

func (n *nodeActor) heartbeat(ctx actor.Context, hb *pb.Heartbeat) (*pb.HeartbeatResponse, *pb.Error) {
	total, err := wire.Resources("resource_limits", hb.GetResourceLimits())
	if err != nil {
		return nil, pbErr(pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "resource_limits", "%v", err)
	}
	if hb.GetIncarnation() == "" {
		return nil, pbErr(pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "incarnation", "heartbeat of node %s has no incarnation", n.id)
	}
	now := n.cfg.Now()
	if hb.GetIncarnation() != n.incarnation {
		if n.incarnation != "" {
			n.vanishAll(ctx, fmt.Sprintf("node %s restarted (incarnation %s → %s)", n.id, n.incarnation, hb.GetIncarnation()))
		}
		n.incarnation, n.lastSeq = hb.GetIncarnation(), 0
	} else if hb.GetSequence() <= n.lastSeq {
		return nil, pbErr(pb.ErrorCode_ERROR_CODE_STALE_HEARTBEAT, "sequence",
			"heartbeat %d of node %s is not newer than %d, already processed", hb.GetSequence(), n.id, n.lastSeq)
	}
	seq := hb.GetSequence()
	n.lastSeq, n.lastHeard = seq, now
	tags := slices.Clone(hb.GetTags())
	slices.Sort(tags)
	if !n.online || total != n.total || !slices.Equal(tags, n.tags) {
		n.total, n.tags, n.online = total, tags, true
		ctx.Send(n.tree.pid, &nodeUp{node: scheduler.Node{ID: scheduler.NodeID(n.id), Resources: total, Tags: tags}})
		// The tree actor adds the node to the ledger; until it has, the
		// ledger offers this node nothing, so do it here too for the first
		// pass (idempotent).
		n.tree.ledger.setNode(scheduler.Node{ID: scheduler.NodeID(n.id), Resources: total, Tags: tags})
	}
	resp := &pb.HeartbeatResponse{LeaderEpoch: n.deps.Epoch, HeartbeatPeriod: durationpb.New(n.cfg.HeartbeatPeriod)}

	// Finished jobs: acknowledge every one; act on those we believed running.
	for _, f := range hb.GetFinishedJobs() {
		resp.AcknowledgedFinishedJobs = append(resp.AcknowledgedFinishedJobs, f.GetJobId())
		j, ok := n.jobs[f.GetJobId()]
		if !ok {
			continue
		}
		delete(n.jobs, f.GetJobId())
		reason := f.GetError()
		if j.abortReason != "" && reason == "" {
			reason = j.abortReason
		}
		n.finishJob(ctx, j, f.GetState(), f.GetExitCode(), reason, false)
	}
	// Running jobs: unknown ones are aborted.
	seen := make(map[string]bool, len(hb.GetRunningJobs()))
	for _, r := range hb.GetRunningJobs() {
		seen[r.GetJobId()] = true
		if _, ok := n.jobs[r.GetJobId()]; !ok {
			resp.JobsToAbort = append(resp.JobsToAbort, &pb.JobAbort{JobId: r.GetJobId(), Reason: "unknown to the scheduler"})
		}
	}
	// Jobs we believe running that the node no longer reports vanished.
	ids := n.sortedJobIDs()
	for _, id := range ids {
		j := n.jobs[id]
		if seen[id] || j.sentAt >= seq {
			continue
		}
		delete(n.jobs, id)
		n.finishJob(ctx, j, pb.JobState_JOB_STATE_FAILED, 0, "vanished: not reported by the node", true)
	}
	// Jobs of operations no longer scheduled are aborted.
	for _, id := range n.sortedJobIDs() {
		j := n.jobs[id]
		if j.abortReason == "" && !n.tree.ledger.hasOperation(j.ref.key.Operation) {
			j.abortReason = "operation finished"
		}
		if j.abortReason != "" {
			resp.JobsToAbort = append(resp.JobsToAbort, &pb.JobAbort{JobId: id, Reason: j.abortReason})
		}
	}
	// Scheduling pass on what is left.
	free := total
	for _, j := range n.jobs {
		free = free.Sub(j.res)
	}
	for _, s := range n.tree.ledger.schedule(scheduler.NodeID(n.id), free.Max(scheduler.Resources{}), n.cfg.MaxJobsPerHeartbeat) {
		n.jobs[s.spec.GetJobId()] = &nodeJob{ref: s.ref, res: s.res, op: s.op, sentAt: seq}
		resp.JobsToStart = append(resp.JobsToStart, s.spec)
		ctx.Send(s.op, &jobStarted{ref: s.ref, node: n.id, res: s.res})
		n.publishJob(s.ref, pb.JobState_JOB_STATE_RUNNING, 0, "")
	}
	return resp, nil
}

func (n *nodeActor) sortedJobIDs() []string {
	ids := make([]string, 0, len(n.jobs))
	for id := range n.jobs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// finishJob releases a job in the ledger (failed and aborted jobs go back to
// pending unless their operation is gone) and tells its operation.
func (n *nodeActor) finishJob(ctx actor.Context, j *nodeJob, state pb.JobState, exit int32, reason string, lost bool) {
	requeue := state != pb.JobState_JOB_STATE_COMPLETED
	requeued := n.tree.ledger.jobFinished(j.ref, requeue) && requeue
	ctx.Send(j.op, &jobFinished{ref: j.ref, node: n.id, state: state, exitCode: exit, reason: reason, requeued: requeued, lost: lost})
	n.publishJob(j.ref, state, exit, reason)
}

func (n *nodeActor) publishJob(ref jobRef, state pb.JobState, exit int32, reason string) {
	n.deps.Events.Publish(n.tree.name, subjects.EventJob, &pb.Event{
		Time: timestamppb.New(n.cfg.Now()), Tree: n.tree.name, LeaderEpoch: n.deps.Epoch,
		Kind: &pb.Event_Job{Job: &pb.JobEvent{
			JobId: ref.String(), OperationId: string(ref.key.Operation), NodeId: n.id,
			State: state, Reason: reason, ExitCode: exit,
		}},
	})
}

// vanishAll fails every job believed on the node.
func (n *nodeActor) vanishAll(ctx actor.Context, reason string) {
	for _, id := range n.sortedJobIDs() {
		j := n.jobs[id]
		delete(n.jobs, id)
		n.finishJob(ctx, j, pb.JobState_JOB_STATE_FAILED, 0, reason, true)
	}
}

// check takes a silent node offline, and forgets a lost one.
func (n *nodeActor) check(ctx actor.Context) {
	if n.lastHeard.IsZero() {
		return
	}
	silent := n.cfg.Now().Sub(n.lastHeard)
	if n.online && silent >= n.cfg.NodeOfflineTimeout {
		n.online = false
		n.tree.ledger.removeNode(scheduler.NodeID(n.id))
		ctx.Send(n.tree.pid, &nodeDown{id: scheduler.NodeID(n.id)})
		n.cfg.Logger.Warn("node offline", "node", n.id, "silent", silent)
	}
	if silent >= n.cfg.NodeLostTimeout {
		n.cfg.Logger.Warn("node lost", "node", n.id, "silent", silent, "jobs", len(n.jobs))
		n.vanishAll(ctx, fmt.Sprintf("node %s lost: silent for %s", n.id, silent.Round(time.Second)))
		n.onLost(n.id)
		ctx.Stop(ctx.Self())
	}
}
