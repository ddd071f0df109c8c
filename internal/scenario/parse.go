package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sharetree/sharetree/internal/treeconf/tagfilter"
	"github.com/sharetree/sharetree/scheduler"
)

// defaultTolerance is the absolute tolerance of expectations when the file
// gives none.
const defaultTolerance = 1e-6

// ParseFile reads and parses the scenario at path. A failure to read the file
// is returned as it is (wrapped); every problem with its content is an *Error.
func ParseFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	return Parse(path, data)
}

// Parse parses scenario bytes (YAML or JSON); name is used in error messages
// as the file name and becomes File.Path. Every error it returns is an *Error
// wrapping ErrInvalidScenario.
func Parse(name string, data []byte) (*File, error) {
	d := &decoder{file: name}
	root, err := d.document(data)
	if err != nil {
		return nil, err
	}
	top, err := d.topLevel(root)
	if err != nil {
		return nil, err
	}
	f, err := d.build(root, top)
	if err != nil {
		return nil, err
	}
	f.Path = name
	return f, nil
}

// document decodes the single YAML document of data and returns its root
// mapping.
func (d *decoder) document(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, d.fail("", nil, "empty document")
		}
		return nil, d.fail("", nil, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, d.fail("", nil, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
		return nil, d.fail("", &extra, "more than one YAML document; a scenario is one document")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, d.fail("", nil, "empty document")
	}
	root := deref(doc.Content[0])
	if isScalar(root, tagNull) {
		return nil, d.fail("", root, "empty document")
	}
	if root.Kind != yaml.MappingNode {
		return nil, d.fail("", root, "want a mapping at the top level, got %s", describe(root))
	}
	return root, nil
}

// entry is one key/value pair of a mapping, with the key's path.
type entry struct {
	key     string
	keyNode *yaml.Node
	val     *yaml.Node
	path    string
}

// entries returns the pairs of a mapping in file order. Keys must be
// scalars and unique; merge keys (<<) are not supported.
func (d *decoder) entries(n *yaml.Node, path string) ([]entry, error) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return nil, d.fail(path, n, "want a mapping, got %s", describe(n))
	}
	out := make([]entry, 0, len(n.Content)/2)
	lines := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, d.fail(path, k, "mapping keys must be scalars, got %s", describe(k))
		}
		p := joinKey(path, k.Value)
		if k.ShortTag() == tagMerge {
			return nil, d.fail(p, k, "merge keys (<<) are not supported")
		}
		if first, dup := lines[k.Value]; dup {
			return nil, d.fail(p, k, "duplicate key %q (first at line %d)", k.Value, first)
		}
		lines[k.Value] = k.Line
		out = append(out, entry{key: k.Value, keyNode: k, val: v, path: p})
	}
	return out, nil
}

// field is one key a mapping accepts and what to do with its value.
type field struct {
	key string
	// canon is the key this one is an alias of ("" when it is not an alias);
	// giving both is an error.
	canon string
	set   func(val *yaml.Node, path string) error
}

// alias returns f under another key name.
func alias(key string, f field) field {
	f.canon, f.key = f.key, key
	return f
}

// object decodes a mapping whose keys are fields: unknown keys, duplicates and
// a key given together with its alias are errors. Values are handed to the
// fields in file order. It returns the canonical names of the keys present.
func (d *decoder) object(n *yaml.Node, path string, fields []field) (map[string]bool, error) {
	entries, err := d.entries(n, path)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]string, len(entries))
	present := make(map[string]bool, len(entries))
	for _, e := range entries {
		f, ok := findField(fields, e.key)
		if !ok {
			err := d.fail(e.path, e.keyNode, "unknown key %q (want one of %s)", e.key, fieldNames(fields))
			err.Kind = ErrUnknownKey
			return nil, err
		}
		canon := f.key
		if f.canon != "" {
			canon = f.canon
		}
		if other, dup := seen[canon]; dup {
			return nil, d.fail(e.path, e.keyNode, "%q and %q are the same key; give only one", other, e.key)
		}
		seen[canon] = e.key
		present[canon] = true
		if err := f.set(e.val, e.path); err != nil {
			return nil, err
		}
	}
	return present, nil
}

func findField(fields []field, key string) (field, bool) {
	for _, f := range fields {
		if f.key == key {
			return f, true
		}
	}
	return field{}, false
}

func fieldNames(fields []field) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.key
	}
	return strings.Join(names, ", ")
}

// missing is the error for a required key absent from the mapping n.
func (d *decoder) missing(path string, n *yaml.Node, key string) *Error {
	return d.fail(joinKey(path, key), deref(n), "missing required key %q", key)
}

// topNodes holds the top-level values, decoded in a fixed order afterwards
// (pools before operations, whatever the order in the file).
type topNodes struct {
	version, name, cluster, tree, pools, operations *yaml.Node
	update, steps, expect, tolerance                *yaml.Node
}

// topLevel collects the top-level keys.
func (d *decoder) topLevel(root *yaml.Node) (*topNodes, error) {
	var t topNodes
	keep := func(key string, dst **yaml.Node) field {
		return field{key: key, set: func(v *yaml.Node, _ string) error { *dst = v; return nil }}
	}
	_, err := d.object(root, "", []field{
		keep("version", &t.version), keep("name", &t.name), keep("cluster", &t.cluster),
		keep("tree", &t.tree), keep("pools", &t.pools), keep("operations", &t.operations),
		keep("update", &t.update), keep("steps", &t.steps), keep("expect", &t.expect),
		keep("tolerance", &t.tolerance),
	})
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// build decodes the top-level values and resolves the steps.
func (d *decoder) build(root *yaml.Node, t *topNodes) (*File, error) {
	if t.version == nil {
		return nil, d.missing("", root, "version")
	}
	v, err := d.integer(t.version, "version")
	if err != nil {
		return nil, err
	}
	if v != 1 {
		return nil, d.fail("version", deref(t.version), "unsupported version %d (want 1)", v)
	}
	f := &File{Tolerance: defaultTolerance}
	if t.name != nil {
		if f.Name, err = d.str(t.name, "name"); err != nil {
			return nil, err
		}
	}
	if t.cluster == nil {
		return nil, d.missing("", root, "cluster")
	}
	if f.Cluster, err = d.cluster(t.cluster, "cluster"); err != nil {
		return nil, err
	}
	if t.tolerance != nil {
		tol, err := d.numberOrNumericString(t.tolerance, "tolerance")
		if err != nil {
			return nil, err
		}
		if tol <= 0 {
			return nil, d.fail("tolerance", deref(t.tolerance), "tolerance must be > 0, got %g", tol)
		}
		f.Tolerance = tol
	}
	m, err := d.initialModel(t)
	if err != nil {
		return nil, err
	}
	if f.Steps, err = d.steps(t.steps, "steps", m); err != nil {
		return nil, err
	}
	return f, nil
}

// cluster decodes `cluster`: exactly one of resources and nodes.
func (d *decoder) cluster(n *yaml.Node, path string) (scheduler.Cluster, error) {
	var (
		total scheduler.PartialResources
		nodes []scheduler.Node
		grpN  *yaml.Node
	)
	present, err := d.object(n, path, []field{
		{key: "resources", set: func(v *yaml.Node, p string) (err error) {
			total, err = d.resources(v, p)
			return err
		}},
		{key: "nodes", set: func(v *yaml.Node, p string) (err error) {
			grpN = v
			nodes, err = d.nodes(v, p)
			return err
		}},
	})
	if err != nil {
		return scheduler.Cluster{}, err
	}
	switch {
	case present["resources"] && present["nodes"]:
		return scheduler.Cluster{}, d.fail(path, deref(grpN), "give exactly one of resources and nodes, not both")
	case present["resources"]:
		return scheduler.Cluster{Total: total.OrZero()}, nil
	case present["nodes"]:
		// At most maxNodes nodes of at most scheduler.MaxAmount each: the
		// totals stay within scheduler.MaxClusterAmount.
		return scheduler.NewClusterFromNodes(nodes), nil
	default:
		return scheduler.Cluster{}, d.fail(path, deref(n), "give exactly one of resources and nodes")
	}
}

// nodes decodes `cluster.nodes` and expands each group into count nodes
// named node-1, node-2, ... in file order.
func (d *decoder) nodes(n *yaml.Node, path string) ([]scheduler.Node, error) {
	groups, err := d.sequence(n, path)
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		return nil, d.fail(path, deref(n), "nodes must not be empty")
	}
	var out []scheduler.Node
	for i, g := range groups {
		gp := joinIndex(path, i)
		count := 1
		var (
			res  scheduler.PartialResources
			tags []string
		)
		present, err := d.object(g, gp, []field{
			d.intTo("count", &count),
			d.resourcesTo("resources", &res),
			{key: "tags", set: func(v *yaml.Node, p string) (err error) {
				if tags, err = d.stringList(v, p); err != nil {
					return err
				}
				for i, tag := range tags {
					// A tag no node_tag_filter can name selects the
					// node for no tree.
					if err := tagfilter.CheckTag(tag); err != nil {
						return d.fail(joinIndex(p, i), v, "%v", err)
					}
				}
				return nil
			}},
		})
		if err != nil {
			return nil, err
		}
		if !present["resources"] {
			return nil, d.missing(gp, g, "resources")
		}
		if count < 1 {
			return nil, d.fail(joinKey(gp, "count"), g, "count must be >= 1, got %d", count)
		}
		if len(out)+count > maxNodes {
			return nil, d.fail(joinKey(gp, "count"), g, "more than %d nodes in the cluster", maxNodes)
		}
		for range count {
			out = append(out, scheduler.Node{
				ID:        scheduler.NodeID(fmt.Sprintf("node-%d", len(out)+1)),
				Resources: res.OrZero(),
				Tags:      append([]string(nil), tags...),
			})
		}
	}
	return out, nil
}
