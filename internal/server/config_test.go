package server_test

import (
	"context"
	"errors"
	"os"
	"runtime/debug"
	"testing"

	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/internal/server"
)

func TestConfigValidate(t *testing.T) {
	trees, err := scenario.ParseTrees("trees.yaml", []byte(treesYAML))
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*server.Config){
		"negative GC percent":           func(c *server.Config) { c.GCPercent = -1 },
		"no data dir":                   func(c *server.Config) { c.DataDir = "" },
		"no journal bytes":              func(c *server.Config) { c.JournalMaxBytes = 0 },
		"no store":                      func(c *server.Config) { c.MaxStore = 0 },
		"store below what streams take": func(c *server.Config) { c.MaxStore = c.EventMaxBytes + c.JournalMaxBytes + c.DashboardMaxBytes },
		"no dashboard bytes":            func(c *server.Config) { c.DashboardMaxBytes = 0 },
	} {
		cfg := server.DefaultConfig()
		cfg.DataDir, cfg.Trees = "data", trees
		if err := cfg.Validate(); err != nil {
			t.Fatalf("defaults: %v", err)
		}
		edit(&cfg)
		if err := cfg.Validate(); !errors.Is(err, server.ErrConfig) {
			t.Errorf("%s: Validate() = %v, want ErrConfig", name, err)
		}
	}
	// MaxStore is the embedded server's: with NATSURL it is not checked.
	cfg := server.DefaultConfig()
	cfg.NATSURL, cfg.Trees, cfg.MaxStore = "nats://127.0.0.1:4222", trees, 1
	if err := cfg.Validate(); err != nil {
		t.Errorf("MaxStore 1 with NATSURL: %v, want valid", err)
	}
}

// TestStartSetsTheGCPercent: Start applies Config.GCPercent to the process
// (unless GOGC is set).
func TestStartSetsTheGCPercent(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: it wins over Config.GCPercent")
	}
	trees, err := scenario.ParseTrees("trees.yaml", []byte(treesYAML))
	if err != nil {
		t.Fatal(err)
	}
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	cfg := server.DefaultConfig()
	cfg.DataDir, cfg.Trees, cfg.GCPercent = t.TempDir(), trees, 321
	srv, err := server.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	if got := debug.SetGCPercent(before); got != 321 {
		t.Errorf("GC percent %d after Start, want 321", got)
	}
}
