// Package servertest starts a scheduler for integration tests. It is apart
// from package testutil because it imports internal/server, which imports
// packages (actors, internal/treeconf) whose own tests import testutil: in
// testutil it would make an import cycle.
package servertest

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
)

// Start starts a scheduler (embedded NATS on a free loopback port, JetStream
// in a temporary directory, warnings logged to stderr) on the trees
// document treesDoc ("": the trees configure sets), with what configure
// (nil: nothing) changes, and a client connection to it; both end with the
// test.
func Start(t testing.TB, treesDoc string, configure func(*server.Config)) (*server.Server, *nats.Conn) {
	t.Helper()
	srv := StartServer(t, treesDoc, configure)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return srv, nc
}

// StartServer is Start without the client connection: for a server whose
// NATS wants credentials or TLS of its clients.
func StartServer(t testing.TB, treesDoc string, configure func(*server.Config)) *server.Server {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.DataDir = t.TempDir()
	if treesDoc != "" {
		trees, err := scenario.ParseTrees("trees.yaml", []byte(treesDoc))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Trees = trees
	}
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if configure != nil {
		configure(&cfg)
	}
	srv, err := server.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// StartAgent runs an in-process node agent with simulated jobs (id, res,
// heartbeats every 50ms) on its own connection to url, which keeps
// reconnecting (every 20ms, without limit) while no server listens there:
// the agent lives through a scheduler's restart on the same port. The
// agent stops, and its connection closes, when the test ends.
func StartAgent(t testing.TB, url, id string, res scheduler.Resources) *nodeagent.Agent {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	cfg := nodeagent.DefaultConfig(id, res)
	cfg.HeartbeatPeriod, cfg.WorkDir = 50*time.Millisecond, t.TempDir()
	agent, _ := RunAgent(t, nc, cfg)
	return agent
}

// RunAgent runs an in-process node agent with cfg on nc until the test
// ends or stop is called (idempotent): stop ends Run, waits for it and
// closes nc. A cfg the agent refuses fails the test (nc closed).
func RunAgent(t testing.TB, nc *nats.Conn, cfg nodeagent.Config) (agent *nodeagent.Agent, stop func()) {
	t.Helper()
	agent, err := nodeagent.New(cfg, nc)
	if err != nil {
		nc.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var done sync.WaitGroup
	done.Go(func() { _ = agent.Run(ctx) })
	stop = sync.OnceFunc(func() { cancel(); done.Wait(); nc.Close() })
	t.Cleanup(stop)
	return agent, stop
}
