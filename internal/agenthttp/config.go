package agenthttp

import (
	"errors"
	"fmt"
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("agenthttp: invalid config")

// DefaultUnhealthyAfter is Config.UnhealthyAfter's default.
const DefaultUnhealthyAfter = 3

// Config configures the listener.
type Config struct {
	// Addr is the host:port to listen on (port 0 picks a free one).
	// Required.
	Addr string
	// UnhealthyAfter: /healthz answers 503 once this many heartbeats in a
	// row have failed. Default 3.
	UnhealthyAfter int
}

// Defaults fills in the zero fields.
func (c *Config) Defaults() {
	if c.UnhealthyAfter == 0 {
		c.UnhealthyAfter = DefaultUnhealthyAfter
	}
}

// Validate checks the configuration (after Defaults).
func (c Config) Validate() error {
	switch {
	case c.Addr == "":
		return fmt.Errorf("%w: Addr is empty", ErrConfig)
	case c.UnhealthyAfter < 1:
		return fmt.Errorf("%w: UnhealthyAfter must be at least 1, got %d", ErrConfig, c.UnhealthyAfter)
	}
	return nil
}
