package dashboard

import (
	"errors"
	"time"

	"github.com/sharetree/sharetree/internal/cfgerr"
)

// ErrConfig is wrapped by every refused Config.
var ErrConfig = errors.New("dashboard: invalid configuration")

// Config configures the dashboard. The zero value of a field takes its
// default (see Defaults).
type Config struct {
	// Window is how far back the history of a tree goes (default 1h).
	Window time.Duration
	// Resolution is how often the trees are sampled, and the least time
	// between two samples of a tree by their updates' times (default 5s).
	Resolution time.Duration
	// MaxPools bounds the pools whose history is kept per tree (default
	// 200): the root and then the pools nearest to it (by depth, then in
	// the tree's order). The tree page lists every pool regardless.
	MaxPools int
	// MaxPending bounds the waiting operations the tree page lists
	// (default 100; the total is shown).
	MaxPending int
	// MaxRows bounds the pools the tree page lists (default 500): the
	// first in the tree's order; a pool's page lists its children.
	MaxRows int
	// Refresh is how often the pages reload themselves (default 5s).
	Refresh time.Duration
}

// Defaults returns c with every zero field set to its default.
func (c Config) Defaults() Config {
	if c.Window == 0 {
		c.Window = time.Hour
	}
	if c.Resolution == 0 {
		c.Resolution = 5 * time.Second
	}
	if c.MaxPools == 0 {
		c.MaxPools = 200
	}
	if c.MaxPending == 0 {
		c.MaxPending = 100
	}
	if c.MaxRows == 0 {
		c.MaxRows = 500
	}
	if c.Refresh == 0 {
		c.Refresh = 5 * time.Second
	}
	return c
}

// maxSamples bounds the samples kept per tree, whatever Window and
// Resolution say.
const maxSamples = 10_000

// Validate refuses a Config (after Defaults) whose fields are out of
// range with a *cfgerr.FieldError naming the field.
func (c Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(ErrConfig, field, format, args...)
	}
	switch {
	case c.Resolution <= 0:
		return bad("Resolution", "must be positive, got %s", c.Resolution)
	case c.Window < c.Resolution:
		return bad("Window", "must be at least Resolution (%s), got %s", c.Resolution, c.Window)
	case c.Window/c.Resolution > maxSamples:
		return bad("Window", "%s holds more than %d samples of %s", c.Window, maxSamples, c.Resolution)
	case c.MaxPools < 1 || c.MaxPools > 100_000:
		return bad("MaxPools", "must be in [1, 100000], got %d", c.MaxPools)
	case c.MaxPending < 1 || c.MaxPending > 10_000:
		return bad("MaxPending", "must be in [1, 10000], got %d", c.MaxPending)
	case c.MaxRows < 1 || c.MaxRows > 100_000:
		return bad("MaxRows", "must be in [1, 100000], got %d", c.MaxRows)
	case c.Refresh < time.Second:
		return bad("Refresh", "must be at least 1s, got %s", c.Refresh)
	}
	return nil
}
