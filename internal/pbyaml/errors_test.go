package pbyaml

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// Every refusal names the file, the line and column, the path to the key
// and what is wrong.
func TestErrorsNamePlacePathAndReason(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"unknown field with a near name", "i32: 1\nchildren:\n  - {strr: x}", `k.yaml:3:6: children[0]: unknown field "strr" in Kinds; did you mean "str"?`},
		{"unknown field, nothing near", "zzzzzzzz: 1", `k.yaml:1:1: unknown field "zzzzzzzz" in Kinds`},
		{"integer from a word", "i32: ten", `k.yaml:1:6: i32: want a 32-bit integer, got "ten"`},
		{"integer with a fraction", "i64: 1.5", `k.yaml:1:6: i64: want an integer, got 1.5`},
		{"int32 out of range", "i32: 2147483648", `k.yaml:1:6: i32: 2147483648 is out of range for a 32-bit integer`},
		{"float beyond int32", "sf32: 1e10", `k.yaml:1:7: sf32: 1e10 is out of range for a 32-bit integer`},
		{"negative unsigned", "u64: -1", `k.yaml:1:6: u64: -1 is out of range for an unsigned integer`},
		{"uint32 out of range", "f32: 4294967296", `k.yaml:1:6: f32: 4294967296 is out of range for an unsigned 32-bit integer`},
		{"huge integer", "i64: 99999999999999999999", `k.yaml:1:6: i64: 99999999999999999999 is out of range for an integer`},
		{"bool from a string", "b: 'yes'", `k.yaml:1:4: b: want true or false, got "yes"`},
		{"NaN", "db: .nan", `k.yaml:1:5: db: want a finite number, got NaN`},
		{"infinity in a string", "db: '-Infinity'", `k.yaml:1:5: db: want a finite number, got -Inf`},
		{"float32 overflow", "fl: 1e39", `k.yaml:1:5: fl: 1e39 is out of range for a 32-bit float`},
		{"number from a word", "db: lots", `k.yaml:1:5: db: want a number, got "lots"`},
		{"bytes not base64", "by: '%%%'", `k.yaml:1:5: by: want base64 bytes, got "%%%"`},
		{"unknown enum value", "color: green", `k.yaml:1:8: color: want one of unspecified, red, dark_blue, got "green"`},
		{"undeclared enum number", "colors: [1, 7]", `k.yaml:1:13: colors[1]: want one of unspecified, red, dark_blue, got 7`},
		{"mapping for a scalar", "str: {a: 1}", `k.yaml:1:6: str: want a string, got a mapping`},
		{"scalar for a message", "right: 3", `k.yaml:1:8: right: want a mapping of Kinds's fields, got 3`},
		{"scalar for a list", "ints: 3", `k.yaml:1:7: ints: want a list, got 3`},
		{"list for a map", "named: [a]", `k.yaml:1:8: named: want a mapping, got a list`},
		{"null in a list of scalars", "ints: [1, ~]", `k.yaml:1:11: ints[1]: want an integer, got null`},
		{"null in a list of messages", "children: [~]", `k.yaml:1:12: children[0]: want a mapping of Kinds's fields, got null`},
		{"null map value", "numbered: {1: ~}", `k.yaml:1:15: numbered.1: want a string, got null`},
		{"map key of the wrong kind", "numbered: {one: x}", `k.yaml:1:12: numbered: want a 32-bit integer, got "one"`},
		{"map key not a string", "named: {1: {}}", `k.yaml:1:9: named: key 1 is not a string`},
		{"field key not a string", "true: 1", `k.yaml:1:1: key true is not a string`},
		{"mapping as a key", "? {a: 1}\n: 2", `k.yaml:1:3: key a mapping is not a string`},
		{"oneof given twice", "left: x\nright: {}", `k.yaml:2:1: left and right are alternatives (one of choice): give one`},
		{"map key twice", "named: {a: {}, a: {}}", `k.yaml:1:16: named: key a given twice`},
		{"field by both names", "snake_name: a\nsnakeName: b", `k.yaml:2:1: field snake_name given twice (also at line 1)`},
		{"duplicate key", "str: a\nstr: b", `k.yaml:2:1: field str given twice (also at line 1)`},
		{"bad duration", "dur: soon", `k.yaml:1:6: dur: want a duration such as 30s, 250ms or 1h30m, got "soon"`},
		{"duration as a bare number", "dur: 30", `k.yaml:1:6: dur: want a duration such as 30s, 250ms or 1h30m, got 30`},
		{"bad timestamp", "ts: yesterday", `k.yaml:1:5: ts: want an RFC 3339 time such as 2026-11-22T10:00:00Z, got "yesterday"`},
		{"wrapper types refused", "wrapped: 3", `k.yaml:1:10: wrapped: google.protobuf.Int32Value is not supported in YAML`},
		{"nested path", "named:\n  a:\n    children:\n      - {numbered: {2: [x]}}", `k.yaml:4:24: named.a.children[0].numbered.2: want a string, got a list`},
		{"not a mapping at the top", "- a\n- b", `k.yaml:1:1: want a mapping of Kinds's fields, got a list`},
		{"syntax error", "a: [1, 2\nb: 3", `k.yaml:1: not YAML: did not find expected ',' or ']'`},
		{"two documents", "i32: 1\n---\ni32: 2\n", `k.yaml:2:1: a second document; a file holds one`},
		{"a bad second document", "i32: 1\n---\n[", `k.yaml:3: not YAML: did not find expected node content`},
		{"merge of a scalar", "<<: 3", `k.yaml:1:5: a merge key (<<) takes a mapping or a list of them, got 3`},
		{"tab indentation", "named:\n\ta: {}", `k.yaml:2: not YAML: found character that cannot start any token`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Options{File: "k.yaml"}.Unmarshal([]byte(tc.in), newKinds(t))
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v (%T), want an *Error wrapping ErrInvalid", err, err)
			}
			if d := cmp.Diff(tc.want, err.Error()); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// The operation spec's mistakes that protojson used to report as places in
// its intermediate JSON.
func TestOperationSpecErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"pool: research\ntasks:\n  - name: map\n    job_count: ten\n", `spec.yaml:4:16: tasks[0].job_count: want a 32-bit integer, got "ten"`},
		{"tasks:\n  - name: map\n    job_resources: {cpu: 2, memroy: 4}\n", `spec.yaml:3:29: tasks[0].job_resources: unknown field "memroy" in Resources; did you mean "memory"?`},
		{"trees: [a]", `spec.yaml:1:1: unknown field "trees" in OperationSpec; did you mean "pool_trees"?`},
		{"pool_tree: [a]", `spec.yaml:1:1: unknown field "pool_tree" in OperationSpec; did you mean "pool_trees"?`},
		{"preemption_mode: gentle", `spec.yaml:1:18: preemption_mode: want one of unspecified, normal, graceful, got "gentle"`},
		{"tasks:\n  - name: t\n    command: {argv: [x]}\n    simulated_duration: 5s\n",
			`spec.yaml:4:5: tasks[0]: command and simulated_duration are alternatives (one of run): give one`},
	}
	for _, tc := range tests {
		err := Options{File: "spec.yaml"}.Unmarshal([]byte(tc.in), &pb.OperationSpec{})
		if err == nil {
			t.Errorf("%q: accepted", tc.in)
			continue
		}
		if d := cmp.Diff(tc.want, err.Error()); d != "" {
			t.Errorf("%q (-want +got):\n%s", strings.SplitN(tc.in, "\n", 2)[0], d)
		}
	}
}
