package loadgen_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/loadgen"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	"github.com/sharetree/sharetree/scheduler"
)

// tiny is a small, fast run: 20 agents with 4 slots each, 50 operations.
func tiny(t *testing.T) loadgen.Config {
	t.Helper()
	cfg := loadgen.DefaultConfig()
	cfg.Agents, cfg.AgentsPerConn = 20, 8 // three connections, the last one short
	cfg.Operations, cfg.Pools = 50, 3
	cfg.NodeResources = scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4}
	cfg.HeartbeatPeriod = 100 * time.Millisecond
	cfg.JobDuration = 150 * time.Millisecond
	cfg.Warmup, cfg.Duration = 300*time.Millisecond, 2*time.Second
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return cfg
}

// checkWorked asserts what does not depend on the machine's speed: the
// heartbeats were answered without refusals and jobs ran and finished.
func checkWorked(t *testing.T, rep loadgen.Report) {
	t.Helper()
	h := rep.Heartbeats
	if h.Answered == 0 || rep.RTT.Count == 0 {
		t.Fatalf("no heartbeat answered: %+v", h)
	}
	if refused := h.Failed - h.TimedOut; refused != 0 {
		t.Errorf("%d heartbeats refused or lost: %+v", refused, rep.Errors)
	}
	if rep.Submit.Submitted != 50 || rep.Submit.Refused != 0 {
		t.Errorf("submit = %+v, want 50 submitted", rep.Submit)
	}
	if rep.Jobs.StartedTotal == 0 || rep.Jobs.FinishedReported == 0 {
		t.Errorf("jobs = %+v, want starts and finishes", rep.Jobs)
	}
	if rep.Jobs.Duplicates != 0 || rep.Heartbeats.StaleResponses != 0 {
		t.Errorf("duplicate starts %d, stale responses %d; want none", rep.Jobs.Duplicates, rep.Heartbeats.StaleResponses)
	}
	if rep.Slots != 80 || rep.Connections != 3 {
		t.Errorf("slots %d, connections %d; want 80, 3", rep.Slots, rep.Connections)
	}
	if want := 3 + btoi(rep.Nodes != nil); len(rep.Checks) != want {
		t.Errorf("checks = %+v, want %d", rep.Checks, want)
	}
	data, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back loadgen.Report
	if err := json.Unmarshal(data, &back); err != nil || back.Heartbeats.Answered != h.Answered {
		t.Errorf("JSON round trip: %v, answered %d want %d", err, back.Heartbeats.Answered, h.Answered)
	}
	table := rep.String()
	for _, want := range []string{"round trip", "job starts", "initial fill", "target"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestRunEmbeddedScheduler(t *testing.T) {
	rep, err := loadgen.Run(context.Background(), tiny(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep.String())
	if rep.Mode != "embedded" || rep.SyncAlways == nil || !*rep.SyncAlways {
		t.Errorf("mode %q, sync always %v; want embedded, and every write fsynced as by the server", rep.Mode, rep.SyncAlways)
	}
	checkWorked(t, rep)
	// The tree updates every 200 ms, so the window sees updates, and they
	// write into recycled Results.
	if f := rep.FairShare; f == nil || f.Updates == 0 || f.Failures != 0 || f.RecycledResults == 0 {
		t.Errorf("fair-share stats = %+v, want updates into recycled Results", f)
	} else if !strings.Contains(rep.String(), "fair-share updates") {
		t.Errorf("table lacks the fair-share updates:\n%s", rep.String())
	}
	// Every agent heartbeats throughout: none is offline or lost, and the
	// check says so.
	if n := rep.Nodes; n == nil || n.Sessions != 20 || n.WentOffline != 0 || n.Lost != 0 {
		t.Errorf("nodes = %+v, want 20 sessions, none offline or lost", n)
	} else if c := rep.Checks[len(rep.Checks)-1]; c.Name != "no node falsely offline or lost" || !c.OK {
		t.Errorf("last check %+v, want the nodes' check, passed", c)
	}
	if !strings.Contains(rep.String(), "20 sessions at the window's end; 0 taken offline, 0 declared lost") {
		t.Errorf("table lacks the nodes:\n%s", rep.String())
	}
	// The jobs start and finish during the window, so some operations'
	// usage changes between updates and the engine recomputes them; every
	// update reads the run's operations.
	if f := rep.FairShare; f != nil && (f.OperationsPerUpdate == 0 || f.RecomputedPercent <= 0 || f.RecomputedPercent > 100) {
		t.Errorf("fair-share stats = %+v, want operations per update and a recomputed share in (0, 100]", f)
	}
}

func TestRunAgainstARunningScheduler(t *testing.T) {
	cfg := tiny(t)
	srv, _ := servertest.Start(t, "", func(scfg *server.Config) {
		scfg.Trees = loadgen.EmbeddedTrees(&cfg)
		scfg.Actors.HeartbeatPeriod = cfg.HeartbeatPeriod
	})
	cfg.NATSURL = srv.URL()
	cfg.NodePrefix = "ext"
	rep, err := loadgen.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Mode != "external" {
		t.Errorf("mode %q, want external", rep.Mode)
	}
	checkWorked(t, rep)
	if rep.FairShare != nil || rep.Nodes != nil {
		t.Errorf("fair-share stats %+v and nodes %+v of a scheduler that is not embedded", rep.FairShare, rep.Nodes)
	}
	if n := srv.System().NodeCount(); n != 20 {
		t.Errorf("scheduler knows %d nodes, want 20", n)
	}
}

func TestRunStopsWhenTheContextEnds(t *testing.T) {
	cfg := tiny(t)
	cfg.Duration = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := loadgen.Run(ctx, cfg)
	if err == nil && !rep.Interrupted {
		t.Errorf("a cancelled run returned neither an error nor an interrupted report")
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		field string
		edit  func(*loadgen.Config)
	}{
		{"Agents", func(c *loadgen.Config) { c.Agents = 0 }},
		{"AgentsPerConn", func(c *loadgen.Config) { c.AgentsPerConn = -1 }},
		{"Operations", func(c *loadgen.Config) { c.Operations = 0 }},
		{"Pools", func(c *loadgen.Config) { c.Pools = -1 }},
		{"JobDuration", func(c *loadgen.Config) { c.JobDuration = 0 }},
		{"HeartbeatPeriod", func(c *loadgen.Config) { c.HeartbeatPeriod = -time.Second }},
		{"Warmup", func(c *loadgen.Config) { c.Warmup = -1 }},
		{"Duration", func(c *loadgen.Config) { c.Duration = 0 }},
		{"NodePrefix", func(c *loadgen.Config) { c.NodePrefix = "a.b" }},
		{"NodeResources", func(c *loadgen.Config) { c.NodeResources = scheduler.Resources{} }},
		{"JobResources", func(c *loadgen.Config) { c.JobResources = scheduler.Resources{scheduler.CPU: 16} }},
		{"Logger", func(c *loadgen.Config) { c.Logger = nil }},
	} {
		cfg := loadgen.DefaultConfig()
		tc.edit(&cfg)
		err := cfg.Validate()
		if !errors.Is(err, loadgen.ErrConfig) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: Validate() = %v, want ErrConfig naming the field", tc.field, err)
		}
	}
	cfg := loadgen.DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	if cfg.SlotsPerNode() != 8 || cfg.Connections() != 20 {
		t.Errorf("defaults: %d slots per node, %d connections; want 8, 20", cfg.SlotsPerNode(), cfg.Connections())
	}
}

// TestServeAndProcessMode runs the scheduler with Serve and a run against it
// in "process" mode; the server process is this one, so its CPU is known.
func TestServeAndProcessMode(t *testing.T) {
	cfg := tiny(t)
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	served := make(chan error, 1)
	go func() { served <- loadgen.Serve(ctx, cfg, -1, func(url string) { urls <- url }) }()
	select {
	case cfg.NATSURL = <-urls:
	case err := <-served:
		t.Fatalf("Serve: %v", err)
	}
	cfg.ServerPID = os.Getpid()
	rep, err := loadgen.Run(context.Background(), cfg)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if rep.Mode != "process" {
		t.Errorf("mode %q, want process", rep.Mode)
	}
	checkWorked(t, rep)
	if rep.Process.ServerCPUCores <= 0 {
		t.Errorf("server CPU %g cores, want it measured", rep.Process.ServerCPUCores)
	}
	if !strings.Contains(rep.String(), "server process") {
		t.Errorf("table lacks the server process:\n%s", rep.String())
	}
}
