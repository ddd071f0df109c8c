package treeconf

import (
	"context"
	"errors"
	"fmt"
)

// GetTree returns a tree's document.
func (a *Admin) GetTree(ctx context.Context, tree string) (Entry, error) {
	if err := validName("tree name", tree, "", tree); err != nil {
		return Entry{}, err
	}
	return a.store.Get(ctx, treeKey(tree))
}

// ListTrees returns every tree's document by name, and the cluster
// attributes.
func (a *Admin) ListTrees(ctx context.Context) ([]Entry, Cluster, error) {
	st, err := a.store.loadState(ctx)
	if err != nil {
		return nil, Cluster{}, err
	}
	var out []Entry
	for _, name := range st.treeNames() {
		ts := st.trees[name]
		out = append(out, Entry{Key: treeKey(name), Value: ts.raw, Revision: ts.rev})
	}
	return out, st.cluster, nil
}

// CreateTree creates a tree from its document (JSON or YAML keys; empty is
// no keys). The first tree becomes the default tree when none is set.
func (a *Admin) CreateTree(ctx context.Context, name string, doc []byte) (Entry, error) {
	if err := validName("tree name", name, "", name); err != nil {
		return Entry{}, err
	}
	tree, err := DecodeTree(name, doc)
	if err != nil {
		return Entry{}, err
	}
	value, err := tree.JSON()
	if err != nil {
		return Entry{}, err
	}
	defer a.lockAll()()
	st, err := a.store.loadState(ctx)
	if err != nil {
		return Entry{}, err
	}
	if _, ok := st.tree(name); ok {
		return Entry{}, ruleErr(RuleDuplicateName, name, "", "", "tree %q already exists", name)
	}
	next := st.withTree(tree)
	setDefault := st.cluster.DefaultTree == ""
	if setDefault {
		next = next.withCluster(Cluster{DefaultTree: name})
	}
	if _, err := checkTree(next, name); err != nil {
		return Entry{}, err
	}
	rev, err := a.store.Create(ctx, treeKey(name), value)
	if errors.Is(err, ErrExists) {
		return Entry{}, ruleErr(RuleDuplicateName, name, "", "", "tree %q already exists", name)
	}
	if err != nil {
		return Entry{}, err
	}
	a.logger.Info("tree created", "tree", name, "revision", rev)
	if setDefault {
		if err := a.ensureDefault(ctx, name); err != nil {
			return Entry{}, fmt.Errorf("tree %q created, but setting it as the default tree failed: %w", name, err)
		}
	}
	return Entry{Key: treeKey(name), Value: value, Revision: rev}, nil
}

// ensureDefault sets default_tree to name unless another writer set one.
func (a *Admin) ensureDefault(ctx context.Context, name string) error {
	for range maxAttempts {
		e, err := a.store.Get(ctx, clusterKey)
		var cl Cluster
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return err
		default:
			if cl, err = decodeCluster(e.Value); err != nil {
				return err
			}
			if cl.DefaultTree != "" {
				return nil
			}
		}
		cl.DefaultTree = name
		value, err := cl.JSON()
		if err != nil {
			return err
		}
		if e.Revision == 0 {
			_, err = a.store.Create(ctx, clusterKey, value)
		} else {
			_, err = a.store.Update(ctx, clusterKey, value, e.Revision)
		}
		if err == nil || !(errors.Is(err, ErrConflict) || errors.Is(err, ErrExists)) {
			return err
		}
	}
	return fmt.Errorf("%w: cluster attributes: too many concurrent writers", ErrConflict)
}

// SetTree changes a tree's document (see Change).
func (a *Admin) SetTree(ctx context.Context, name string, ch Change) (Entry, error) {
	if err := validName("tree name", name, "", name); err != nil {
		return Entry{}, err
	}
	defer a.lockTree(name)()
	return a.write(ctx, treeKey(name), ch, func(st *state) ([]byte, uint64, []byte, error) {
		ts, ok := st.tree(name)
		if !ok {
			return nil, 0, nil, fmt.Errorf("%w: tree %q", ErrNotFound, name)
		}
		doc, err := ch.apply(ts.raw)
		if err != nil {
			return nil, 0, nil, withObject(err, name, "")
		}
		tree, err := DecodeTree(name, doc)
		if err != nil {
			return nil, 0, nil, err
		}
		if _, err := checkTree(st.withTree(tree), name); err != nil {
			return nil, 0, nil, err
		}
		value, err := tree.JSON()
		return ts.raw, ts.rev, value, err
	})
}

// RemoveTree removes a tree that has no pools and no operations. The default
// tree can be removed only when it is the last tree (default_tree is then
// cleared). expectedRevision, when not 0, must be the tree's revision.
func (a *Admin) RemoveTree(ctx context.Context, name string, expectedRevision uint64) (uint64, error) {
	if err := validName("tree name", name, "", name); err != nil {
		return 0, err
	}
	defer a.lockAll()()
	st, err := a.store.loadState(ctx)
	if err != nil {
		return 0, err
	}
	ts, ok := st.tree(name)
	if !ok {
		return 0, fmt.Errorf("%w: tree %q", ErrNotFound, name)
	}
	if expectedRevision != 0 && ts.rev != expectedRevision {
		return 0, &ConflictError{Key: treeKey(name).String(), Expected: expectedRevision, Actual: ts.rev}
	}
	if err := a.checkTreeRemoval(st, name); err != nil {
		return 0, err
	}
	clearDefault := st.cluster.DefaultTree == name
	if err := a.store.Delete(ctx, treeKey(name), ts.rev); err != nil {
		return 0, err
	}
	a.logger.Info("tree removed", "tree", name)
	if clearDefault && st.clusterRev != 0 {
		value, err := Cluster{}.JSON()
		if err == nil {
			_, err = a.store.Update(ctx, clusterKey, value, st.clusterRev)
		}
		if err != nil {
			return 0, fmt.Errorf("tree %q removed, but clearing default_tree failed: %w", name, err)
		}
	}
	return ts.rev, nil
}

// checkTreeRemoval checks that a tree may go: no pools, no operations, not
// the default tree while others exist, no offloading into it.
func (a *Admin) checkTreeRemoval(st *state, name string) error {
	ts := st.trees[name]
	if n := len(ts.pools); n > 0 {
		return ruleErr(RuleTreeHasPools, name, "", "", "the tree still has %d pools (%s); remove them first", n, listNames(sortedKeys(ts.pools)))
	}
	if n := a.counter.PoolOperationCount(name, ""); n > 0 {
		return ruleErr(RuleTreeHasOperations, name, "", "", "the tree still has %d operations (running or pending)", n)
	}
	if st.cluster.DefaultTree == name && len(st.treeNames()) > 1 {
		return ruleErr(RuleDefaultTree, name, "", "", "tree %q is the default_tree; set default_tree to another tree first", name)
	}
	return checkReferences(st.withoutTree(name), map[string]bool{name: true})
}
