package nodeagent

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLogTail(t *testing.T) {
	cases := map[string]struct {
		limit  int
		writes []string
		want   string
	}{
		"nothing":                   {4, nil, ""},
		"under the limit":           {8, []string{"ab", "cd"}, "abcd"},
		"exactly the limit":         {4, []string{"ab", "cd"}, "abcd"},
		"wraps once":                {4, []string{"abc", "def"}, "cdef"},
		"wraps many times":          {3, []string{"a", "b", "c", "d", "e", "f", "g"}, "efg"},
		"one write over the limit":  {4, []string{"0123456789"}, "6789"},
		"long write after a short":  {4, []string{"xy", "0123456789"}, "6789"},
		"a rune cut at the front":   {4, []string{"aé€"}, "€"}, // "é€" is 5 bytes; the tail starts inside é
		"invalid bytes are escaped": {8, []string{"a\xffb"}, "a\uFFFDb"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			lt := newLogTail(c.limit)
			for _, w := range c.writes {
				if n, err := lt.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := lt.String(); got != c.want {
				t.Errorf("String() = %q, want %q", got, c.want)
			}
		})
	}
}

func TestLogTailStaysValidUTF8(t *testing.T) {
	lt := newLogTail(7)
	for range 100 {
		_, _ = lt.Write([]byte(strings.Repeat("ж€😀", 3)[:5]))
		if s := lt.String(); !utf8.ValidString(s) || len(s) > 7 {
			t.Fatalf("String() = %q", s)
		}
	}
}

// Invalid bytes become U+FFFD (three bytes each) and the tail still fits
// the limit, keeping its end.
func TestLogTailReplacementsStayWithinTheLimit(t *testing.T) {
	lt := newLogTail(8)
	_, _ = lt.Write([]byte("\xffa\xffb\xffc\xffd"))
	s := lt.String()
	if !utf8.ValidString(s) || len(s) > 8 {
		t.Fatalf("String() = %q (%d bytes); want valid UTF-8 of at most 8 bytes", s, len(s))
	}
	if want := "\uFFFDc\uFFFDd"; s != want {
		t.Errorf("String() = %q; want %q", s, want)
	}
}
