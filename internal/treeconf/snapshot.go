package treeconf

import (
	"fmt"

	"github.com/sharetree/sharetree/internal/treeconf/tagfilter"
	"github.com/sharetree/sharetree/scheduler"
)

// Snapshot is the whole live configuration at one bucket revision:
// consistent (it reflects every write up to Revision and none after).
type Snapshot struct {
	// Revision is the last bucket revision the snapshot includes (0 for an
	// empty bucket).
	Revision uint64
	// DefaultTree is the cluster's default_tree; ClusterRevision its key's
	// revision (0: the cluster key does not exist, the bucket is not
	// seeded).
	DefaultTree     string
	ClusterRevision uint64
	// Trees are the trees by name.
	Trees []TreeSnapshot
	// Problems lists what is wrong outside the trees: a cluster key that
	// does not decode or names a missing tree, pools whose tree key does
	// not exist, keys that are not configuration keys. Each is a message.
	Problems []string
}

// TreeSnapshot is one tree with its pools.
type TreeSnapshot struct {
	Tree     Tree
	Revision uint64
	// Filter is the parsed node_tag_filter.
	Filter tagfilter.Filter
	// Pools are parents before children, siblings by name (the bucket
	// keeps no file order; the engine serves sibling burst pools in this
	// order).
	Pools []PoolSnapshot
	// Err is why the tree's stored configuration breaks a rule (a
	// *RuleError): possible when keys were written around the service, or
	// by writers in different processes changing different pools of the
	// tree at once. A scheduler should keep running the tree's last valid
	// configuration and raise an alert. When Err is set, Pools lists the
	// pools that decode, by name, with Effective equal to their own
	// configuration.
	Err error
}

// PoolSnapshot is one pool.
type PoolSnapshot struct {
	// Pool is the pool's own configuration as stored.
	Pool Pool
	// Effective is the configuration the engine runs: the tree's presets
	// named in config_presets, then the pool's own keys.
	Effective scheduler.PoolConfig
	Revision  uint64
}

// Tree returns the named tree.
func (s *Snapshot) Tree(name string) (*TreeSnapshot, bool) {
	for i := range s.Trees {
		if s.Trees[i].Tree.Name == name {
			return &s.Trees[i], true
		}
	}
	return nil, false
}

// PoolConfigs returns the pools' effective configurations in order (the
// engine's scheduler.Snapshot.Pools).
func (t *TreeSnapshot) PoolConfigs() []scheduler.PoolConfig {
	out := make([]scheduler.PoolConfig, len(t.Pools))
	for i, p := range t.Pools {
		out[i] = p.Effective
	}
	return out
}

// Pool returns the named pool.
func (t *TreeSnapshot) Pool(name string) (*PoolSnapshot, bool) {
	for i := range t.Pools {
		if t.Pools[i].Pool.Name() == name {
			return &t.Pools[i], true
		}
	}
	return nil, false
}

// EphemeralPool returns the configuration of the ephemeral pool
// "<parent>$<user>" the scheduler creates for a user's operation in a pool
// with create_ephemeral_subpools (or under default_parent_pool): the
// parent's ephemeral_subpool_config (mode, max_running_operation_count,
// max_operation_count, resource_limits), everything else unset.
func (t *TreeSnapshot) EphemeralPool(parent, user string) (scheduler.PoolConfig, error) {
	cfg := scheduler.PoolConfig{Name: scheduler.PoolID(parent + "$" + user), Parent: scheduler.PoolID(parent)}
	if parent == "" {
		cfg.Name = scheduler.PoolID(user)
		return cfg, nil
	}
	p, ok := t.Pool(parent)
	if !ok {
		return scheduler.PoolConfig{}, fmt.Errorf("%w: pool %q in tree %q", ErrNotFound, parent, t.Tree.Name)
	}
	if e := p.Pool.Options.EphemeralSubpoolConfig; e != nil {
		c := e.Config
		cfg.Mode, cfg.MaxRunningOperationCount, cfg.MaxOperationCount, cfg.ResourceLimits =
			c.Mode, c.MaxRunningOperationCount, c.MaxOperationCount, c.ResourceLimits
	}
	return cfg, nil
}

// snapshot builds the Snapshot of a state, validating every tree.
func (s *state) snapshot() Snapshot {
	snap := Snapshot{Revision: s.rev, DefaultTree: s.cluster.DefaultTree, ClusterRevision: s.clusterRev}
	if s.clusterRev != 0 {
		if err := checkCluster(s); err != nil {
			snap.Problems = append(snap.Problems, err.Error())
		}
	}
	for _, name := range sortedKeys(s.trees) {
		ts := s.trees[name]
		if !ts.exists {
			snap.Problems = append(snap.Problems, fmt.Sprintf("tree %q has %d pool keys but no tree key", name, len(ts.pools)))
			continue
		}
		tsnap := TreeSnapshot{Tree: ts.tree, Revision: ts.rev}
		c, err := checkTree(s, name)
		if err != nil {
			tsnap.Err = err
			tsnap.Filter, _ = tagfilter.Parse(ts.tree.Options.NodeTagFilter)
			for _, pn := range sortedKeys(ts.pools) {
				if ps := ts.pools[pn]; ps.err == nil {
					tsnap.Pools = append(tsnap.Pools, PoolSnapshot{Pool: ps.pool, Effective: ps.pool.Config, Revision: ps.rev})
				}
			}
		} else {
			tsnap.Filter = c.filter
			for _, pn := range c.order {
				ps := ts.pools[pn]
				tsnap.Pools = append(tsnap.Pools, PoolSnapshot{Pool: ps.pool, Effective: c.effective[pn], Revision: ps.rev})
			}
		}
		snap.Trees = append(snap.Trees, tsnap)
	}
	for _, k := range s.ignored {
		snap.Problems = append(snap.Problems, fmt.Sprintf("key %q is not a configuration key", k))
	}
	return snap
}
