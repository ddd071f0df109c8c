// Package servertest starts a scheduler for integration tests. It is apart
// from package testutil because it imports internal/server, which imports
// packages (actors, internal/treeconf) whose own tests import testutil: in
// testutil it would make an import cycle.
package servertest

import (
	"context"
	"log/slog"
	"os"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/internal/server"
)

// Start starts a scheduler (embedded NATS on a free loopback port, JetStream
// in a temporary directory, warnings logged to stderr) on the trees
// document treesDoc ("": the trees configure sets), with what configure
// (nil: nothing) changes, and a client connection to it; both end with the
// test.
func Start(t testing.TB, treesDoc string, configure func(*server.Config)) (*server.Server, *nats.Conn) {
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
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return srv, nc
}
