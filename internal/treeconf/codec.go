package treeconf

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sharetree/sharetree/internal/scenario"
)

// keyDefaultTree is the cluster's only key.
const keyDefaultTree = "default_tree"

// fromScenario turns a decoder error into a *RuleError for the object: the
// rule follows the sentinel the error wraps, or the key it names (weight,
// node_tag_filter), and is invalid_value otherwise.
func fromScenario(err error, tree, pool string) error {
	var se *scenario.Error
	if !errors.As(err, &se) {
		return ruleErr(RuleInvalidValue, tree, pool, "", "%v", err)
	}
	rule := RuleInvalidValue
	last := se.Path
	if i := strings.LastIndexByte(last, '.'); i >= 0 {
		last = last[i+1:]
	}
	switch {
	case errors.Is(err, scenario.ErrUnknownKey):
		rule = RuleUnknownKey
	case errors.Is(err, scenario.ErrDuplicateName):
		rule = RuleDuplicateName
	case last == "weight":
		rule = RuleWeight
	case last == "node_tag_filter" || last == "nodes_filter":
		rule = RuleNodeTagFilter
	}
	return &RuleError{Rule: rule, Tree: tree, Pool: pool, Key: se.Path, Msg: se.Msg}
}

// decodeCluster parses the cluster document: {default_tree: NAME}.
func decodeCluster(data []byte) (Cluster, error) {
	var c Cluster
	m, err := parseMap(data)
	if err != nil {
		return c, err
	}
	for k, v := range m {
		if k != keyDefaultTree {
			return c, ruleErr(RuleUnknownKey, "", "", k, "unknown key %q (want %s)", k, keyDefaultTree)
		}
		switch s := v.(type) {
		case string:
			c.DefaultTree = s
		case nil:
		default:
			return c, ruleErr(RuleInvalidValue, "", "", k, "want a tree name, got %v", v)
		}
	}
	return c, nil
}

// parseMap parses a YAML or JSON mapping into Go values (empty input is the
// empty mapping).
func parseMap(data []byte) (map[string]any, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, ruleErr(RuleInvalidValue, "", "", "", "document does not parse: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if v == nil {
		return map[string]any{}, nil
	}
	m, ok := stringMap(v)
	if !ok {
		return nil, ruleErr(RuleInvalidValue, "", "", "", "want a mapping of keys, got %s", describe(v))
	}
	return m, nil
}

// stringMap returns v as a map with string keys, when it is a mapping
// (yaml.v3 decodes mappings whose keys are not all strings as map[any]any).
func stringMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, x := range m {
			out[fmt.Sprint(k)] = x
		}
		return out, true
	}
	return nil, false
}

func describe(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return fmt.Sprintf("a string (%q)", v)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T (%v)", v, v)
}
