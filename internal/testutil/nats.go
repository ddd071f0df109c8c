package testutil

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sharetree/sharetree/internal/natsembed"
)

// StartNATS starts a real nats-server with JetStream on a random loopback
// port and a temporary store; it is stopped when the test ends.
func StartNATS(t testing.TB) *natsembed.Server {
	t.Helper()
	s, err := natsembed.Start(natsembed.Default(t.TempDir()), nil)
	if err != nil {
		t.Fatalf("start nats-server: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Connect connects to s; the connection is closed when the test ends.
func Connect(t testing.TB, s *natsembed.Server, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL(), opts...)
	if err != nil {
		t.Fatalf("connect to %s: %v", s.ClientURL(), err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// WaitFor polls cond every few milliseconds until it returns true, and fails
// the test with what when timeout passes first.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// Poll polls cond every few milliseconds until it returns true (true) or
// timeout passes (false). Unlike WaitFor it fails nothing, so a goroutine
// other than the test's may use it.
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}
