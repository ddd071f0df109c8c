package actors

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestConfigValidateNamesTheField(t *testing.T) {
	if c := DefaultConfig(); c.Validate() != nil {
		t.Fatalf("defaults: %v", c.Validate())
	}
	fields := map[string]func(*Config, float64){
		"PreemptionRateLimit": func(c *Config, v float64) { c.PreemptionRateLimit = v },
		"GracefulTolerance":   func(c *Config, v float64) { c.GracefulTolerance = v },
	}
	for name, set := range fields {
		for _, v := range []float64{-1, math.NaN(), math.Inf(1)} {
			c := DefaultConfig()
			set(&c, v)
			if err := c.Validate(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), name) {
				t.Errorf("%s = %g: Validate() = %v, want ErrConfig naming %s", name, v, err, name)
			}
		}
	}
	for _, v := range []time.Duration{0, -time.Second} {
		c := DefaultConfig()
		c.StatePersistPeriod = v
		if err := c.Validate(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "StatePersistPeriod") {
			t.Errorf("StatePersistPeriod = %s: Validate() = %v, want ErrConfig naming StatePersistPeriod", v, err)
		}
	}
	c := DefaultConfig()
	c.JobRevivalTimeout = -time.Second
	if err := c.Validate(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "JobRevivalTimeout") {
		t.Errorf("JobRevivalTimeout = -1s: Validate() = %v, want ErrConfig naming JobRevivalTimeout", err)
	}
}
