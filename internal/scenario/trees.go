package scenario

import (
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// TreesFile is the pool-tree configuration the scheduler loads with
// `--pools FILE`:
//
//	version: 1
//	default_tree: physical        # optional; default the first tree
//	trees:
//	  - name: physical
//	    config: {main_resource: cpu}   # the keys of a scenario's `tree`
//	    pools: [...]                   # the keys of a scenario's `pools`
type TreesFile struct {
	// DefaultTree receives operations that name no tree: default_tree, or
	// the first tree when the file does not give it.
	DefaultTree string
	// DefaultTreeGiven says whether the file gives default_tree.
	DefaultTreeGiven bool
	// Trees in file order.
	Trees []TreeSpec
}

// TreeSpec is one pool tree: its configuration, its pools (parents before
// children) and the pools' initial accumulated volumes.
type TreeSpec struct {
	Name   string
	Config scheduler.TreeConfig
	// Pools are the pools' effective configurations, the tree's presets
	// applied (see ResolvePool), in file order.
	Pools   []scheduler.PoolConfig
	Volumes map[scheduler.PoolID]scheduler.Resources
	// Doc is the tree's configuration as written (Doc.Config == Config),
	// with the options only the scheduler process reads.
	Doc TreeDoc
	// PoolDocs are the pools' own configurations as written (before
	// presets), parallel to Pools.
	PoolDocs []PoolDoc
}

// ParseTreesFile reads and parses a trees file.
func ParseTreesFile(path string) (*TreesFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trees file: %w", err)
	}
	return ParseTrees(path, data)
}

// ParseTrees parses trees-file bytes; every content error is an *Error that
// names the file, the key path and the line.
func ParseTrees(name string, data []byte) (*TreesFile, error) {
	return parseTrees(&decoder{file: name, live: true}, data)
}

// DecodeTrees decodes trees-file bytes like ParseTrees, checking every
// value, name and duplicate, but not the engine's rules (the trees' and
// pools' Validate, presets, pools' parents): the caller validates the
// trees (package treeconf does, with its own typed rules). Pools are the
// pools' own configurations, presets not applied.
func DecodeTrees(name string, data []byte) (*TreesFile, error) {
	return parseTrees(&decoder{file: name, live: true, noEngine: true}, data)
}

func parseTrees(d *decoder, data []byte) (*TreesFile, error) {
	root, err := d.document(data)
	if err != nil {
		return nil, err
	}
	var version, defTree, trees *yaml.Node
	keep := func(key string, dst **yaml.Node) field {
		return field{key: key, set: func(v *yaml.Node, _ string) error { *dst = v; return nil }}
	}
	if _, err := d.object(root, "", []field{keep("version", &version), keep("default_tree", &defTree), keep("trees", &trees)}); err != nil {
		return nil, err
	}
	if version == nil {
		return nil, d.missing("", root, "version")
	}
	v, err := d.integer(version, "version")
	if err != nil {
		return nil, err
	}
	if v != 1 {
		return nil, d.fail("version", deref(version), "unsupported version %d (want 1)", v)
	}
	if trees == nil {
		return nil, d.missing("", root, "trees")
	}
	items, err := d.sequence(trees, "trees")
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, d.fail("trees", deref(trees), "want at least one tree")
	}
	out := &TreesFile{}
	seen := map[string]string{}
	for i, it := range items {
		ip := joinIndex("trees", i)
		t, err := d.treeSpec(it, ip)
		if err != nil {
			return nil, err
		}
		if first, dup := seen[t.Name]; dup {
			err := d.fail(joinKey(ip, "name"), deref(it), "duplicate tree name %q (first at %s)", t.Name, first)
			err.Kind = ErrDuplicateName
			return nil, err
		}
		seen[t.Name] = ip
		out.Trees = append(out.Trees, t)
	}
	out.DefaultTree = out.Trees[0].Name
	if defTree != nil {
		s, err := d.str(defTree, "default_tree")
		if err != nil {
			return nil, err
		}
		if _, ok := seen[s]; !ok {
			return nil, d.fail("default_tree", deref(defTree), "tree %q is not defined in trees", s)
		}
		out.DefaultTree = s
		out.DefaultTreeGiven = true
	}
	return out, nil
}

func (d *decoder) treeSpec(n *yaml.Node, path string) (TreeSpec, error) {
	t := TreeSpec{Doc: DefaultTreeDoc(), Volumes: map[scheduler.PoolID]scheduler.Resources{}}
	var cfgN, poolsN *yaml.Node
	present, err := d.object(n, path, []field{
		{key: "name", set: func(v *yaml.Node, p string) error {
			s, err := d.str(v, p)
			if err == nil {
				if verr := subjects.ValidateToken("tree name", s); verr != nil {
					return d.fail(p, deref(v), "%s", causeText(verr, subjects.ErrInvalidToken))
				}
			}
			t.Name = s
			return err
		}},
		{key: "config", set: func(v *yaml.Node, _ string) error { cfgN = v; return nil }},
		{key: "pools", set: func(v *yaml.Node, _ string) error { poolsN = v; return nil }},
	})
	if err != nil {
		return t, err
	}
	if !present["name"] {
		return t, d.missing(path, n, "name")
	}
	if cfgN != nil {
		if err := d.decodeTree(cfgN, joinKey(path, "config"), &t.Doc); err != nil {
			return t, err
		}
	}
	t.Config = t.Doc.Config
	if !d.noEngine {
		if err := t.Config.Validate(); err != nil {
			return t, d.fail(joinKey(path, "config"), deref(n), "%s", causeText(err, scheduler.ErrInvalidConfig))
		}
	}
	if poolsN != nil {
		pools, volumes, err := d.pools(poolsN, joinKey(path, "pools"), t.Doc)
		if err != nil {
			return t, err
		}
		for i, p := range pools {
			t.Pools = append(t.Pools, p.cfg)
			t.PoolDocs = append(t.PoolDocs, p.doc)
			if volumes[i] != nil {
				t.Volumes[p.cfg.Name] = *volumes[i]
			}
		}
	}
	return t, nil
}
