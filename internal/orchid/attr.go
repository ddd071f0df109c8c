package orchid

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/sharetree/sharetree/internal/scenario"
)

// Attributes are the names of every attribute an element may have, in the
// report's order (the JSON names of scenario.ElementReport).
var Attributes = attributeNames(reflect.TypeFor[scenario.ElementReport]())

func attributeNames(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// CheckAttribute reports whether path can name an attribute: its first
// step must be one of Attributes (the rest is checked against the value).
func CheckAttribute(path []string) error {
	if len(path) == 0 {
		return nil
	}
	if !slices.Contains(Attributes, path[0]) {
		return fmt.Errorf("%w: %q is not one of %s", ErrUnknownAttribute, path[0], strings.Join(Attributes, ", "))
	}
	return nil
}

// Field is one member of a JSON object, in document order.
type Field struct {
	Key   string
	Value json.RawMessage
}

// Fields returns the members of a JSON object in document order.
func Fields(doc []byte) ([]Field, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("orchid: not a JSON object: %.40q", doc)
	}
	var out []Field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("orchid: bad JSON object: %w", err)
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("orchid: bad JSON object: %w", err)
		}
		out = append(out, Field{Key: key, Value: v})
	}
	return out, nil
}

// Attribute returns the value at path in an element's report (the whole
// report for an empty path). element names the element in errors.
func Attribute(report *scenario.ElementReport, element string, path []string) (json.RawMessage, error) {
	doc, err := json.Marshal(report)
	if err != nil {
		return nil, fmt.Errorf("orchid: encode %s: %w", element, err)
	}
	if err := CheckAttribute(path); err != nil {
		return nil, err
	}
	for i, step := range path {
		fields, err := Fields(doc)
		if err != nil {
			return nil, fmt.Errorf("%w: %s of %s is not an object", ErrUnknownAttribute, strings.Join(path[:i], "."), element)
		}
		j := slices.IndexFunc(fields, func(f Field) bool { return f.Key == step })
		switch {
		case j < 0 && i == 0:
			return nil, fmt.Errorf("%w: %s has no %s (it does not apply to a %s of this kind)", ErrAttributeNotSet, element, step, report.Kind)
		case j < 0:
			keys := make([]string, len(fields))
			for k, f := range fields {
				keys[k] = f.Key
			}
			return nil, fmt.Errorf("%w: %s of %s has no %q; it has %s", ErrUnknownAttribute, strings.Join(path[:i], "."), element, step, strings.Join(keys, ", "))
		}
		doc = fields[j].Value
	}
	return doc, nil
}
