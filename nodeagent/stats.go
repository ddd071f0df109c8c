package nodeagent

import (
	"sync/atomic"
	"time"
)

// Stats is a snapshot of an agent's counters, for tests, load tools and
// metrics. Counters only grow; RunningJobs, UnackedFinishedJobs,
// LeaderEpoch and Sequence are current values.
type Stats struct {
	// HeartbeatsSent counts heartbeats published.
	HeartbeatsSent uint64
	// HeartbeatsOK counts responses applied (from the current leader epoch).
	HeartbeatsOK uint64
	// HeartbeatsFailed counts heartbeats that got no usable response:
	// timeouts, no responders, error replies, undecodable replies, and
	// periods skipped because the connection was down.
	HeartbeatsFailed uint64
	// HeartbeatsRefused counts the failed heartbeats a scheduler answered
	// with an error (not the leader, throttled, superseded, stale, bad
	// input), and HeartbeatsUnanswered those no scheduler answered (no
	// responders, no response before the heartbeat timeout, or none
	// before the connection reconnected); the rest
	// of HeartbeatsFailed were not sent (the connection was down, or the
	// heartbeat did not encode) or got a reply that did not decode.
	HeartbeatsRefused, HeartbeatsUnanswered uint64
	// StaleResponses counts responses ignored for a lower leader epoch.
	StaleResponses uint64
	// LateResponses counts responses that arrived after their heartbeat had
	// timed out (dropped).
	LateResponses uint64
	// SignalsApplied counts job signals accepted.
	SignalsApplied uint64
	// StaleSignals counts job signals ignored for a lower leader epoch.
	StaleSignals uint64
	// MalformedSignals counts signal payloads that did not decode or carried
	// no abort or interrupt.
	MalformedSignals uint64
	// JobsStarted counts jobs accepted from jobs_to_start (including ones
	// that failed to start).
	JobsStarted uint64
	// DuplicateStarts counts jobs_to_start entries ignored because the job
	// was already running or finished.
	DuplicateStarts uint64
	// JobsCompleted, JobsFailed and JobsAborted count finished jobs by state.
	JobsCompleted uint64
	JobsFailed    uint64
	JobsAborted   uint64
	// JobsInterrupted counts the jobs the agent interrupted (each once);
	// InterruptRepeats the interrupts of a job already interrupted, which
	// change nothing (the scheduler repeats an interrupt in every
	// response until the job ends).
	JobsInterrupted, InterruptRepeats uint64
	// JobsOverCapacity counts jobs that, when started, made the running
	// jobs hold more of some resource than the node has. The scheduler
	// never should (reliability invariant I2); the agent runs the job
	// anyway, since the scheduler accounts for it, and logs a warning.
	JobsOverCapacity uint64
	// RunningJobs is the number of jobs running now.
	RunningJobs int
	// UnackedFinishedJobs is the number of finished jobs kept until a
	// response acknowledges them.
	UnackedFinishedJobs int
	// LeaderEpoch is the highest leader epoch seen.
	LeaderEpoch uint64
	// Sequence is the sequence number of the last heartbeat sent.
	Sequence uint64
	// HeartbeatPeriod is the period the agent heartbeats at now: its
	// configured one until a response sets another.
	HeartbeatPeriod time.Duration
	// ConsecutiveFailures is the number of heartbeats that failed in a row
	// since the last one answered (0 while heartbeats succeed).
	ConsecutiveFailures uint64
}

// counters are updated from the loop, timers and process waiters without
// the agent's lock.
type counters struct {
	hbSent, hbOK, hbFailed, staleResponses, lateResponses atomic.Uint64
	hbRefused, hbUnanswered                               atomic.Uint64
	signalsApplied, staleSignals, malformedSignals        atomic.Uint64
	started, duplicates, completed, failed, aborted       atomic.Uint64
	overCapacity, interrupts, interruptRepeats            atomic.Uint64
	period                                                atomic.Int64 // time.Duration
	consecutiveFailures                                   atomic.Uint64
}

// Stats returns a snapshot of the agent's counters.
func (a *Agent) Stats() Stats {
	c := &a.counters
	s := Stats{
		HeartbeatsSent: c.hbSent.Load(), HeartbeatsOK: c.hbOK.Load(), HeartbeatsFailed: c.hbFailed.Load(),
		HeartbeatsRefused: c.hbRefused.Load(), HeartbeatsUnanswered: c.hbUnanswered.Load(),
		StaleResponses: c.staleResponses.Load(), LateResponses: c.lateResponses.Load(),
		SignalsApplied: c.signalsApplied.Load(), StaleSignals: c.staleSignals.Load(),
		MalformedSignals: c.malformedSignals.Load(),
		JobsStarted:      c.started.Load(), DuplicateStarts: c.duplicates.Load(),
		JobsCompleted: c.completed.Load(), JobsFailed: c.failed.Load(), JobsAborted: c.aborted.Load(),
		JobsOverCapacity: c.overCapacity.Load(), JobsInterrupted: c.interrupts.Load(), InterruptRepeats: c.interruptRepeats.Load(),
		HeartbeatPeriod: time.Duration(c.period.Load()), ConsecutiveFailures: c.consecutiveFailures.Load(),
	}
	a.mu.Lock()
	s.RunningJobs, s.UnackedFinishedJobs = len(a.running), len(a.finished)
	s.LeaderEpoch, s.Sequence = a.epoch, a.seq
	a.mu.Unlock()
	return s
}
