package loadgen

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"time"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/internal/cfgerr"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("loadgen: invalid config")

// Defaults of the Config fields (see DefaultConfig).
const (
	DefaultAgents            = 5000
	DefaultOperations        = 10000
	DefaultPools             = 10
	DefaultDuration          = 30 * time.Second
	DefaultWarmup            = 5 * time.Second
	DefaultHeartbeatPeriod   = time.Second
	DefaultHeartbeatTimeout  = 5 * time.Second
	DefaultJobDuration       = 2 * time.Second
	DefaultAgentsPerConn     = 250
	DefaultSubmitConcurrency = 64
	DefaultNodePrefix        = "load"
	// DefaultTargetP99 and DefaultTargetStartsPerSecond are the issue's
	// targets (5,000 agents heartbeating every second, 10,000 runnable
	// operations, on a 2-core machine).
	DefaultTargetP99             = 25 * time.Millisecond
	DefaultTargetStartsPerSecond = 5000
)

// DefaultNodeResources is each simulated node's resources (8 cores, 8
// slots) and DefaultJobResources each job's (1 core, 1 slot): 8 jobs fit a
// node.
var (
	DefaultNodeResources = scheduler.Resources{scheduler.CPU: 8, scheduler.UserSlots: 8}
	DefaultJobResources  = scheduler.Resources{scheduler.CPU: 1, scheduler.UserSlots: 1}
)

// Targets are the thresholds Report.Checks compares the figures with.
type Targets struct {
	// P99 bounds the 99th percentile of the heartbeat round trip over the
	// measured window. Default 25ms; zero skips the check.
	P99 time.Duration
	// StartsPerSecond is the least job starts per second over the measured
	// window. Default 5,000; zero skips the check.
	StartsPerSecond float64
}

// Config configures a load run. Start from DefaultConfig.
type Config struct {
	// NATSURL targets the NATS server of a running scheduler; empty starts
	// a scheduler with an embedded NATS server in-process.
	NATSURL string
	// DataDir holds the embedded server's JetStream files; empty is a fresh
	// temporary directory removed after the run. Ignored with NATSURL.
	DataDir string
	// SyncAlways makes the embedded scheduler's JetStream fsync every write
	// before acknowledging it, as `sharetree server` does by default.
	// Ignored with NATSURL. Default true.
	SyncAlways bool
	// Agents is the number of simulated node agents. Default 5,000.
	Agents int
	// AgentsPerConn is how many agents share one NATS connection (and one
	// sending goroutine). Default 250.
	AgentsPerConn int
	// NodePrefix starts every node id: "<prefix>-<index>". It must be a
	// valid subject token. Default "load".
	NodePrefix string
	// NodeResources is each agent's resources. Default cpu=8,user_slots=8.
	NodeResources scheduler.Resources
	// Operations is the number of operations submitted before the agents
	// start. Default 10,000.
	Operations int
	// Pools spreads the operations round-robin over pools "load-0" …
	// "load-<Pools-1>"; 0 submits them without a pool (the tree's root).
	// With the embedded scheduler the pools are created. Default 10.
	Pools int
	// JobsPerOperation is each operation's job count; 0 is enough for the
	// agents' slots to stay busy for the whole run (with a 25 % margin), at
	// least 1. Default 0.
	JobsPerOperation int
	// JobResources is each job's resources; it must fit NodeResources.
	// Default cpu=1,user_slots=1.
	JobResources scheduler.Resources
	// JobDuration is how long each simulated job runs. Default 2s.
	JobDuration time.Duration
	// HeartbeatPeriod is each agent's heartbeat period (the embedded
	// scheduler is configured with it too). Default 1s.
	HeartbeatPeriod time.Duration
	// HeartbeatTimeout is how long an agent waits for a response before it
	// counts the heartbeat as failed. Default 5s.
	HeartbeatTimeout time.Duration
	// Warmup runs before the measured window and is excluded from its
	// statistics. Default 5s; 0 measures from the first heartbeat.
	Warmup time.Duration
	// Duration is the measured window. Default 30s.
	Duration time.Duration
	// FairShareUpdatePeriod is the embedded scheduler's
	// fair_share_update_period; 0 keeps the tree default (200ms). Ignored
	// with NATSURL.
	FairShareUpdatePeriod time.Duration
	// JournalBatchInterval is the embedded scheduler's least time between
	// two writes of its completions journal (actors.Config). Ignored with
	// NATSURL. Default: the scheduler's (50ms).
	JournalBatchInterval time.Duration
	// MaxHeartbeatPasses is the embedded scheduler's heartbeat shedding
	// limit (actors.Config.MaxHeartbeatPasses; 0: no shedding). Ignored
	// with NATSURL. Default: the scheduler's (0).
	MaxHeartbeatPasses int
	// SubmitConcurrency bounds the submissions in flight. Default 64.
	SubmitConcurrency int
	// Targets are the thresholds of Report.Checks.
	Targets Targets
	// CPUProfile, when set, receives a pprof CPU profile of the whole
	// process (the embedded scheduler included) over the measured window.
	CPUProfile io.Writer
	// ServerPID is the process of the scheduler under test when it runs
	// apart from the generator (NATSURL set, see Serve): its CPU over the
	// window is reported apart, and not counted as other processes'. 0:
	// none.
	ServerPID int
	// MemProfile, when set, receives the pprof allocation profile
	// ("allocs", since the process started: the submission, the warmup and
	// the window) at the end of the window.
	MemProfile io.Writer
	// HeapProfile, when set, receives the pprof in-use heap profile ("heap",
	// go tool pprof -sample_index=inuse_space) of what is live at the end
	// of the window: a garbage collection runs first, after the window's
	// figures are taken, so that the profile is exact rather than as of the
	// last collection.
	HeapProfile io.Writer
	// Trace, when set, receives a runtime execution trace (go tool trace) of
	// the measured window: scheduling latency, GC pauses and blocking.
	Trace io.Writer
	// Logger receives progress and warnings. Default: discard. The embedded
	// scheduler logs to it too.
	Logger *slog.Logger
}

// DefaultConfig returns the defaults: the target load.
func DefaultConfig() Config {
	return Config{
		Agents:               DefaultAgents,
		AgentsPerConn:        DefaultAgentsPerConn,
		NodePrefix:           DefaultNodePrefix,
		SyncAlways:           true,
		NodeResources:        DefaultNodeResources,
		Operations:           DefaultOperations,
		Pools:                DefaultPools,
		JobResources:         DefaultJobResources,
		JobDuration:          DefaultJobDuration,
		HeartbeatPeriod:      DefaultHeartbeatPeriod,
		HeartbeatTimeout:     DefaultHeartbeatTimeout,
		Warmup:               DefaultWarmup,
		Duration:             DefaultDuration,
		SubmitConcurrency:    DefaultSubmitConcurrency,
		JournalBatchInterval: actors.DefaultConfig().JournalBatchInterval,
		MaxHeartbeatPasses:   actors.DefaultConfig().MaxHeartbeatPasses,
		Targets:              Targets{P99: DefaultTargetP99, StartsPerSecond: DefaultTargetStartsPerSecond},
		Logger:               slog.New(slog.DiscardHandler),
	}
}

// Validate checks the configuration; every error wraps ErrConfig and names
// the field.
func (c *Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(ErrConfig, field, format, args...)
	}
	switch {
	case c.Agents <= 0:
		return bad("Agents", "must be positive, got %d", c.Agents)
	case c.AgentsPerConn <= 0:
		return bad("AgentsPerConn", "must be positive, got %d", c.AgentsPerConn)
	case c.Operations <= 0:
		return bad("Operations", "must be positive, got %d", c.Operations)
	case c.Pools < 0:
		return bad("Pools", "must be >= 0, got %d", c.Pools)
	case c.JobsPerOperation < 0 || c.JobsPerOperation > math.MaxInt32:
		return bad("JobsPerOperation", "must be in [0, %d], got %d", math.MaxInt32, c.JobsPerOperation)
	case c.JobDuration <= 0:
		return bad("JobDuration", "must be positive, got %s", c.JobDuration)
	case c.HeartbeatPeriod <= 0:
		return bad("HeartbeatPeriod", "must be positive, got %s", c.HeartbeatPeriod)
	case c.HeartbeatTimeout <= 0:
		return bad("HeartbeatTimeout", "must be positive, got %s", c.HeartbeatTimeout)
	case c.Warmup < 0:
		return bad("Warmup", "must be >= 0, got %s", c.Warmup)
	case c.Duration <= 0:
		return bad("Duration", "must be positive, got %s", c.Duration)
	case c.FairShareUpdatePeriod < 0:
		return bad("FairShareUpdatePeriod", "must be >= 0, got %s", c.FairShareUpdatePeriod)
	case c.MaxHeartbeatPasses < 0:
		return bad("MaxHeartbeatPasses", "must be >= 0, got %d", c.MaxHeartbeatPasses)
	case c.JournalBatchInterval < 0 || c.JournalBatchInterval > time.Second:
		return bad("JournalBatchInterval", "must be between 0 and 1s, got %s", c.JournalBatchInterval)
	case c.SubmitConcurrency <= 0:
		return bad("SubmitConcurrency", "must be positive, got %d", c.SubmitConcurrency)
	case c.Targets.P99 < 0:
		return bad("Targets.P99", "must be >= 0, got %s", c.Targets.P99)
	case c.Targets.StartsPerSecond < 0 || math.IsNaN(c.Targets.StartsPerSecond) || math.IsInf(c.Targets.StartsPerSecond, 0):
		return bad("Targets.StartsPerSecond", "must be a finite number >= 0, got %g", c.Targets.StartsPerSecond)
	case c.Logger == nil:
		return bad("Logger", "is nil")
	}
	if err := subjects.ValidateToken("node prefix", c.NodePrefix); err != nil {
		return cfgerr.Wrap(ErrConfig, "NodePrefix", err)
	}
	if err := subjects.ValidateToken("node id", c.nodeID(c.Agents-1)); err != nil {
		return cfgerr.Wrap(ErrConfig, "NodePrefix", err)
	}
	for _, v := range []struct {
		field string
		r     scheduler.Resources
	}{{"NodeResources", c.NodeResources}, {"JobResources", c.JobResources}} {
		positive := false
		for i, x := range v.r {
			if !scheduler.ValidAmount(x) {
				return bad(v.field, "%s %s, got %g", scheduler.ResourceType(i), scheduler.AmountRule, x)
			}
			positive = positive || x > 0
		}
		if !positive {
			return bad(v.field, "at least one resource must be positive")
		}
	}
	if !c.NodeResources.Dominates(c.JobResources) {
		return bad("JobResources", "a job (%s) does not fit a node (%s)", c.JobResources, c.NodeResources)
	}
	return nil
}

// Connections is the number of NATS connections the agents share.
func (c *Config) Connections() int { return (c.Agents + c.AgentsPerConn - 1) / c.AgentsPerConn }

// SlotsPerNode is how many jobs fit one node.
func (c *Config) SlotsPerNode() int {
	n := math.MaxInt
	for i, j := range c.JobResources {
		if j > 0 {
			n = min(n, int(math.Floor(c.NodeResources[i]/j+1e-9)))
		}
	}
	return n
}

// jobsPerOperation resolves JobsPerOperation: enough job starts for every
// slot to restart every JobDuration over the whole run, plus 25 %.
func (c *Config) jobsPerOperation() int {
	if c.JobsPerOperation > 0 {
		return c.JobsPerOperation
	}
	slots := float64(c.Agents) * float64(c.SlotsPerNode())
	run := (c.Warmup + c.Duration + c.HeartbeatTimeout).Seconds()
	starts := slots * math.Ceil(run/c.JobDuration.Seconds()) * 1.25
	return max(1, min(math.MaxInt32, int(math.Ceil(starts/float64(c.Operations)))))
}

// nodeID is the id of agent i.
func (c *Config) nodeID(i int) string { return fmt.Sprintf("%s-%05d", c.NodePrefix, i) }

// poolName is the pool of operation i ("" without pools).
func (c *Config) poolName(i int) string {
	if c.Pools == 0 {
		return ""
	}
	return fmt.Sprintf("load-%d", i%c.Pools)
}
