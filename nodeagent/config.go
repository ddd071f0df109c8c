package nodeagent

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/sharetree/sharetree/internal/cfgerr"
	"github.com/sharetree/sharetree/internal/treeconf/tagfilter"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// Defaults of the Config fields (a zero field takes its default).
const (
	DefaultHeartbeatPeriod     = time.Second
	DefaultHeartbeatTimeout    = 5 * time.Second
	DefaultInterruptionSignal  = "SIGTERM"
	DefaultInterruptionTimeout = 10 * time.Second
	DefaultJobLogLimit         = 64 << 10
	// MaxJobLogLimit bounds JobLogLimit so that a heartbeat carrying a few
	// finished jobs stays well under NATS's default 1 MiB payload limit.
	MaxJobLogLimit = 256 << 10
	// MinSchedulerHeartbeatPeriod is the shortest heartbeat period the agent
	// takes from a scheduler's response; a shorter one (a misconfigured or
	// faulty scheduler) is raised to it, so that the agent cannot be made
	// to heartbeat in a busy loop.
	MinSchedulerHeartbeatPeriod = 10 * time.Millisecond
)

// Config configures an Agent. A zero duration, size or string field takes
// its default (see DefaultConfig); NodeID and Resources are required.
type Config struct {
	// NodeID names the node; it is a token of the node's subjects, so it
	// must pass subjects.ValidateToken. Required.
	NodeID string
	// Resources is the node's total: what it offers to jobs. At least one
	// resource must be positive. Required.
	Resources scheduler.Resources
	// Tags label the node for the scheduler's node filters. Each tag must be
	// non-empty and appear once.
	Tags []string
	// HeartbeatPeriod is how often the agent heartbeats. A response's
	// heartbeat_period overrides it while the agent runs. Default 1s.
	HeartbeatPeriod time.Duration
	// HeartbeatTimeout bounds the wait for a heartbeat's response. Default 5s.
	HeartbeatTimeout time.Duration
	// InterruptionSignal is delivered to an interrupted job's process group
	// when neither the interrupt nor the job spec names one ("SIGTERM",
	// "TERM", "SIGUSR1", ...). Default "SIGTERM".
	InterruptionSignal string
	// InterruptionTimeout is how long an interrupted job may take to exit
	// before it is killed, when the interrupt carries no timeout. Default 10s
	// (the reference's allocation_preemption_timeout).
	InterruptionTimeout time.Duration
	// JobLogLimit is how many bytes of a job's combined stdout and stderr are
	// kept (the last ones) and reported as its log tail. Default 64 KiB, at
	// most MaxJobLogLimit.
	JobLogLimit int
	// WorkDir is where jobs without a working directory get their temporary
	// directories. Default os.TempDir().
	WorkDir string
	// Incarnation identifies this run of the agent in heartbeats; it must
	// change when the agent restarts. Default: 16 random hex digits.
	Incarnation string
	// Logger receives the agent's logs. Default: discard.
	Logger *slog.Logger
	// Now is the agent's wall clock, read only for the start and finish
	// times it reports with its jobs (which the scheduler shows but never
	// decides by: a node's clock may be minutes off). The heartbeat period,
	// the heartbeat timeout and the interruption timeout are measured on
	// Go's monotonic clock whatever Now returns. Default time.Now.
	Now func() time.Time
	// OnJobStart, when set, is called with each job the agent starts (after
	// its resources are checked, before it runs), with the agent's lock
	// held: it must return quickly and must not call the agent. It lets a
	// test or an embedding program record what ran where, the ground truth
	// that invariants such as "no job runs twice" are checked against.
	OnJobStart func(JobStart)
	// OnJobInterrupt, when set, is called when the agent interrupts a job
	// (once per job: the scheduler repeats an interrupt in every response
	// until the job ends, and the repeats change nothing), with the
	// agent's lock held, as OnJobStart.
	OnJobInterrupt func(JobInterrupt)
}

// JobInterrupt describes a job the agent interrupts (see
// Config.OnJobInterrupt).
type JobInterrupt struct {
	// ID is the job's id; Signal the signal delivered ("" for a simulated
	// job, which completes at once); Timeout how long the job may take to
	// exit before it is killed; Reason the scheduler's.
	ID, Signal, Reason string
	Timeout            time.Duration
}

// JobStart describes a job the agent starts (see Config.OnJobStart).
type JobStart struct {
	// ID and OperationID are the job's and its operation's ids.
	ID, OperationID string
	// Resources are what the job was given.
	Resources scheduler.Resources
	// Allocated is what the node's running jobs hold with this one.
	Allocated scheduler.Resources
	// OverCapacity: Allocated exceeds the node's Resources in some
	// resource (see Stats.JobsOverCapacity).
	OverCapacity bool
}

// DefaultConfig returns a Config for the node with every default filled in
// (and a fresh random incarnation).
func DefaultConfig(nodeID string, resources scheduler.Resources) Config {
	return Config{NodeID: nodeID, Resources: resources}.withDefaults()
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.HeartbeatPeriod == 0 {
		c.HeartbeatPeriod = DefaultHeartbeatPeriod
	}
	if c.HeartbeatTimeout == 0 {
		c.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if c.InterruptionSignal == "" {
		c.InterruptionSignal = DefaultInterruptionSignal
	}
	if c.InterruptionTimeout == 0 {
		c.InterruptionTimeout = DefaultInterruptionTimeout
	}
	if c.JobLogLimit == 0 {
		c.JobLogLimit = DefaultJobLogLimit
	}
	if c.WorkDir == "" {
		c.WorkDir = os.TempDir()
	}
	if c.Incarnation == "" {
		c.Incarnation = newIncarnation()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.Tags = append([]string(nil), c.Tags...)
	return c
}

// Validate checks c as New would use it (zero fields take their defaults).
// Every error wraps ErrInvalidConfig and names the field.
func (c Config) Validate() error {
	c = c.withDefaults()
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(ErrInvalidConfig, field, format, args...)
	}
	if err := subjects.ValidateToken("node id", c.NodeID); err != nil {
		return cfgerr.Wrap(ErrInvalidConfig, "NodeID", err)
	}
	positive := false
	for r, v := range c.Resources {
		if !scheduler.ValidAmount(v) {
			return bad("Resources", "%s %s, got %g", scheduler.ResourceType(r), scheduler.AmountRule, v)
		}
		positive = positive || v > 0
	}
	if !positive {
		return bad("Resources", "at least one resource must be positive")
	}
	seen := make(map[string]bool, len(c.Tags))
	for i, tag := range c.Tags {
		if err := tagfilter.CheckTag(tag); err != nil {
			// A tag no node_tag_filter can name: no tree could select
			// the node by it.
			return cfgerr.Wrap(ErrInvalidConfig, fmt.Sprintf("Tags[%d]", i), err)
		}
		if seen[tag] {
			return bad(fmt.Sprintf("Tags[%d]", i), "%q appears twice", tag)
		}
		seen[tag] = true
	}
	switch {
	case c.HeartbeatPeriod < 0:
		return bad("HeartbeatPeriod", "must be positive, got %s", c.HeartbeatPeriod)
	case c.HeartbeatTimeout < 0:
		return bad("HeartbeatTimeout", "must be positive, got %s", c.HeartbeatTimeout)
	case c.InterruptionTimeout < 0:
		return bad("InterruptionTimeout", "must be positive, got %s", c.InterruptionTimeout)
	case c.JobLogLimit < 0 || c.JobLogLimit > MaxJobLogLimit:
		return bad("JobLogLimit", "must be in [1, %d], got %d", MaxJobLogLimit, c.JobLogLimit)
	case len(c.Incarnation) > subjects.MaxTokenLength:
		return bad("Incarnation", "is %d characters, at most %d allowed", len(c.Incarnation), subjects.MaxTokenLength)
	}
	if _, err := parseSignal(c.InterruptionSignal); err != nil {
		return cfgerr.Wrap(ErrInvalidConfig, "InterruptionSignal", err)
	}
	return nil
}

func newIncarnation() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go >= 1.24).
	return hex.EncodeToString(b[:])
}
