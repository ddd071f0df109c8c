package treeconf

import (
	"encoding/json"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Change is a write of one document: either a patch of one key (Key and
// Value) or a whole document (Document).
type Change struct {
	// Key is a top-level key, or a dotted path into nested mappings
	// ("integral_guarantees.resource_flow.cpu").
	Key string
	// Value is YAML (flow style is handy on a command line:
	// '{guarantee_type: burst, resource_flow: {cpu: 1000}}') or JSON; null
	// removes the key.
	Value string
	// Document, when HasDocument, replaces every key.
	Document    []byte
	HasDocument bool
	// ExpectedRevision, when not 0, makes the write fail with a
	// *ConflictError unless the object is at this revision. When 0 a patch
	// is read, applied and written with compare-and-set, and retried on a
	// concurrent change, so no writer's change is lost; a whole document
	// replaces whatever is stored.
	ExpectedRevision uint64
}

// Set is a patch of one key.
func Set(key, value string) Change { return Change{Key: key, Value: value} }

// Replace is a whole-document write.
func Replace(doc []byte, expectedRevision uint64) Change {
	return Change{Document: doc, HasDocument: true, ExpectedRevision: expectedRevision}
}

// validate checks the shape of the change itself.
func (c Change) validate() error {
	switch {
	case c.HasDocument && c.Key != "":
		return ruleErr(RuleInvalidValue, "", "", c.Key, "give either a key and a value or a whole document, not both")
	case !c.HasDocument && c.Key == "":
		return ruleErr(RuleInvalidValue, "", "", "", "give a key and a value, or a whole document")
	}
	if c.Key != "" && strings.TrimSpace(c.Value) == "" {
		return ruleErr(RuleInvalidValue, "", "", c.Key, "the value is empty; give null to remove the key")
	}
	if c.Key != "" {
		for _, part := range strings.Split(c.Key, ".") {
			if part == "" {
				return ruleErr(RuleInvalidValue, "", "", c.Key, "key %q has an empty part", c.Key)
			}
		}
	}
	return nil
}

// apply returns the document after the change: the stored document (stored,
// canonical JSON, or nil when absent) with the key set, or the new document.
// The result is YAML (it can carry values JSON cannot, such as .inf, which
// the decoder then refuses with a message naming the key).
func (c Change) apply(stored []byte) ([]byte, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if c.HasDocument {
		if _, err := parseMap(c.Document); err != nil {
			return nil, err
		}
		return c.Document, nil
	}
	doc, err := parseMap(stored)
	if err != nil {
		return nil, err
	}
	var value any
	if err := yaml.Unmarshal([]byte(c.Value), &value); err != nil {
		return nil, ruleErr(RuleInvalidValue, "", "", c.Key, "value %q does not parse: %s", c.Value, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if err := setPath(doc, strings.Split(c.Key, "."), value, c.Key); err != nil {
		return nil, err
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil, ruleErr(RuleInvalidValue, "", "", c.Key, "document does not encode: %v", err)
	}
	return out, nil
}

// setPath sets (or, for a nil value, deletes) the value at path, creating
// intermediate mappings.
func setPath(doc map[string]any, path []string, value any, full string) error {
	k := path[0]
	if len(path) == 1 {
		if value == nil {
			delete(doc, k)
		} else {
			doc[k] = value
		}
		return nil
	}
	next, ok := doc[k]
	if !ok || next == nil {
		if value == nil {
			return nil
		}
		m := map[string]any{}
		doc[k] = m
		return setPath(m, path[1:], value, full)
	}
	m, ok := stringMap(next)
	if !ok {
		return ruleErr(RuleInvalidValue, "", "", full, "cannot set %q: %q is %s, not a mapping", full, k, describe(next))
	}
	doc[k] = m
	if err := setPath(m, path[1:], value, full); err != nil {
		return err
	}
	if len(m) == 0 && value == nil {
		delete(doc, k)
	}
	return nil
}

// changedKeys returns the top-level keys whose values differ between two
// canonical key maps, sorted.
func changedKeys(before, after map[string]any) []string {
	set := map[string]bool{}
	for k, v := range before {
		if w, ok := after[k]; !ok || !sameJSON(v, w) {
			set[k] = true
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			set[k] = true
		}
	}
	return sortedKeys(set)
}

// sameJSON reports whether two values encode to the same JSON.
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// sortedKeys returns the members of a set, sorted.
func sortedKeys[V any](set map[string]V) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
