package nodeagent

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"syscall"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// Reasons the agent gives when the scheduler gave none.
const (
	reasonAborted       = "aborted by the scheduler"
	reasonAgentStopped  = "node agent stopped"
	reasonInterruptKill = "interruption timeout"
)

// job is a running job. Its fields are guarded by Agent.mu, except logs
// (its own lock) and the immutable identity fields.
type job struct {
	id, opID string
	res      scheduler.Resources
	resPB    *pb.Resources
	start    time.Time
	sig      string // the spec's interruption signal; "" is the default

	simTimer *time.Timer // simulated job: fires at completion

	proc   *os.Process // command job
	logs   *logTail
	tmpDir string // removed after the process exits; "" is none

	interrupted     bool        // an interrupt was delivered
	interruptReason string      // the interrupt's reason
	killTimer       *time.Timer // kills the job when the interruption times out
	timedOut        bool        // killed by killTimer
	abortReason     string      // set when aborted (or killed at shutdown)
	// exited is set once a command job's process has exited (and been
	// reaped): its result is then decided by how it exited, and a later
	// abort, interrupt or interruption timeout no longer changes it.
	exited bool
}

// startLocked starts a job from jobs_to_start, unless a job with its id is
// running or finished (starts are idempotent).
func (a *Agent) startLocked(spec *pb.JobSpec) {
	id := spec.GetJobId()
	if id == "" {
		a.log.Warn("job without an id ignored", "operation", spec.GetOperationId())
		return
	}
	if _, ok := a.running[id]; ok || a.finished[id] != nil {
		a.counters.duplicates.Add(1)
		return
	}
	if a.stopping {
		return
	}
	a.counters.started.Add(1)
	j := &job{id: id, opID: spec.GetOperationId(), start: a.cfg.Now(), sig: spec.GetInterruptionSignal()}
	res, err := wire.Resources("resources", spec.GetResources())
	if err != nil {
		a.finishLocked(j, pb.JobState_JOB_STATE_FAILED, 0, fmt.Sprintf("%v: %v", ErrBadJobSpec, err), false)
		return
	}
	j.res, j.resPB = res, wire.ToResources(res)
	a.running[id] = j
	a.allocated = a.allocated.Add(res)
	a.checkCapacityLocked(j)
	switch run := spec.GetRun().(type) {
	case *pb.JobSpec_SimulatedDuration:
		a.startSimulatedLocked(j, run.SimulatedDuration.AsDuration())
	case *pb.JobSpec_Command:
		if err := a.startProcessLocked(j, run.Command); err != nil {
			a.finishLocked(j, pb.JobState_JOB_STATE_FAILED, 0, err.Error(), false)
			return
		}
	default:
		a.finishLocked(j, pb.JobState_JOB_STATE_FAILED, 0,
			fmt.Sprintf("%v: neither a command nor a simulated duration", ErrBadJobSpec), false)
		return
	}
	a.log.Debug("job started", "job", id, "operation", j.opID)
}

// abortLocked kills a running job (ABORTED with reason); unknown or
// finished jobs are ignored.
func (a *Agent) abortLocked(id, reason string) {
	j := a.running[id]
	if j == nil || j.abortReason != "" || j.exited {
		return
	}
	if reason == "" {
		reason = reasonAborted
	}
	if j.proc == nil {
		a.finishLocked(j, pb.JobState_JOB_STATE_ABORTED, 0, reason, j.interrupted)
		return
	}
	j.abortReason = reason
	a.killGroup(j, syscall.SIGKILL)
}

// interruptLocked delivers the interruption signal and arms the kill timer.
// A second interrupt of the same job changes nothing (the timer keeps
// running from the first).
func (a *Agent) interruptLocked(in *pb.JobInterrupt) {
	j := a.running[in.GetJobId()]
	if j == nil || j.abortReason != "" || j.exited {
		return
	}
	if j.interrupted {
		a.counters.interruptRepeats.Add(1)
		return
	}
	j.interrupted, j.interruptReason = true, in.GetReason()
	a.counters.interrupts.Add(1)
	if j.proc == nil {
		a.onInterruptLocked(JobInterrupt{ID: j.id, Reason: in.GetReason()})
		a.finishLocked(j, pb.JobState_JOB_STATE_COMPLETED, 0, "", true)
		return
	}
	timeout := in.GetTimeout().AsDuration()
	if timeout <= 0 {
		timeout = a.cfg.InterruptionTimeout
	}
	sig := a.interruptionSignal(j, in.GetSignal())
	a.onInterruptLocked(JobInterrupt{ID: j.id, Signal: signalName(sig), Reason: in.GetReason(), Timeout: timeout})
	a.log.Debug("interrupting job", "job", j.id, "signal", sig, "timeout", timeout, "reason", in.GetReason())
	a.killGroup(j, sig)
	j.killTimer = time.AfterFunc(timeout, func() { a.interruptTimedOut(j) })
}

// onInterruptLocked tells Config.OnJobInterrupt.
func (a *Agent) onInterruptLocked(in JobInterrupt) {
	if a.cfg.OnJobInterrupt != nil {
		a.cfg.OnJobInterrupt(in)
	}
}

// interruptTimedOut kills a job that did not exit after its interruption.
func (a *Agent) interruptTimedOut(j *job) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.running[j.id] != j || j.abortReason != "" || j.exited {
		return
	}
	j.timedOut = true
	a.killGroup(j, syscall.SIGKILL)
}

// interruptionSignal picks the interrupt's signal, else the job's, else
// the agent's default; a name that does not parse is logged and skipped.
func (a *Agent) interruptionSignal(j *job, name string) syscall.Signal {
	for _, n := range []string{name, j.sig} {
		if n == "" {
			continue
		}
		s, err := parseSignal(n)
		if err == nil {
			return s
		}
		a.log.Warn("bad interruption signal; using the next choice", "job", j.id, "err", err)
	}
	return a.defaultSig
}

// finishLocked records j as finished (kept until acknowledged).
func (a *Agent) finishLocked(j *job, state pb.JobState, exitCode int32, errMsg string, interrupted bool) {
	if a.running[j.id] == j {
		delete(a.running, j.id)
		a.allocated = a.allocated.Sub(j.res)
		if len(a.running) == 0 {
			a.allocated = scheduler.Resources{} // no rounding left over
		}
	}
	if j.simTimer != nil {
		j.simTimer.Stop()
	}
	if j.killTimer != nil {
		j.killTimer.Stop()
	}
	fj := &pb.FinishedJob{
		JobId: j.id, OperationId: j.opID, State: state, ExitCode: exitCode, Error: errMsg,
		StartTime: timestamppb.New(j.start), FinishTime: timestamppb.New(a.cfg.Now()), Interrupted: interrupted,
	}
	if j.logs != nil {
		fj.LogTail = j.logs.String()
	}
	a.finished[j.id] = fj
	switch state {
	case pb.JobState_JOB_STATE_COMPLETED:
		a.counters.completed.Add(1)
	case pb.JobState_JOB_STATE_FAILED:
		a.counters.failed.Add(1)
	default:
		a.counters.aborted.Add(1)
	}
	a.log.Debug("job finished", "job", j.id, "state", state, "exit_code", exitCode, "error", errMsg, "interrupted", interrupted)
}

// stopJobs runs when Run returns: it starts nothing more, kills every
// process group, finishes simulated jobs as ABORTED and waits for the
// processes to exit.
func (a *Agent) stopJobs() {
	a.mu.Lock()
	a.stopping = true
	for _, id := range slices.Sorted(maps.Keys(a.running)) {
		j := a.running[id]
		if j.proc == nil {
			a.finishLocked(j, pb.JobState_JOB_STATE_ABORTED, 0, reasonAgentStopped, j.interrupted)
			continue
		}
		if j.abortReason == "" && !j.exited {
			j.abortReason = reasonAgentStopped
		}
		a.killGroup(j, syscall.SIGKILL)
	}
	a.mu.Unlock()
	a.wg.Wait()
}
