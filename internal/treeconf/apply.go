package treeconf

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/subjects"
)

// Action is what one entry of an apply does.
type Action int

// The actions.
const (
	ActionCreate Action = iota + 1
	ActionUpdate
	ActionRemove
)

// String returns "create", "update" or "remove".
func (a Action) String() string {
	switch a {
	case ActionCreate:
		return "create"
	case ActionUpdate:
		return "update"
	case ActionRemove:
		return "remove"
	}
	return "none"
}

// Diff is one entry of an apply: a key created, updated or removed.
type Diff struct {
	Action Action
	Key    subjects.ConfigKey
	// Before and After are the canonical documents (nil when absent).
	Before, After []byte
	// Keys are the top-level keys that differ, sorted.
	Keys []string
	// Revision is the key's revision after the write (0 in a dry run or
	// when not written).
	Revision uint64
	// base is the revision read, the compare-and-set's expectation.
	base uint64
}

// ApplyResult is what an apply did or, in a dry run, would do.
type ApplyResult struct {
	// Changes in write order: trees created or updated, their pools
	// (parents first), the cluster attributes, pools removed (children
	// first), trees removed.
	Changes []Diff
	// Applied is false for a dry run.
	Applied bool
}

// Apply makes the configuration match a trees document (the trees file
// format: version, default_tree, trees with name, config and pools): it
// creates the trees and pools the document has and the bucket does not,
// updates those that differ and, with prune, removes the trees and pools
// the document does not name (a pool only when it has no operations, a tree
// only when it has none). Without prune the document's trees keep pools it
// does not list. default_tree is set when the document gives it (or when
// none is set yet).
//
// The final configuration is validated as a whole before anything is
// written; a dry run stops there and returns the changes. The writes are
// one compare-and-set per key against the revisions read, in the order of
// ApplyResult.Changes; apply is not atomic across keys: when a write fails
// (a concurrent writer changed a key) apply stops and returns the changes
// with the revisions of those written, and the error. Running it again
// converges, since it only writes what still differs.
func (a *Admin) Apply(ctx context.Context, document []byte, prune, dryRun bool) (ApplyResult, error) {
	trees, err := scenario.DecodeTrees("document", document)
	if err != nil {
		return ApplyResult{}, fromScenario(err, "", "")
	}
	for i, spec := range trees.Trees {
		for j, p := range spec.Pools {
			if _, ok := spec.Volumes[p.Name]; ok {
				return ApplyResult{}, ruleErr(RuleInvalidValue, spec.Name, string(p.Name),
					fmt.Sprintf("trees[%d].pools[%d].accumulated_resource_volume", i, j),
					"accumulated_resource_volume is the scheduler's state, not configuration; apply does not set it")
			}
		}
	}
	defer a.lockAll()()
	st, err := a.store.loadState(ctx)
	if err != nil {
		return ApplyResult{}, err
	}
	plan, err := a.planApply(st, trees, prune)
	if err != nil {
		return ApplyResult{}, err
	}
	res := ApplyResult{Changes: plan}
	if dryRun {
		return res, nil
	}
	for i := range res.Changes {
		d := &res.Changes[i]
		var werr error
		switch d.Action {
		case ActionCreate:
			d.Revision, werr = a.store.Create(ctx, d.Key, d.After)
			if errors.Is(werr, ErrExists) {
				werr = &ConflictError{Key: d.Key.String()}
			}
		case ActionUpdate:
			d.Revision, werr = a.store.Update(ctx, d.Key, d.After, d.base)
		case ActionRemove:
			werr = a.store.Delete(ctx, d.Key, d.base)
		}
		if werr != nil {
			return res, fmt.Errorf("apply stopped after %d of %d changes (%s %s): %w", i, len(res.Changes), d.Action, describeKey(d.Key), werr)
		}
	}
	res.Applied = true
	a.logger.Info("configuration applied", "changes", len(res.Changes), "prune", prune)
	return res, nil
}

// planApply computes the changes and validates the configuration after
// them.
func (a *Admin) planApply(st *state, trees *scenario.TreesFile, prune bool) ([]Diff, error) {
	// Per tree of the document: its own change and its pools' changes,
	// written in the final tree's parents-first order once it is known.
	type treePlan struct {
		name  string
		tree  []Diff
		pools map[string]Diff
	}
	var plans []treePlan
	target := st
	touched := map[string]bool{}
	inDoc := map[string]map[string]bool{}
	for _, spec := range trees.Trees {
		tree, pools := specDocs(spec)
		tp := treePlan{name: tree.Name, pools: map[string]Diff{}}
		touched[tree.Name] = true
		value, err := tree.JSON()
		if err != nil {
			return nil, withObject(err, tree.Name, "")
		}
		if ts, ok := st.tree(tree.Name); ok {
			if !bytes.Equal(ts.raw, value) {
				tp.tree = append(tp.tree, newDiff(ActionUpdate, treeKey(tree.Name), ts.raw, value, ts.rev))
			}
		} else {
			tp.tree = append(tp.tree, newDiff(ActionCreate, treeKey(tree.Name), nil, value, 0))
		}
		target = target.withTree(tree)
		names := map[string]bool{}
		for _, p := range pools {
			names[p.Name()] = true
			value, err := p.JSON()
			if err != nil {
				return nil, withObject(err, tree.Name, p.Name())
			}
			var old *poolState
			if ts, ok := st.trees[tree.Name]; ok {
				old = ts.pools[p.Name()]
			}
			switch {
			case old == nil:
				tp.pools[p.Name()] = newDiff(ActionCreate, poolKey(tree.Name, p.Name()), nil, value, 0)
			case !bytes.Equal(old.raw, value):
				tp.pools[p.Name()] = newDiff(ActionUpdate, poolKey(tree.Name, p.Name()), old.raw, value, old.rev)
			}
			target = target.withPool(tree.Name, p)
		}
		inDoc[tree.Name] = names
		plans = append(plans, tp)
	}
	cl := st.cluster
	if trees.DefaultTreeGiven || cl.DefaultTree == "" {
		cl.DefaultTree = trees.DefaultTree
	}
	var clusterDiff []Diff
	if value, err := cl.JSON(); err != nil {
		return nil, err
	} else if st.clusterRev == 0 {
		clusterDiff = append(clusterDiff, newDiff(ActionCreate, clusterKey, nil, value, 0))
	} else if !bytes.Equal(st.clusterRaw, value) {
		clusterDiff = append(clusterDiff, newDiff(ActionUpdate, clusterKey, st.clusterRaw, value, st.clusterRev))
	}
	target = target.withCluster(cl)
	var removals []Diff
	if prune {
		var treeRemovals []Diff
		for _, tn := range sortedKeys(st.trees) {
			ts := st.trees[tn]
			keep := inDoc[tn]
			for _, pn := range childrenFirst(ts) {
				if keep[pn] {
					continue
				}
				if n := a.counter.PoolOperationCount(tn, pn); n > 0 {
					return nil, ruleErr(RulePoolHasOperations, tn, pn, "", "the pool still has %d operations (running or pending); prune would remove it", n)
				}
				ps := ts.pools[pn]
				removals = append(removals, newDiff(ActionRemove, poolKey(tn, pn), ps.raw, nil, ps.rev))
				target = target.withoutPool(tn, pn)
			}
			if keep == nil && ts.exists {
				if n := a.counter.PoolOperationCount(tn, ""); n > 0 {
					return nil, ruleErr(RuleTreeHasOperations, tn, "", "", "the tree still has %d operations (running or pending); prune would remove it", n)
				}
				treeRemovals = append(treeRemovals, newDiff(ActionRemove, treeKey(tn), ts.raw, nil, ts.rev))
				target = target.withoutTree(tn)
			}
			touched[tn] = true
		}
		removals = append(removals, treeRemovals...)
	}
	orders := map[string][]string{}
	for _, tn := range sortedKeys(touched) {
		if _, ok := target.tree(tn); ok {
			c, err := checkTree(target, tn)
			if err != nil {
				return nil, err
			}
			orders[tn] = c.order
		}
	}
	if err := checkCluster(target); err != nil {
		return nil, err
	}
	if err := checkReferences(target, touched); err != nil {
		return nil, err
	}
	var plan []Diff
	for _, tp := range plans {
		plan = append(plan, tp.tree...)
		for _, pn := range orders[tp.name] {
			if d, ok := tp.pools[pn]; ok {
				plan = append(plan, d)
			}
		}
	}
	plan = append(plan, clusterDiff...)
	return append(plan, removals...), nil
}

// childrenFirst returns a stored tree's pools, every pool after its
// descendants (deepest first, then by name), even when the stored parents
// are broken.
func childrenFirst(ts *treeState) []string {
	depth := func(pn string) int {
		d := 0
		for cur := pn; d <= len(ts.pools); d++ {
			ps, ok := ts.pools[cur]
			if !ok || ps.err != nil || ps.pool.Parent() == "" {
				break
			}
			cur = ps.pool.Parent()
		}
		return d
	}
	type pd struct {
		name  string
		depth int
	}
	list := make([]pd, 0, len(ts.pools))
	for _, pn := range sortedKeys(ts.pools) {
		list = append(list, pd{pn, depth(pn)})
	}
	slices.SortStableFunc(list, func(a, b pd) int { return cmp.Compare(b.depth, a.depth) })
	out := make([]string, len(list))
	for i, p := range list {
		out[i] = p.name
	}
	return out
}

func newDiff(action Action, key subjects.ConfigKey, before, after []byte, base uint64) Diff {
	return Diff{Action: action, Key: key, Before: before, After: after, Keys: changedKeys(docMap(before), docMap(after)), base: base}
}

// docMap decodes a canonical document (nil: empty).
func docMap(doc []byte) map[string]any {
	m := map[string]any{}
	if len(doc) > 0 {
		_ = json.Unmarshal(doc, &m)
	}
	return m
}
