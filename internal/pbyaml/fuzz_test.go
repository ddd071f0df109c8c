package pbyaml

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Whatever the input, Unmarshal returns nil or an *Error, and what it
// accepts protojson writes and Unmarshal reads back the same.
func FuzzUnmarshal(f *testing.F) {
	for _, seed := range []string{
		"", "b: true", "i32: 1e6", "color: red", "children: [{str: a}, {right: {dur: 1s}}]",
		"named: {a: {numbered: {1: x}}}", "<<: {i64: '5'}", "children: [&a {u64: 1}, *a]",
		"left: x\nright: {}", "ts: 2026-11-22T10:00:00Z", "by: aGk=", "db: .nan", "- 1", "{",
	} {
		f.Add([]byte(seed))
	}
	d := kindsDescriptor(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		m := dynamicpb.NewMessage(d)
		err := Unmarshal(data, m)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want an *Error", err, err)
			}
			return
		}
		js, err := protojson.Marshal(m)
		if err != nil {
			t.Fatalf("accepted %q into a message protojson cannot write: %v", data, err)
		}
		back := dynamicpb.NewMessage(d)
		if err := Unmarshal(js, back); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		if diff := cmp.Diff(m, back, protocmp.Transform()); diff != "" {
			t.Fatalf("(-first +again):\n%s", diff)
		}
	})
}
