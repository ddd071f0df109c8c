package actors

import (
	"slices"

	"github.com/asynkron/protoactor-go/actor"
)

// NodeFilter selects the exec nodes of a tree by their tags (a tree's
// node_tag_filter). Match must be safe for concurrent use.
type NodeFilter interface {
	Match(tags []string) bool
}

// nodeTree is a tree a node can belong to.
type nodeTree struct {
	name   string
	ledger *Ledger
	// pid is the tree actor; placer runs the ledger work of the tree's
	// heartbeats.
	pid, placer *actor.PID
	// filter selects the tree's nodes; nil takes every node.
	filter NodeFilter
}

// treeDirectory is the immutable list of trees, in configuration order,
// that node actors resolve their tree from. A new configuration publishes a
// new directory; a tree keeps its ledger across directories.
type treeDirectory struct {
	trees []*nodeTree
}

// resolve returns the one tree whose filter matches tags, or nil with the
// names of the matching trees when there are none or several (a conflict:
// the node joins no tree until it is resolved).
func (d *treeDirectory) resolve(tags []string) (*nodeTree, []string) {
	var match []*nodeTree
	for _, t := range d.trees {
		if t.filter == nil || t.filter.Match(tags) {
			match = append(match, t)
		}
	}
	if len(match) == 1 {
		return match[0], nil
	}
	names := make([]string, len(match))
	for i, t := range match {
		names[i] = t.name
	}
	slices.Sort(names)
	return nil, names
}
