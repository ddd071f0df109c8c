package pbyaml

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/testing/protocmp"
)

// Each document decodes to what protojson makes of the JSON given beside it.
func TestUnmarshalMatchesProtojson(t *testing.T) {
	tests := []struct{ name, yaml, json string }{
		{"scalars", `{b: true, i32: -7, i64: "9007199254740993", u32: 0x10, u64: 18446744073709551615, s32: 1_000,
		  s64: -3, f32: 7, f64: 8, sf32: -9, sf64: 10, fl: 1.5, db: -2.25e3, str: hi, by: aGVsbG8=}`,
			`{"b": true, "i32": -7, "i64": "9007199254740993", "u32": 16, "u64": "18446744073709551615", "s32": 1000,
			  "s64": -3, "f32": 7, "f64": "8", "sf32": -9, "sf64": 10, "fl": 1.5, "db": -2250, "str": "hi", "by": "aGVsbG8="}`},
		{"integers written as floats and strings", `{i32: 1e6, i64: "-42", u32: " 3 ", db: "0.5"}`,
			`{"i32": 1000000, "i64": -42, "u32": 3, "db": 0.5}`},
		{"any scalar is a string, as written", `{str: 1.10, left: true}`, `{"str": "1.10", "left": "true"}`},
		{"enums: full, short, any case, numbers", `{color: dark_blue, colors: [COLOR_RED, red, Dark_Blue, 0, 2]}`,
			`{"color": "COLOR_DARK_BLUE", "colors": ["COLOR_RED", "COLOR_RED", "COLOR_DARK_BLUE", "COLOR_UNSPECIFIED", "COLOR_DARK_BLUE"]}`},
		{"json names", `{snakeName: x}`, `{"snakeName": "x"}`},
		{"lists, maps, nesting", `{ints: [1, "2"], children: [{str: a}, {right: {i32: 1}}], named: {x: {b: true}, y: {}}, numbered: {3: three, "-1": minus}}`,
			`{"ints": ["1", "2"], "children": [{"str": "a"}, {"right": {"i32": 1}}], "named": {"x": {"b": true}, "y": {}}, "numbered": {"3": "three", "-1": "minus"}}`},
		{"well-known types", `{dur: 1h30m, ts: 2026-11-22T10:00:00.5Z, right: {dur: 0.25s}}`,
			`{"dur": "5400s", "ts": "2026-11-22T10:00:00.500Z", "right": {"dur": "0.250s"}}`},
		{"nulls leave fields unset", `{b: ~, ints: null, named: ~, right: ~, left: x, dur: ~}`, `{"left": "x"}`},
		{"proto3 optional keeps zero", `{maybe: 0}`, `{"maybe": 0}`},
		{"anchors, aliases and merge keys", "children: [&b {str: base, i32: 1}, {<<: *b, i32: 2}, {<<: [{b: true}, *b]}]",
			`{"children": [{"str": "base", "i32": 1}, {"str": "base", "i32": 2}, {"b": true, "str": "base", "i32": 1}]}`},
		{"a JSON document", `{"i32": 5, "named": {"k": {"str": "v"}}}`, `{"i32": 5, "named": {"k": {"str": "v"}}}`},
		{"empty document", ``, `{}`},
		{"comment only", "# nothing\n", `{}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := newKinds(t)
			if err := protojson.Unmarshal([]byte(tc.json), want); err != nil {
				t.Fatalf("protojson: %v", err)
			}
			got := newKinds(t)
			if err := Unmarshal([]byte(tc.yaml), got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got, protocmp.Transform()); d != "" {
				t.Errorf("(-protojson +pbyaml):\n%s", d)
			}
		})
	}
}
