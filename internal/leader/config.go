package leader

import (
	"errors"
	"log/slog"
	"time"

	"github.com/sharetree/sharetree/internal/cfgerr"
)

// ErrInvalidConfig is wrapped by every Config.Validate error.
var ErrInvalidConfig = errors.New("leader: invalid config")

// Config configures a lease. The zero value of a duration takes its
// default; Validate checks the rest.
type Config struct {
	// Name identifies the server in the lease's value and in logs (the
	// scheduler's --server-name). Required: 1 to 128 printable ASCII
	// characters.
	Name string
	// TTL is how long the lease lives without a renewal: after a leader
	// dies, a standby takes over within TTL plus RetryPeriod. Default 10s,
	// at least 2s, whole seconds (NATS keeps per-key TTLs in seconds).
	TTL time.Duration
	// RenewPeriod is the time between two renewals. Default TTL/3.
	RenewPeriod time.Duration
	// RenewDeadline is how long after its last renewal was sent a leader
	// still acts as one: past it Valid is false until a renewal succeeds,
	// and a renewal that fails past it loses the lease. Default 2/3 of TTL;
	// more than RenewPeriod and less than TTL (the margin covers clocks that
	// run at different rates).
	RenewDeadline time.Duration
	// RetryPeriod is how often a standby tries to take the lease. Default 2s.
	RetryPeriod time.Duration
	// TakeOver takes a lease held under Name at once instead of waiting for
	// its TTL: the same server restarted after a crash. A server that lost
	// its lease campaigns again with TakeOver off, so that two servers
	// given the same name do not take the lease from each other in turn.
	TakeOver bool
	// Replicas is how many copies JetStream keeps of the lease's bucket
	// (0: 1).
	Replicas int
	// Logger receives the lease's changes; nil discards them.
	Logger *slog.Logger
}

// DefaultConfig is a Config with its defaults set, for the server name.
func DefaultConfig(name string) Config {
	return Config{Name: name, TTL: 10 * time.Second, RetryPeriod: 2 * time.Second, TakeOver: true}
}

// withDefaults fills the zero durations.
func (c Config) withDefaults() Config {
	if c.TTL == 0 {
		c.TTL = 10 * time.Second
	}
	if c.RenewPeriod == 0 {
		c.RenewPeriod = c.TTL / 3
	}
	if c.RenewDeadline == 0 {
		c.RenewDeadline = c.TTL * 2 / 3
	}
	if c.RetryPeriod == 0 {
		c.RetryPeriod = 2 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate checks the config, its defaults filled. A bad field's error is
// a *cfgerr.FieldError wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(ErrInvalidConfig, field, format, args...)
	}
	d := c.withDefaults()
	if c.Name == "" || len(c.Name) > 128 {
		return bad("Name", "server name %q: want 1 to 128 characters", c.Name)
	}
	for i := range len(c.Name) {
		if b := c.Name[i]; b <= ' ' || b > '~' {
			return bad("Name", "server name %q: character %q at %d: want printable ASCII without spaces", c.Name, b, i)
		}
	}
	switch {
	case d.TTL < 2*time.Second || d.TTL%time.Second != 0:
		return bad("TTL", "lease TTL %s: want whole seconds, at least 2s", c.TTL)
	case d.RenewPeriod <= 0:
		return bad("RenewPeriod", "lease renew period %s: want more than 0", c.RenewPeriod)
	case d.RenewDeadline <= d.RenewPeriod || d.RenewDeadline >= d.TTL:
		return bad("RenewDeadline", "lease renew deadline %s: want more than the renew period (%s) and less than the TTL (%s)",
			d.RenewDeadline, d.RenewPeriod, d.TTL)
	case d.RetryPeriod <= 0:
		return bad("RetryPeriod", "lease retry period %s: want more than 0", c.RetryPeriod)
	}
	return nil
}
