package treeconf_test

import (
	"context"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/internal/treeconf"
)

// counter is the scheduler's OperationCounter.
type counter struct{}

func (counter) PoolOperationCount(tree, pool string) int { return 0 }

// Example shows how a scheduler process wires the live configuration: open
// the bucket, seed it from the trees file on first start, watch it, and
// serve the configuration API.
func Example() {
	ctx := context.Background()
	logger := slog.Default()
	nc, _ := nats.Connect(nats.DefaultURL)
	js, _ := jetstream.New(nc)
	trees, _ := scenario.ParseTreesFile("trees.yaml")

	store, err := treeconf.OpenStore(ctx, js, 1, logger)
	if err != nil {
		return
	}
	if _, err := store.Seed(ctx, trees); err != nil {
		return
	}
	snaps, err := store.Watch(ctx)
	if err != nil {
		return
	}
	svc, err := treeconf.NewService(nc, store, counter{}, logger)
	if err != nil {
		return
	}
	defer func() { _ = svc.Stop() }()
	for snap := range snaps {
		for _, t := range snap.Trees {
			if t.Err != nil {
				logger.Warn("tree configuration is invalid; keeping the last valid one", "tree", t.Tree.Name, "err", t.Err)
				continue
			}
			_ = t.PoolConfigs() // hand t.Tree.Config and these to the tree's actor
		}
	}
}
