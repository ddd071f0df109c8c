package actors

import (
	"fmt"
	"slices"

	"github.com/asynkron/protoactor-go/actor"
)

// reconfigure runs a new configuration of the tree without a restart:
// admission counts and queues are rebuilt from the admitted operations
// (running ones keep running even where a limit was lowered; pending ones
// start where a limit was raised), the placement gets the new pools with
// every running job kept, pool actors follow the pools, and the update
// period takes effect. A configuration that would remove a pool holding
// operations is refused, and the tree keeps the one it runs.
func (t *treeActor) reconfigure(ctx actor.Context, spec TreeSpec) error {
	if spec.Name != t.spec.Name {
		return fmt.Errorf("tree %s cannot become tree %s", t.spec.Name, spec.Name)
	}
	if err := spec.Config.Validate(); err != nil {
		return err
	}
	old := t.spec
	// Ephemeral pools stay while their parent does.
	configured := poolSet(spec.Pools)
	for name, e := range t.ephemeral {
		if e.cfg.Parent != "" && !configured[e.cfg.Parent] {
			t.cfg.Logger.Warn("ephemeral pool's parent is gone from the configuration", "tree", t.spec.Name, "pool", name, "parent", e.cfg.Parent)
		}
	}
	newAll := append(slices.Clone(spec.Pools), t.ephemeralConfigs()...)
	oldAll := t.allPools()
	// The placement changes nothing when it refuses; the admission would
	// start pending operations, so it goes second.
	if err := t.ledger.setTree(spec.Config, newAll); err != nil {
		return err
	}
	started, err := t.adm.Reconfigure(spec.Config, newAll)
	if err != nil {
		if rerr := t.ledger.setTree(old.Config, oldAll); rerr != nil {
			panic(fmt.Sprintf("tree %s: restoring the placement after a refused configuration: %v", t.spec.Name, rerr))
		}
		return err
	}
	t.spec, t.all = spec, nil
	t.syncPoolActors(ctx)
	if spec.Config.FairShareUpdatePeriod != old.Config.FairShareUpdatePeriod {
		t.startTimer(ctx)
	}
	t.startAdmitted(ctx, started, "", "start operation after a reconfiguration")
	t.refreshPending(ctx.Send)
	t.cfg.Logger.Info("tree reconfigured", "tree", t.spec.Name, "pools", len(spec.Pools), "started", len(started))
	return nil
}
