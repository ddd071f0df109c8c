package pbyaml

import (
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// isNull reports whether n is YAML's null (or an empty document).
func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// describe names what n is, for errors.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!str", "!!binary", "!!timestamp":
			return strconv.Quote(n.Value)
		}
		return n.Value
	}
	return "a " + fmt.Sprint(n.Kind)
}

// pair is one key and its value in a mapping.
type pair struct{ key, value *yaml.Node }

// pairs returns mapping n's keys and values, merge keys (<<) applied: a key
// written in n wins over a merged one, and an earlier merged mapping over a
// later one.
func (d *decoder) pairs(n *yaml.Node, path string) ([]pair, error) {
	var own, merged []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			ps, err := d.mergeSources(v, path)
			if err != nil {
				return nil, err
			}
			merged = append(merged, ps...)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return nil, d.fail(k, path, "key %s is not a string", describe(k))
		}
		own = append(own, pair{k, v})
	}
	if len(merged) == 0 {
		return own, nil
	}
	seen := map[string]bool{}
	for _, p := range own {
		seen[p.key.Value] = true
	}
	for _, p := range merged {
		if !seen[p.key.Value] {
			seen[p.key.Value] = true
			own = append(own, p)
		}
	}
	return own, nil
}

// mergeSources returns the pairs a merge key's value brings: one mapping or
// a list of them.
func (d *decoder) mergeSources(v *yaml.Node, path string) ([]pair, error) {
	v, err := d.visit(v, path)
	if err != nil {
		return nil, err
	}
	var sources []*yaml.Node
	switch v.Kind {
	case yaml.MappingNode:
		sources = []*yaml.Node{v}
	case yaml.SequenceNode:
		sources = v.Content
	default:
		return nil, d.fail(v, path, "a merge key (<<) takes a mapping or a list of them, got %s", describe(v))
	}
	var out []pair
	for _, s := range sources {
		s, err := d.visit(s, path)
		if err != nil {
			return nil, err
		}
		if s.Kind != yaml.MappingNode {
			return nil, d.fail(s, path, "a merge key (<<) takes a mapping or a list of them, got %s", describe(s))
		}
		ps, err := d.pairs(s, path)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

// aliasBudget is how many nodes a walk of doc may visit: every node a few
// times over, plus room for a handful of aliases to large parts.
func aliasBudget(doc *yaml.Node) int {
	count := 0
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		count++
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(doc)
	return 4*count + 10_000
}
