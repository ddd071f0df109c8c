package actors

import (
	"errors"
	"fmt"
	"slices"

	"github.com/asynkron/protoactor-go/actor"
)

// applyTrees reconfigures, adds and removes trees. Trees are reconfigured
// one after another (each answers before the next is asked); the directory
// nodes resolve their tree from is published at the end.
func (r *rootActor) applyTrees(ctx actor.Context, m *applyTrees) {
	if err := checkTrees(m.trees, m.defaultTree); err != nil {
		m.reply(err)
		return
	}
	var errs []error
	wanted := map[string]bool{}
	var changed []TreeSpec
	for _, spec := range m.trees {
		wanted[spec.Name] = true
		if _, ok := r.trees[spec.Name]; ok {
			changed = append(changed, spec)
			continue
		}
		ref, err := r.sys.spawnTree(spec)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r.trees[spec.Name] = ref
		r.cfg.Logger.Info("tree added", "tree", spec.Name, "pools", len(spec.Pools))
	}
	var kept []string
	for _, name := range r.order {
		if wanted[name] {
			continue
		}
		if n := r.treeOperations(name); n > 0 {
			errs = append(errs, fmt.Errorf("%w: tree %s still has %d operations; it stays until they finish", ErrTrees, name, n))
			kept = append(kept, name)
			continue
		}
		r.sys.stopTree(r.trees[name])
		delete(r.trees, name)
		r.cfg.Logger.Info("tree removed", "tree", name)
	}
	order := make([]string, 0, len(m.trees)+len(kept))
	for _, spec := range m.trees {
		if _, ok := r.trees[spec.Name]; ok {
			order = append(order, spec.Name)
		}
	}
	order = append(order, kept...)
	r.reconfigureChain(ctx, changed, errs, func(errs []error) {
		r.order = order
		if _, ok := r.trees[m.defaultTree]; ok {
			r.defaultTree = m.defaultTree
		}
		r.publishDirectory()
		m.reply(errors.Join(errs...))
	})
}

// reconfigureChain asks each changed tree to run its new configuration.
func (r *rootActor) reconfigureChain(ctx actor.Context, specs []TreeSpec, errs []error, done func([]error)) {
	if len(specs) == 0 {
		done(errs)
		return
	}
	spec := specs[0]
	ref := r.trees[spec.Name]
	f := ctx.RequestFuture(ref.pid, &reconfigureTree{spec: spec}, r.cfg.RequestTimeout)
	ctx.ReenterAfter(f, func(res any, err error) {
		switch rc, ok := res.(*reconfigured); {
		case err != nil:
			errs = append(errs, fmt.Errorf("%w: tree %s did not answer: %w", ErrTrees, spec.Name, err))
		case !ok:
			errs = append(errs, fmt.Errorf("%w: tree %s answered %T", ErrTrees, spec.Name, res))
		case rc.err != nil:
			errs = append(errs, fmt.Errorf("%w: tree %s keeps its configuration: %w", ErrTrees, spec.Name, rc.err))
		default:
			ref.setSpec(spec)
		}
		r.reconfigureChain(ctx, specs[1:], errs, done)
	})
}

// treeOperations counts the unfinished operations that run in a tree.
func (r *rootActor) treeOperations(tree string) int {
	n := 0
	for _, op := range r.ops {
		if op.pid != nil && slices.Contains(op.trees, tree) {
			n++
		}
	}
	return n
}

// publishDirectory gives the node actors the current trees.
func (r *rootActor) publishDirectory() {
	dir := &treeDirectory{}
	for _, name := range r.order {
		dir.trees = append(dir.trees, r.trees[name].nodeTree())
	}
	r.sys.dir.Store(dir)
}
