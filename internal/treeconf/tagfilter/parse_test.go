package tagfilter

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCanonicalAndMatch(t *testing.T) {
	cases := map[string]struct {
		in, canon string
		match     [][]string
		noMatch   [][]string
	}{
		"empty":       {in: "  ", canon: "", match: [][]string{nil, {"x"}}},
		"single":      {in: "gpu", canon: "gpu", match: [][]string{{"gpu"}, {"a", "gpu"}}, noMatch: [][]string{nil, {"cpu"}}},
		"and":         {in: "a&b", canon: "a & b", match: [][]string{{"a", "b"}}, noMatch: [][]string{{"a"}, {"b"}}},
		"or":          {in: "a |b", canon: "a | b", match: [][]string{{"a"}, {"b"}}, noMatch: [][]string{{"c"}}},
		"not":         {in: "! a", canon: "!a", match: [][]string{nil, {"b"}}, noMatch: [][]string{{"a"}}},
		"precedence":  {in: "a | b & c", canon: "a | b & c", match: [][]string{{"a"}, {"b", "c"}}, noMatch: [][]string{{"b"}, {"c"}}},
		"parens":      {in: "(a | b) & c", canon: "(a | b) & c", match: [][]string{{"a", "c"}, {"b", "c"}}, noMatch: [][]string{{"a"}, {"c"}}},
		"not group":   {in: "!(a|b)", canon: "!(a | b)", match: [][]string{{"c"}}, noMatch: [][]string{{"a"}, {"b"}}},
		"redundant":   {in: "((a)) & ((b & c))", canon: "a & b & c", match: [][]string{{"a", "b", "c"}}, noMatch: [][]string{{"a", "b"}}},
		"double not":  {in: "!!a", canon: "!!a", match: [][]string{{"a"}}, noMatch: [][]string{nil}},
		"tag charset": {in: "rack-1/dc.a:x_y", canon: "rack-1/dc.a:x_y", match: [][]string{{"rack-1/dc.a:x_y"}}},
		"nested or":   {in: "a & (b | (c | d))", canon: "a & (b | c | d)", match: [][]string{{"a", "d"}}, noMatch: [][]string{{"d"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f, err := Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.String(); got != tc.canon {
				t.Errorf("String() = %q, want %q", got, tc.canon)
			}
			again, err := Parse(f.String())
			if err != nil || again.String() != f.String() {
				t.Errorf("canonical form does not round-trip: %q -> %q, %v", f.String(), again.String(), err)
			}
			for _, tags := range tc.match {
				if !f.Match(tags) {
					t.Errorf("%q does not match %v", tc.in, tags)
				}
			}
			for _, tags := range tc.noMatch {
				if f.Match(tags) {
					t.Errorf("%q matches %v", tc.in, tags)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"dangling and":  {"a &", "expression ends"},
		"dangling or":   {"| a", `unexpected '|'`},
		"unclosed":      {"(a | b", `missing ")"`},
		"extra close":   {"a)", `unexpected ')'`},
		"bad char":      {"a & b$", `unexpected '$'`},
		"two tags":      {"a b", `unexpected 'b'`},
		"empty parens":  {"()", `unexpected ')'`},
		"too deep":      {strings.Repeat("!", MaxDepth+1) + "a", "nested deeper"},
		"too long":      {strings.Repeat("a", MaxLength+1), "bytes"},
		"operator only": {"!", "expression ends"},
	}
	// Short enough as written, but its canonical text "a & a & …" is not,
	// and the canonical text is what a tree stores and parses again.
	cases["too long once canonical"] = struct{ in, want string }{strings.Repeat("a&", MaxLength/2-1) + "a", "bytes in canonical form"}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(tc.in)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
}

func TestTags(t *testing.T) {
	got := MustParse("b & (a | !b) | c").Tags()
	if diff := cmp.Diff([]string{"a", "b", "c"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
