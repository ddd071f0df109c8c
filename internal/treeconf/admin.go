package treeconf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/sharetree/sharetree/subjects"
)

// maxAttempts bounds the read–validate–write loop of a write that lost a
// compare-and-set to a concurrent writer.
const maxAttempts = 32

// Admin is the write path of the live configuration: every write reads the
// whole configuration, applies the change, validates the trees it touches
// with every rule (see Rule) and writes the key with compare-and-set on the
// revision it read. A patch (Change with a key) or a whole document without
// an expected revision that loses the compare-and-set to another writer is
// read, validated and written again, so no writer's change is lost; one
// with an expected revision fails with a *ConflictError instead.
//
// Inside one process writes are serialised: pool and tree writes per tree,
// writes that touch the cluster attributes or several trees (tree create
// and remove, cluster set, apply) against all others. Writers in other
// processes are guarded by compare-and-set on each key. Rules that span
// several keys (children's guarantees within the parent's) are checked on
// the state each writer read; two processes changing two sibling pools at
// the same instant can together break such a rule, which Store.Load and
// Watch then report in TreeSnapshot.Err. Run one configuration service per
// cluster (the scheduler leader's) to rule that out.
type Admin struct {
	store   *Store
	counter OperationCounter
	logger  *slog.Logger
	// all is held shared by per-tree writes and exclusively by writes that
	// touch the cluster attributes or several trees.
	all   sync.RWMutex
	trees keyedMutex
}

// NewAdmin returns the write path over store. counter may be nil (no
// scheduler: no operations); logger may be nil.
func NewAdmin(store *Store, counter OperationCounter, logger *slog.Logger) *Admin {
	if counter == nil {
		counter = NoOperations{}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Admin{store: store, counter: counter, logger: logger.With("component", "treeconf")}
}

// Store returns the store the admin writes to.
func (a *Admin) Store() *Store { return a.store }

func (a *Admin) lockTree(name string) func() {
	a.all.RLock()
	unlock := a.trees.lock(name)
	return func() {
		unlock()
		a.all.RUnlock()
	}
}

func (a *Admin) lockAll() func() {
	a.all.Lock()
	return a.all.Unlock
}

func validName(what, tree, pool, name string) error {
	if err := subjects.ValidateToken(what, name); err != nil {
		return ruleErr(RuleName, tree, pool, "", "%s", trimSentinel(err, subjects.ErrInvalidToken))
	}
	return nil
}

func treeKey(tree string) subjects.ConfigKey {
	return subjects.ConfigKey{Kind: subjects.ConfigKeyTree, Tree: tree}
}

func poolKey(tree, pool string) subjects.ConfigKey {
	return subjects.ConfigKey{Kind: subjects.ConfigKeyPool, Tree: tree, Pool: pool}
}

var clusterKey = subjects.ConfigKey{Kind: subjects.ConfigKeyCluster}

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

// write runs the read–apply–validate–compare-and-set loop of a change to
// one existing key. build validates the change against the state read and
// returns the stored value and revision and the new value.
func (a *Admin) write(ctx context.Context, key subjects.ConfigKey, ch Change,
	build func(*state) ([]byte, uint64, []byte, error)) (Entry, error) {
	for range maxAttempts {
		st, err := a.store.loadState(ctx)
		if err != nil {
			return Entry{}, err
		}
		stored, rev, value, err := build(st)
		if err != nil {
			return Entry{}, err
		}
		if ch.ExpectedRevision != 0 && rev != ch.ExpectedRevision {
			return Entry{}, &ConflictError{Key: key.String(), Expected: ch.ExpectedRevision, Actual: rev}
		}
		if bytes.Equal(stored, value) {
			return Entry{Key: key, Value: value, Revision: rev}, nil
		}
		nrev, err := a.store.Update(ctx, key, value, rev)
		if err == nil {
			a.logger.Info("configuration changed", "key", key.String(), "revision", nrev)
			return Entry{Key: key, Value: value, Revision: nrev}, nil
		}
		if !errors.Is(err, ErrConflict) || ch.ExpectedRevision != 0 {
			return Entry{}, err
		}
		a.logger.Debug("lost a compare-and-set; retrying", "key", key.String(), "revision", rev)
	}
	return Entry{}, fmt.Errorf("%w: %s: gave up after %d attempts against concurrent writers", ErrConflict, describeKey(key), maxAttempts)
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

// GetCluster returns the cluster attributes' document (`{}` with revision
// 0 when the key does not exist).
func (a *Admin) GetCluster(ctx context.Context) (Entry, error) {
	e, err := a.store.Get(ctx, clusterKey)
	if errors.Is(err, ErrNotFound) {
		return Entry{Key: clusterKey, Value: []byte("{}")}, nil
	}
	return e, err
}

// SetCluster changes the cluster attributes (key default_tree).
func (a *Admin) SetCluster(ctx context.Context, ch Change) (Entry, error) {
	defer a.lockAll()()
	for range maxAttempts {
		st, err := a.store.loadState(ctx)
		if err != nil {
			return Entry{}, err
		}
		if ch.ExpectedRevision != 0 && st.clusterRev != ch.ExpectedRevision {
			return Entry{}, &ConflictError{Key: clusterKey.String(), Expected: ch.ExpectedRevision, Actual: st.clusterRev}
		}
		doc, err := ch.apply(st.clusterRaw)
		if err != nil {
			return Entry{}, err
		}
		cl, err := decodeCluster(doc)
		if err != nil {
			return Entry{}, err
		}
		if err := checkCluster(st.withCluster(cl)); err != nil {
			return Entry{}, err
		}
		value, err := cl.JSON()
		if err != nil {
			return Entry{}, err
		}
		if st.clusterRev != 0 && bytes.Equal(value, st.clusterRaw) {
			return Entry{Key: clusterKey, Value: value, Revision: st.clusterRev}, nil
		}
		var rev uint64
		if st.clusterRev == 0 {
			rev, err = a.store.Create(ctx, clusterKey, value)
		} else {
			rev, err = a.store.Update(ctx, clusterKey, value, st.clusterRev)
		}
		if err == nil {
			a.logger.Info("cluster attributes changed", "default_tree", cl.DefaultTree, "revision", rev)
			return Entry{Key: clusterKey, Value: value, Revision: rev}, nil
		}
		if !(errors.Is(err, ErrConflict) || errors.Is(err, ErrExists)) || ch.ExpectedRevision != 0 {
			return Entry{}, err
		}
	}
	return Entry{}, fmt.Errorf("%w: cluster attributes: gave up after %d attempts against concurrent writers", ErrConflict, maxAttempts)
}

// withObject fills in the tree and pool of a RuleError raised before the
// object was known (a change that does not parse).
func withObject(err error, tree, pool string) error {
	var re *RuleError
	if errors.As(err, &re) && re.Tree == "" && re.Pool == "" {
		c := *re
		c.Tree, c.Pool = tree, pool
		return &c
	}
	return err
}

// listNames joins at most ten names.
func listNames(names []string) string {
	if len(names) > 10 {
		return strings.Join(names[:10], ", ") + fmt.Sprintf(" and %d more", len(names)-10)
	}
	return strings.Join(names, ", ")
}
