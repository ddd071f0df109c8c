package treeconf

import (
	"context"
	"errors"
	"fmt"

	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/subjects"
)

// Seed fills the bucket from a trees file (the server's --pools, or its
// built-in default) on first start. The bucket counts as seeded once the
// cluster key exists, and Seed writes it last: on a seeded bucket Seed does
// nothing and returns false. On a bucket without it — empty, or left by a
// seed that stopped half-way — Seed validates the file's trees with every
// rule, creates the tree and pool keys that are missing (keeping those that
// exist), then the cluster key, and returns true. Two processes seeding at
// once both succeed; the first cluster key written wins.
//
// Accumulated volumes in the file are state, not configuration: Seed does
// not store them (the scheduler seeds its volumes from the file itself).
func (s *Store) Seed(ctx context.Context, trees *scenario.TreesFile) (bool, error) {
	if trees == nil || len(trees.Trees) == 0 {
		return false, fmt.Errorf("%w: seed: no trees", ErrInvalid)
	}
	st, err := s.loadState(ctx)
	if err != nil {
		return false, err
	}
	if st.clusterRev != 0 {
		return false, nil
	}
	plan, err := checkSeed(st, trees)
	if err != nil {
		return false, err
	}
	createOrKeep := func(k subjects.ConfigKey, value []byte) error {
		_, err := s.Create(ctx, k, value)
		if errors.Is(err, ErrExists) {
			s.logger.Warn("seed: key already exists; keeping it", "key", k.String())
			return nil
		}
		return err
	}
	for _, p := range plan {
		value, err := p.tree.JSON()
		if err != nil {
			return false, err
		}
		if err := createOrKeep(treeKey(p.tree.Name), value); err != nil {
			return false, err
		}
		for _, pool := range p.pools {
			value, err := pool.JSON()
			if err != nil {
				return false, err
			}
			if err := createOrKeep(poolKey(p.tree.Name, pool.Name()), value); err != nil {
				return false, err
			}
		}
	}
	value, err := Cluster{DefaultTree: trees.DefaultTree}.JSON()
	if err != nil {
		return false, err
	}
	if _, err := s.Create(ctx, clusterKey, value); err != nil && !errors.Is(err, ErrExists) {
		return false, err
	}
	s.logger.Info("configuration seeded", "trees", len(plan), "default_tree", trees.DefaultTree)
	return true, nil
}

// CheckTrees validates a trees file with every rule, as Seed validates it
// on an empty bucket, without a store: a server checks its --pools file
// before it starts. The error wraps a *RuleError (and ErrInvalid).
func CheckTrees(trees *scenario.TreesFile) error {
	if trees == nil || len(trees.Trees) == 0 {
		return fmt.Errorf("%w: seed: no trees", ErrInvalid)
	}
	_, err := checkSeed(newState(), trees)
	return err
}

// planned is one tree of a seed and its pools.
type planned struct {
	tree  Tree
	pools []Pool
}

// checkSeed returns the documents a seed writes over st (keys st holds are
// kept) after validating the resulting configuration with every rule.
func checkSeed(st *state, trees *scenario.TreesFile) ([]planned, error) {
	plan := make([]planned, 0, len(trees.Trees))
	target := st
	for _, spec := range trees.Trees {
		tree, pools := specDocs(spec)
		plan = append(plan, planned{tree, pools})
		ts, exists := target.tree(tree.Name)
		if !exists {
			target = target.withTree(tree)
		}
		for _, p := range pools {
			if exists {
				if _, ok := ts.pools[p.Name()]; ok {
					continue
				}
			}
			target = target.withPool(tree.Name, p)
		}
	}
	target = target.withCluster(Cluster{DefaultTree: trees.DefaultTree})
	for _, name := range target.treeNames() {
		if _, err := checkTree(target, name); err != nil {
			return nil, fmt.Errorf("seed: %w", err)
		}
	}
	if err := checkCluster(target); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	return plan, nil
}

// specDocs returns a trees-file tree's documents. A TreeSpec built in code
// (without Doc) gets the keys that differ from the defaults, and pools the
// keys they set.
func specDocs(spec scenario.TreeSpec) (Tree, []Pool) {
	doc := spec.Doc
	if doc.Config.FairShareUpdatePeriod == 0 { // not decoded: a validated config has a period
		doc = scenario.TreeConfigDoc(spec.Config)
	}
	tree := Tree{Name: spec.Name, TreeDoc: doc}
	pools := make([]Pool, 0, len(spec.Pools))
	for i, cfg := range spec.Pools {
		if i < len(spec.PoolDocs) {
			pools = append(pools, Pool{PoolDoc: spec.PoolDocs[i]})
		} else {
			pools = append(pools, Pool{PoolDoc: scenario.PoolConfigDoc(cfg)})
		}
	}
	return tree, pools
}
