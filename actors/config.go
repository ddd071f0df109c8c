package actors

import (
	"errors"
	"log/slog"
	"math"
	"time"

	"github.com/sharetree/sharetree/internal/cfgerr"
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("actors: invalid config")

// Config holds the live scheduler's timings and limits. Tree-level options
// (fair_share_update_period, starvation, preemption timeouts) live in each
// tree's scheduler.TreeConfig.
type Config struct {
	// Now is the clock. Default time.Now. Only actors read it; the engine
	// takes the time as an input.
	Now func() time.Time
	// Logger receives the scheduler's logs. Default: discard.
	Logger *slog.Logger
	// HeartbeatPeriod is what agents are told to use. Default 1s.
	HeartbeatPeriod time.Duration
	// NodeOfflineTimeout: a node not heard from for this long no longer
	// counts in its tree's resources and gets no jobs (its jobs keep
	// running). Default 60s (the reference's node_heartbeat_timeout).
	NodeOfflineTimeout time.Duration
	// NodeLostTimeout: a node not heard from for this long is forgotten and
	// its jobs are failed as lost and rescheduled. Default 5m.
	NodeLostTimeout time.Duration
	// JobRevivalTimeout is the longest a restarted scheduler waits for the
	// nodes to report the jobs they still run (with Deps.Roster, the wait
	// ends once every node of the roster has: see revival). Until then, the
	// operations it revived start no new jobs (a job a node has not
	// reported yet is not started twice), and a reported job it cannot
	// place yet (its operation is still being revived) is left running;
	// after it, such jobs are aborted and the revived operations' jobs
	// that no node reported start again. A job a node reports is adopted
	// whenever its operation runs and the job is not running elsewhere or
	// done. Only a scheduler that revived unfinished operations waits.
	// Default 10s.
	JobRevivalTimeout time.Duration
	// ProgressPersistPeriod is how often, at most, an operation whose jobs
	// end (complete, fail, are aborted or lost) writes its completed jobs
	// and job counts to the store (a state change writes them at once). A scheduler that restarts runs none of the
	// stored ones again; of the jobs that completed after the last write,
	// those whose nodes have not been acknowledged their end yet are
	// learned from the nodes, the others run again. Default 5s.
	ProgressPersistPeriod time.Duration
	// ProgressWriteRate caps those writes of completed jobs across all
	// operations, per second (a token bucket holding one second's worth):
	// with many operations completing jobs, each writes less often than
	// ProgressPersistPeriod instead of the store's fsyncs crowding the
	// heartbeats out. Default 100.
	ProgressWriteRate float64
	// JournalBatchInterval is the least time between the starts of two
	// writes to the completions journal (Deps.Journal): completions that
	// arrive meanwhile wait and go in the next batch. Each write is one
	// fsync; a completion is acknowledged at its node's next heartbeat
	// after its batch is stored, so an interval well under HeartbeatPeriod
	// delays few acknowledgements and saves most of the fsyncs and the
	// messages to the node actors under load. It is capped at half of
	// HeartbeatPeriod; at most 1s; 0 writes as soon as the previous write
	// ended. Default 50ms.
	JournalBatchInterval time.Duration
	// MaxJobsPerHeartbeat caps the jobs started on one node per heartbeat;
	// 0 is no cap. Default 0.
	MaxJobsPerHeartbeat int
	// DefaultMaxFailedJobCount is an operation's max_failed_job_count when
	// its spec sets none. Default 10.
	DefaultMaxFailedJobCount int
	// FairShareEventPeriod is how often each tree publishes a fair-share
	// snapshot event. Default 1s.
	FairShareEventPeriod time.Duration
	// RequestTimeout bounds every actor-to-actor request, and each write
	// of a tree's state. Default 5s.
	RequestTimeout time.Duration
	// StatePersistPeriod is how often each tree writes its fair-share state
	// (the integral pools' accumulated volumes) to Deps.State after an
	// update; it is written once more when the scheduler stops, so a crash
	// loses at most this much of the volumes' refill and consumption.
	// Default 10s.
	StatePersistPeriod time.Duration
	// PreemptionRateLimit caps the jobs one tree interrupts per second for
	// starving operations: a token bucket of this rate holding at most one
	// second's worth (and at least one token). A preemption needs one token
	// and spends one per job it interrupts, going into debt when it takes
	// more jobs than the bucket holds (so a preemption that needs more jobs
	// than a second's worth still happens, and the next waits until the debt
	// is paid). 0 turns preemption off. Graceful preemption is not counted.
	// Default 100.
	PreemptionRateLimit float64
	// MaxHeartbeatPasses sheds load: at most this many heartbeats are in
	// their scheduling pass at once (handed to their tree's placer and not
	// answered yet), across all nodes. A heartbeat that arrives while as
	// many are is shed: answered UNAVAILABLE at once, saying it was
	// throttled, and counted (System.HeartbeatLoad). It starts and
	// acknowledges nothing (the node sends the same state again), but it
	// keeps its node alive: a node whose heartbeats are shed is neither
	// taken offline nor lost. The limit is soft (heartbeats arriving
	// together may pass it). 0 is no limit, the default: each node holds
	// at most one heartbeat waiting already, and under `sharetree load` at
	// five times its nominal rate shedding answered fewer heartbeats, no
	// faster (docs/BENCHMARKS.md); it is a safety valve for a flood.
	MaxHeartbeatPasses int
	// GracefulTolerance: a graceful operation's jobs are interrupted when
	// its usage share exceeds its fair share by more than this (on its
	// dominant resource). Default 1e-4.
	GracefulTolerance float64
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		Now:                      time.Now,
		Logger:                   slog.New(slog.DiscardHandler),
		HeartbeatPeriod:          time.Second,
		NodeOfflineTimeout:       60 * time.Second,
		NodeLostTimeout:          5 * time.Minute,
		JobRevivalTimeout:        10 * time.Second,
		ProgressPersistPeriod:    5 * time.Second,
		ProgressWriteRate:        100,
		JournalBatchInterval:     50 * time.Millisecond,
		DefaultMaxFailedJobCount: 10,
		FairShareEventPeriod:     time.Second,
		RequestTimeout:           5 * time.Second,
		StatePersistPeriod:       10 * time.Second,
		PreemptionRateLimit:      100,
		GracefulTolerance:        1e-4,
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(ErrConfig, field, format, args...)
	}
	switch {
	case c.Now == nil:
		return bad("Now", "is nil")
	case c.Logger == nil:
		return bad("Logger", "is nil")
	case c.HeartbeatPeriod <= 0:
		return bad("HeartbeatPeriod", "must be positive, got %s", c.HeartbeatPeriod)
	case c.NodeOfflineTimeout <= 0:
		return bad("NodeOfflineTimeout", "must be positive, got %s", c.NodeOfflineTimeout)
	case c.NodeLostTimeout < c.NodeOfflineTimeout:
		return bad("NodeLostTimeout", "%s must not be below NodeOfflineTimeout %s", c.NodeLostTimeout, c.NodeOfflineTimeout)
	case c.JobRevivalTimeout < 0:
		return bad("JobRevivalTimeout", "must be >= 0, got %s", c.JobRevivalTimeout)
	case c.ProgressPersistPeriod <= 0:
		return bad("ProgressPersistPeriod", "must be positive, got %s", c.ProgressPersistPeriod)
	case !(c.ProgressWriteRate > 0) || math.IsInf(c.ProgressWriteRate, 1):
		return bad("ProgressWriteRate", "must be a finite number > 0, got %g", c.ProgressWriteRate)
	case c.JournalBatchInterval < 0 || c.JournalBatchInterval > time.Second:
		return bad("JournalBatchInterval", "must be between 0 and 1s, got %s", c.JournalBatchInterval)
	case c.MaxHeartbeatPasses < 0:
		return bad("MaxHeartbeatPasses", "must be >= 0, got %d", c.MaxHeartbeatPasses)
	case c.MaxJobsPerHeartbeat < 0:
		return bad("MaxJobsPerHeartbeat", "must be >= 0, got %d", c.MaxJobsPerHeartbeat)
	case c.DefaultMaxFailedJobCount < 0:
		return bad("DefaultMaxFailedJobCount", "must be >= 0, got %d", c.DefaultMaxFailedJobCount)
	case c.FairShareEventPeriod <= 0:
		return bad("FairShareEventPeriod", "must be positive, got %s", c.FairShareEventPeriod)
	case !(c.PreemptionRateLimit >= 0) || math.IsInf(c.PreemptionRateLimit, 1):
		return bad("PreemptionRateLimit", "must be a finite number >= 0, got %g", c.PreemptionRateLimit)
	case !(c.GracefulTolerance >= 0) || math.IsInf(c.GracefulTolerance, 1):
		return bad("GracefulTolerance", "must be a finite number >= 0, got %g", c.GracefulTolerance)
	case c.RequestTimeout <= 0:
		return bad("RequestTimeout", "must be positive, got %s", c.RequestTimeout)
	case c.StatePersistPeriod <= 0:
		return bad("StatePersistPeriod", "must be positive, got %s", c.StatePersistPeriod)
	}
	return nil
}
