package nodeagent

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// logTail is an io.Writer that keeps the last limit bytes written to it, in
// a ring that grows up to limit (small outputs cost small buffers).
type logTail struct {
	mu    sync.Mutex
	limit int
	buf   []byte // len(buf) <= limit; once full, a ring starting at start
	start int
	total int64
}

func newLogTail(limit int) *logTail { return &logTail{limit: limit} }

// Write keeps the end of p; it never fails.
func (t *logTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	t.total += int64(n)
	if len(p) > t.limit {
		p = p[len(p)-t.limit:]
	}
	if room := t.limit - len(t.buf); room > 0 {
		k := min(room, len(p))
		t.buf = append(t.buf, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 { // the ring is full: overwrite the oldest bytes
		k := copy(t.buf[t.start:], p)
		p = p[k:]
		t.start = (t.start + k) % t.limit
	}
	return n, nil
}

// String returns the kept bytes as valid UTF-8 (a rune cut at the front is
// dropped; invalid bytes become U+FFFD), since protobuf strings must be,
// and at most limit bytes long: a replacement takes three bytes where the
// invalid byte took one, so the front is cut again at a rune's start.
func (t *logTail) String() string {
	t.mu.Lock()
	b := make([]byte, 0, len(t.buf))
	b = append(b, t.buf[t.start:]...)
	b = append(b, t.buf[:t.start]...)
	truncated := t.total > int64(len(b))
	t.mu.Unlock()
	if truncated {
		for i := 0; i < utf8.UTFMax-1 && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	out := strings.ToValidUTF8(string(b), "\uFFFD")
	if cut := len(out) - t.limit; cut > 0 {
		out = dropFront(out, cut)
	}
	return out
}

// dropFront drops at least n bytes from the front of s: up to the first
// rune that starts at or after byte n, so that no rune is cut.
func dropFront(s string, n int) string {
	for n < len(s) && !utf8.RuneStart(s[n]) {
		n++
	}
	return s[min(n, len(s)):]
}
