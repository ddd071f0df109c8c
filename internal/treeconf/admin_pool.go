package treeconf

import (
	"context"
	"errors"
	"fmt"
)

// GetPool returns a pool's document.
func (a *Admin) GetPool(ctx context.Context, tree, pool string) (Entry, error) {
	if err := validNames(tree, pool); err != nil {
		return Entry{}, err
	}
	e, err := a.store.Get(ctx, poolKey(tree, pool))
	if errors.Is(err, ErrNotFound) {
		if _, terr := a.store.Get(ctx, treeKey(tree)); errors.Is(terr, ErrNotFound) {
			return Entry{}, fmt.Errorf("%w: tree %q", ErrNotFound, tree)
		}
	}
	return e, err
}

func validNames(tree, pool string) error {
	if err := validName("tree name", tree, "", tree); err != nil {
		return err
	}
	return validName("pool name", tree, pool, pool)
}

// ListPools returns a tree's pools, parents before children (siblings by
// name; by name alone when the stored tree is not valid).
func (a *Admin) ListPools(ctx context.Context, tree string) ([]Entry, error) {
	if err := validName("tree name", tree, "", tree); err != nil {
		return nil, err
	}
	st, err := a.store.loadState(ctx)
	if err != nil {
		return nil, err
	}
	ts, ok := st.tree(tree)
	if !ok {
		return nil, fmt.Errorf("%w: tree %q", ErrNotFound, tree)
	}
	order := sortedKeys(ts.pools)
	if c, err := checkTree(st, tree); err == nil {
		order = c.order
	}
	out := make([]Entry, 0, len(order))
	for _, pn := range order {
		ps := ts.pools[pn]
		out = append(out, Entry{Key: poolKey(tree, pn), Value: ps.raw, Revision: ps.rev})
	}
	return out, nil
}

// CreatePool creates a pool from its document (parent and the pool keys).
func (a *Admin) CreatePool(ctx context.Context, tree, name string, doc []byte) (Entry, error) {
	if err := validNames(tree, name); err != nil {
		return Entry{}, err
	}
	pool, err := DecodePool(tree, name, doc)
	if err != nil {
		return Entry{}, err
	}
	value, err := pool.JSON()
	if err != nil {
		return Entry{}, err
	}
	defer a.lockTree(tree)()
	st, err := a.store.loadState(ctx)
	if err != nil {
		return Entry{}, err
	}
	ts, ok := st.tree(tree)
	if !ok {
		return Entry{}, fmt.Errorf("%w: tree %q", ErrNotFound, tree)
	}
	if _, ok := ts.pools[name]; ok {
		return Entry{}, ruleErr(RuleDuplicateName, tree, name, "", "pool %q already exists in the tree", name)
	}
	if _, err := checkTree(st.withPool(tree, pool), tree); err != nil {
		return Entry{}, err
	}
	rev, err := a.store.Create(ctx, poolKey(tree, name), value)
	if errors.Is(err, ErrExists) {
		return Entry{}, ruleErr(RuleDuplicateName, tree, name, "", "pool %q already exists in the tree", name)
	}
	if err != nil {
		return Entry{}, err
	}
	a.logger.Info("pool created", "tree", tree, "pool", name, "revision", rev)
	return Entry{Key: poolKey(tree, name), Value: value, Revision: rev}, nil
}

// SetPool changes a pool's document (see Change).
func (a *Admin) SetPool(ctx context.Context, tree, name string, ch Change) (Entry, error) {
	if err := validNames(tree, name); err != nil {
		return Entry{}, err
	}
	defer a.lockTree(tree)()
	return a.write(ctx, poolKey(tree, name), ch, func(st *state) ([]byte, uint64, []byte, error) {
		ts, ok := st.tree(tree)
		if !ok {
			return nil, 0, nil, fmt.Errorf("%w: tree %q", ErrNotFound, tree)
		}
		ps, ok := ts.pools[name]
		if !ok {
			return nil, 0, nil, fmt.Errorf("%w: pool %q in tree %q", ErrNotFound, name, tree)
		}
		doc, err := ch.apply(ps.raw)
		if err != nil {
			return nil, 0, nil, withObject(err, tree, name)
		}
		pool, err := DecodePool(tree, name, doc)
		if err != nil {
			return nil, 0, nil, err
		}
		if _, err := checkTree(st.withPool(tree, pool), tree); err != nil {
			return nil, 0, nil, err
		}
		value, err := pool.JSON()
		return ps.raw, ps.rev, value, err
	})
}

// RemovePool removes a pool that has no child pools and no operations and
// that nothing refers to (the tree's default_parent_pool, offloading
// settings of other trees). expectedRevision, when not 0, must be the
// pool's revision.
func (a *Admin) RemovePool(ctx context.Context, tree, name string, expectedRevision uint64) (uint64, error) {
	if err := validNames(tree, name); err != nil {
		return 0, err
	}
	defer a.lockTree(tree)()
	st, err := a.store.loadState(ctx)
	if err != nil {
		return 0, err
	}
	ts, ok := st.tree(tree)
	if !ok {
		return 0, fmt.Errorf("%w: tree %q", ErrNotFound, tree)
	}
	ps, ok := ts.pools[name]
	if !ok {
		return 0, fmt.Errorf("%w: pool %q in tree %q", ErrNotFound, name, tree)
	}
	if expectedRevision != 0 && ps.rev != expectedRevision {
		return 0, &ConflictError{Key: poolKey(tree, name).String(), Expected: expectedRevision, Actual: ps.rev}
	}
	if err := a.checkPoolRemoval(st, tree, name); err != nil {
		return 0, err
	}
	if err := a.store.Delete(ctx, poolKey(tree, name), ps.rev); err != nil {
		return 0, err
	}
	a.logger.Info("pool removed", "tree", tree, "pool", name)
	return ps.rev, nil
}

// checkPoolRemoval checks that a pool may go.
func (a *Admin) checkPoolRemoval(st *state, tree, name string) error {
	ts := st.trees[tree]
	var kids []string
	for _, pn := range sortedKeys(ts.pools) {
		if ps := ts.pools[pn]; ps.err == nil && ps.pool.Parent() == name {
			kids = append(kids, pn)
		}
	}
	if len(kids) > 0 {
		return ruleErr(RulePoolHasChildren, tree, name, "", "the pool still has child pools (%s); remove or move them first", listNames(kids))
	}
	if n := a.counter.PoolOperationCount(tree, name); n > 0 {
		return ruleErr(RulePoolHasOperations, tree, name, "", "the pool still has %d operations (running or pending)", n)
	}
	if ts.exists && ts.err == nil && string(ts.tree.Config.DefaultParentPool) == name {
		return ruleErr(RuleDefaultParentPool, tree, name, "", "the pool is the tree's default_parent_pool; change default_parent_pool first")
	}
	return checkReferences(st.withoutPool(tree, name), map[string]bool{tree: true})
}
