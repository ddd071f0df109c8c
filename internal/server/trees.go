package server

import (
	"context"
	"time"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/internal/treeconf"
	"github.com/sharetree/sharetree/scheduler"
)

// treeSpecs turns a configuration snapshot into the actors' trees. A tree
// whose stored configuration breaks a rule keeps last (its last valid
// spec) when there is one and is left out otherwise. A tree's integral
// volumes are those persisted for it (see kvState) when there are, else the
// trees file's; they matter only to a tree that starts (a running tree
// keeps the volumes it has).
func treeSpecs(snap treeconf.Snapshot, file *scenario.TreesFile, last map[string]actors.TreeSpec, persisted map[string]map[scheduler.PoolID]scheduler.Resources) []actors.TreeSpec {
	volumes := map[string]scenario.TreeSpec{}
	if file != nil {
		for _, t := range file.Trees {
			volumes[t.Name] = t
		}
	}
	var out []actors.TreeSpec
	for i := range snap.Trees {
		t := &snap.Trees[i]
		if t.Err != nil {
			if prev, ok := last[t.Tree.Name]; ok {
				out = append(out, prev)
			}
			continue
		}
		spec := actors.TreeSpec{Name: t.Tree.Name, Config: t.Tree.Config, Pools: t.PoolConfigs(), Volumes: volumes[t.Tree.Name].Volumes}
		if v, ok := persisted[t.Tree.Name]; ok {
			spec.Volumes = v
		}
		if !t.Filter.IsEmpty() {
			spec.NodeFilter = t.Filter
		}
		spec.MaxEphemeralPoolsPerUser = t.Tree.Options.MaxEphemeralPoolsPerUser
		for _, p := range t.Pools {
			o := p.Pool.Options
			if !o.CreateEphemeralSubpools && !o.ForbidImmediateOperations && len(o.OffloadingSettings) == 0 && o.SubmitACL == nil {
				continue
			}
			po := actors.PoolOptions{ForbidImmediateOperations: o.ForbidImmediateOperations, CreateEphemeralSubpools: o.CreateEphemeralSubpools,
				SubmitACL: o.SubmitACL}
			for _, off := range o.OffloadingSettings {
				po.Offloading = append(po.Offloading, actors.Offloading{Tree: off.Tree, Pool: scheduler.PoolID(off.Pool), Share: off.Share})
			}
			if tmpl, err := t.EphemeralPool(p.Pool.Name(), "_"); err == nil {
				tmpl.Name, tmpl.Parent = "", ""
				po.EphemeralSubpool = tmpl
			}
			if spec.PoolOptions == nil {
				spec.PoolOptions = map[scheduler.PoolID]actors.PoolOptions{}
			}
			spec.PoolOptions[p.Effective.Name] = po
		}
		out = append(out, spec)
	}
	return out
}

// watchTrees applies every configuration change to the running trees until
// ctx ends, watching again (after a second) when a watch ends early (the
// connection was lost). Problems are logged; what cannot be applied keeps
// running as it was.
func (s *Server) watchTrees(ctx context.Context, snaps <-chan treeconf.Snapshot, last map[string]actors.TreeSpec) {
	defer close(s.watchDone)
	for {
		s.applySnapshots(ctx, snaps, last)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		var err error
		if snaps, err = s.confStore.Watch(ctx); err != nil {
			s.cfg.Logger.Warn("watch the tree configuration again", "err", err)
			snaps = nil
		}
	}
}

func (s *Server) applySnapshots(ctx context.Context, snaps <-chan treeconf.Snapshot, last map[string]actors.TreeSpec) {
	if snaps == nil {
		return
	}
	for snap := range snaps {
		for _, p := range snap.Problems {
			s.cfg.Logger.Warn("tree configuration problem", "problem", p)
		}
		for _, t := range snap.Trees {
			if t.Err != nil {
				s.cfg.Logger.Error("tree configuration breaks a rule; the tree keeps its last valid configuration", "tree", t.Tree.Name, "err", t.Err)
			}
		}
		// A tree this scheduler never ran (added to the configuration, or
		// mended after breaking a rule since the start) takes its stored
		// volumes; one it removed earlier had its state deleted then.
		var fresh []string
		for _, t := range snap.Trees {
			if _, ran := last[t.Tree.Name]; !ran && t.Err == nil {
				fresh = append(fresh, t.Tree.Name)
			}
		}
		specs := treeSpecs(snap, s.cfg.Trees, last, s.state.loadTrees(ctx, fresh, s.cfg.Logger))
		if len(specs) == 0 {
			continue
		}
		def := snap.DefaultTree
		if def == "" {
			def = specs[0].Name
		}
		if err := s.sys.ApplyTrees(specs, def, 30*time.Second); err != nil {
			s.cfg.Logger.Error("tree configuration partly applied", "revision", snap.Revision, "err", err)
		} else {
			s.cfg.Logger.Info("tree configuration applied", "revision", snap.Revision, "trees", len(specs))
		}
		for _, sp := range specs {
			last[sp.Name] = sp
		}
		if ctx.Err() != nil {
			return
		}
	}
}
