package loadgen

import (
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// simJob is a running simulated job.
type simJob struct {
	rj  *pb.RunningJob // reported as is in every heartbeat
	res scheduler.Resources
	end time.Time
}

// simAgent is one simulated node. Its state is guarded by mu: the shard's
// sender builds heartbeats, the shard's subscriptions apply responses and
// signals.
type simAgent struct {
	local   int // index within its shard (a token of its reply subjects)
	id      string
	subject string
	limits  *pb.Resources

	mu       sync.Mutex
	seq      uint64
	inflight uint64 // sequence awaiting its response; 0 is none
	sentAt   time.Time
	epoch    uint64
	running  []*simJob
	finished []*pb.FinishedJob // until acknowledged
}

// outcome is what applying a response did.
type outcome struct {
	started, duplicates, aborted, interrupted, acked int
	stale                                            bool
}

// build takes the next sequence and returns the encoded heartbeat (appended
// to buf), moving the jobs whose time is up to the finished list first. The
// caller holds mu.
func (a *simAgent) build(r *runner, now time.Time, incarnation string, buf []byte) (data []byte, seq uint64, err error) {
	a.finishDue(r, now)
	a.seq++
	hb := &pb.Heartbeat{
		NodeId:         a.id,
		Incarnation:    incarnation,
		Sequence:       a.seq,
		ResourceLimits: a.limits,
		LeaderEpoch:    a.epoch,
		RunningJobs:    make([]*pb.RunningJob, 0, len(a.running)),
		FinishedJobs:   a.finished,
	}
	var usage scheduler.Resources
	for _, j := range a.running {
		usage = usage.Add(j.res)
		hb.RunningJobs = append(hb.RunningJobs, j.rj)
	}
	hb.ResourceUsage = wire.ToResources(usage)
	data, err = proto.MarshalOptions{}.MarshalAppend(buf, hb)
	return data, a.seq, err
}

// finishDue moves the jobs that ended by now to the finished list.
func (a *simAgent) finishDue(r *runner, now time.Time) {
	kept := a.running[:0]
	for _, j := range a.running {
		if j.end.After(now) {
			kept = append(kept, j)
			continue
		}
		a.finished = append(a.finished, &pb.FinishedJob{
			JobId: j.rj.GetJobId(), OperationId: j.rj.GetOperationId(), State: pb.JobState_JOB_STATE_COMPLETED,
			StartTime: j.rj.GetStartTime(), FinishTime: timestamppb.New(j.end),
		})
		r.jobDone()
	}
	clear(a.running[len(kept):])
	a.running = kept
}

// finish ends a running job at once (abort or interrupt).
func (a *simAgent) finish(r *runner, id string, state pb.JobState, reason string, interrupted bool, now time.Time) bool {
	i := slices.IndexFunc(a.running, func(j *simJob) bool { return j.rj.GetJobId() == id })
	if i < 0 {
		return false
	}
	j := a.running[i]
	a.running = slices.Delete(a.running, i, i+1)
	a.finished = append(a.finished, &pb.FinishedJob{
		JobId: id, OperationId: j.rj.GetOperationId(), State: state, Error: reason,
		StartTime: j.rj.GetStartTime(), FinishTime: timestamppb.New(now), Interrupted: interrupted,
	})
	r.jobDone()
	return true
}

// known reports whether a job id is running or finished and unacknowledged.
func (a *simAgent) known(id string) bool {
	return slices.ContainsFunc(a.running, func(j *simJob) bool { return j.rj.GetJobId() == id }) ||
		slices.ContainsFunc(a.finished, func(f *pb.FinishedJob) bool { return f.GetJobId() == id })
}

// acceptEpoch reports whether a command of epoch may be applied, raising
// the highest epoch seen.
func (a *simAgent) acceptEpoch(epoch uint64) bool {
	if epoch < a.epoch {
		return false
	}
	a.epoch = epoch
	return true
}

// apply applies a response (the caller holds mu).
func (a *simAgent) apply(r *runner, resp *pb.HeartbeatResponse, now time.Time) outcome {
	var o outcome
	if !a.acceptEpoch(resp.GetLeaderEpoch()) {
		o.stale = true
		return o
	}
	if acks := resp.GetAcknowledgedFinishedJobs(); len(acks) > 0 {
		o.acked = len(acks)
		a.finished = slices.DeleteFunc(a.finished, func(f *pb.FinishedJob) bool { return slices.Contains(acks, f.GetJobId()) })
	}
	for _, ab := range resp.GetJobsToAbort() {
		if a.finish(r, ab.GetJobId(), pb.JobState_JOB_STATE_ABORTED, ab.GetReason(), false, now) {
			o.aborted++
		}
	}
	for _, in := range resp.GetJobsToInterrupt() {
		if a.finish(r, in.GetJobId(), pb.JobState_JOB_STATE_COMPLETED, "", true, now) {
			o.interrupted++
		}
	}
	var start *timestamppb.Timestamp
	for _, spec := range resp.GetJobsToStart() {
		id := spec.GetJobId()
		if id == "" || a.known(id) {
			o.duplicates++
			continue
		}
		res, err := wire.Resources("resources", spec.GetResources())
		if err != nil {
			a.finished = append(a.finished, &pb.FinishedJob{
				JobId: id, OperationId: spec.GetOperationId(), State: pb.JobState_JOB_STATE_FAILED, Error: err.Error(),
				StartTime: timestamppb.New(now), FinishTime: timestamppb.New(now),
			})
			continue
		}
		d := r.cfg.JobDuration
		if sd := spec.GetSimulatedDuration(); sd != nil {
			d = max(sd.AsDuration(), 0)
		}
		if start == nil {
			start = timestamppb.New(now)
		}
		a.running = append(a.running, &simJob{
			rj:  &pb.RunningJob{JobId: id, OperationId: spec.GetOperationId(), Resources: spec.GetResources(), StartTime: start},
			res: res, end: now.Add(d),
		})
		o.started++
		r.jobStarted()
	}
	return o
}

// signal applies a job signal published between heartbeats.
func (a *simAgent) signal(r *runner, sig *pb.JobSignal, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.acceptEpoch(sig.GetLeaderEpoch()) {
		return false
	}
	switch s := sig.GetSignal().(type) {
	case *pb.JobSignal_Abort:
		a.finish(r, s.Abort.GetJobId(), pb.JobState_JOB_STATE_ABORTED, s.Abort.GetReason(), false, now)
	case *pb.JobSignal_Interrupt:
		a.finish(r, s.Interrupt.GetJobId(), pb.JobState_JOB_STATE_COMPLETED, "", true, now)
	default:
		return false
	}
	return true
}
