package nodeagent_test

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
)

func TestDefaultConfig(t *testing.T) {
	c := nodeagent.DefaultConfig("n1", scheduler.Resources{1})
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.HeartbeatPeriod != time.Second || c.HeartbeatTimeout != 5*time.Second || c.InterruptionSignal != "SIGTERM" ||
		c.JobLogLimit != 64<<10 || c.WorkDir != os.TempDir() || c.Logger == nil || len(c.Incarnation) != 16 {
		t.Errorf("defaults %+v", c)
	}
	if d := nodeagent.DefaultConfig("n1", scheduler.Resources{1}); d.Incarnation == c.Incarnation {
		t.Errorf("two configs share the incarnation %q", c.Incarnation)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := nodeagent.Config{NodeID: "n1", Resources: scheduler.Resources{0, 4}}
	cases := map[string]struct {
		edit func(*nodeagent.Config)
		want string // in the error; "" is valid
	}{
		"zero fields take defaults":  {func(*nodeagent.Config) {}, ""},
		"empty node id":              {func(c *nodeagent.Config) { c.NodeID = "" }, "NodeID"},
		"node id with a dot":         {func(c *nodeagent.Config) { c.NodeID = "a.b" }, "NodeID"},
		"node id with a wildcard":    {func(c *nodeagent.Config) { c.NodeID = "*" }, "NodeID"},
		"no resources":               {func(c *nodeagent.Config) { c.Resources = scheduler.Resources{} }, "Resources"},
		"negative resource":          {func(c *nodeagent.Config) { c.Resources[scheduler.Memory] = -1 }, "Resources: memory"},
		"NaN resource":               {func(c *nodeagent.Config) { c.Resources[scheduler.GPU] = math.NaN() }, "Resources: gpu"},
		"empty tag":                  {func(c *nodeagent.Config) { c.Tags = []string{"a", ""} }, "Tags[1]"},
		"duplicate tag":              {func(c *nodeagent.Config) { c.Tags = []string{"a", "a"} }, "Tags[1]"},
		"tag no filter can name":     {func(c *nodeagent.Config) { c.Tags = []string{"gpu", "gpu ssd"} }, `Tags[1]: tagfilter: invalid node tag filter: tag "gpu ssd" has ' '`},
		"negative period":            {func(c *nodeagent.Config) { c.HeartbeatPeriod = -time.Second }, "HeartbeatPeriod"},
		"negative timeout":           {func(c *nodeagent.Config) { c.HeartbeatTimeout = -1 }, "HeartbeatTimeout"},
		"negative interrupt timeout": {func(c *nodeagent.Config) { c.InterruptionTimeout = -1 }, "InterruptionTimeout"},
		"unknown signal":             {func(c *nodeagent.Config) { c.InterruptionSignal = "SIGFOO" }, "InterruptionSignal"},
		"signal without SIG":         {func(c *nodeagent.Config) { c.InterruptionSignal = "usr1" }, ""},
		"negative log limit":         {func(c *nodeagent.Config) { c.JobLogLimit = -1 }, "JobLogLimit"},
		"huge log limit":             {func(c *nodeagent.Config) { c.JobLogLimit = 1 << 30 }, "JobLogLimit"},
		"long incarnation":           {func(c *nodeagent.Config) { c.Incarnation = strings.Repeat("x", 200) }, "Incarnation"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, nodeagent.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v, want ErrInvalidConfig naming %q", err, tc.want)
			}
			if _, err := nodeagent.New(c, nil); !errors.Is(err, nodeagent.ErrInvalidConfig) {
				t.Errorf("New: %v, want ErrInvalidConfig", err)
			}
		})
	}
}
