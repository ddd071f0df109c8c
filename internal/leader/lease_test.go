package leader_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/leader"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/subjects"
)

func TestMain(m *testing.M) { testutil.VerifyNoLeaks(m) }

// wait is how long a test waits for what must happen: far more than any
// lease here needs, far less than the hour-long TTLs that stand for "never".
const wait = 20 * time.Second

func testJS(t *testing.T) jetstream.JetStream {
	t.Helper()
	nc := testutil.Connect(t, testutil.StartNATS(t))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func cfg(name string, ttl time.Duration) leader.Config {
	c := leader.DefaultConfig(name)
	c.TTL, c.RetryPeriod = ttl, 50*time.Millisecond
	c.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return c
}

func acquire(t *testing.T, js jetstream.JetStream, c leader.Config) *leader.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	l, err := leader.Acquire(ctx, js, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Abandon)
	return l
}

// standby is a server waiting for the lease in the background.
type standby struct {
	got    chan *leader.Lease
	err    chan error
	cancel context.CancelFunc
}

func campaign(t *testing.T, js jetstream.JetStream, c leader.Config) *standby {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &standby{got: make(chan *leader.Lease, 1), err: make(chan error, 1), cancel: cancel}
	done := make(chan struct{})
	go func() {
		defer close(done)
		l, err := leader.Acquire(ctx, js, c)
		if err != nil {
			s.err <- err
			return
		}
		s.got <- l
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		select {
		case l := <-s.got:
			l.Abandon()
			s.got <- l
		default:
		}
	})
	return s
}

func (s *standby) lease(t *testing.T) *leader.Lease {
	t.Helper()
	select {
	case l := <-s.got:
		s.got <- l
		return l
	case err := <-s.err:
		t.Fatalf("standby: %v", err)
	case <-time.After(wait):
		t.Fatalf("standby took no lease in %s", wait)
	}
	return nil
}

func (s *standby) waiting() bool {
	select {
	case l := <-s.got:
		s.got <- l
		return false
	default:
		return true
	}
}

// renewals waits until the lease key has been written n more times: the
// holder renewed it n times.
func renewals(t *testing.T, js jetstream.JetStream, n int) {
	t.Helper()
	kv, err := js.KeyValue(context.Background(), subjects.LeaderBucket)
	if err != nil {
		t.Fatal(err)
	}
	rev := func() uint64 {
		e, err := kv.Get(context.Background(), subjects.LeaseKey)
		if err != nil {
			return 0
		}
		return e.Revision()
	}
	start := rev()
	seen := 0
	last := start
	testutil.WaitFor(t, wait, "the holder's renewals", func() bool {
		if r := rev(); r != last {
			last = r
			seen++
		}
		return seen >= n
	})
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(*leader.Config)
		want string
	}{
		{"defaults", func(*leader.Config) {}, ""},
		{"no name", func(c *leader.Config) { c.Name = "" }, "server name"},
		{"space in name", func(c *leader.Config) { c.Name = "a b" }, "printable ASCII"},
		{"long name", func(c *leader.Config) { c.Name = strings.Repeat("n", 129) }, "1 to 128"},
		{"short ttl", func(c *leader.Config) { c.TTL = time.Second }, "lease TTL 1s"},
		{"fractional ttl", func(c *leader.Config) { c.TTL = 2500 * time.Millisecond }, "whole seconds"},
		{"deadline under renew period", func(c *leader.Config) { c.RenewPeriod, c.RenewDeadline = 3*time.Second, 2*time.Second }, "renew deadline 2s"},
		{"deadline at ttl", func(c *leader.Config) { c.RenewDeadline = 10 * time.Second }, "less than the TTL"},
		{"negative retry", func(c *leader.Config) { c.RetryPeriod = -time.Second }, "retry period"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cf := leader.DefaultConfig("s1")
			c.mod(&cf)
			err := cf.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case c.want != "" && (err == nil || !errors.Is(err, leader.ErrInvalidConfig) || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("Validate = %v, want an ErrInvalidConfig naming %q", err, c.want)
			}
		})
	}
}

func TestStandbyTakesOverWhenTheHolderDies(t *testing.T) {
	js := testJS(t)
	a := acquire(t, js, cfg("a", 2*time.Second))
	b := campaign(t, js, cfg("b", 2*time.Second))
	// The holder renews past its TTL several times over; the standby waits.
	renewals(t, js, 4)
	if !b.waiting() {
		t.Fatal("the standby took the lease while its holder renewed it")
	}
	if !a.Valid() {
		t.Fatal("the holder's lease is not valid while it renews")
	}
	a.Abandon() // as if the process died
	if a.Valid() {
		t.Fatal("an abandoned lease is still valid")
	}
	lb := b.lease(t)
	if !lb.Valid() || lb.Err() != nil {
		t.Fatalf("the new holder's lease: valid %v, err %v", lb.Valid(), lb.Err())
	}
}

func TestReleaseHandsOverAtOnce(t *testing.T) {
	js := testJS(t)
	a := acquire(t, js, cfg("a", time.Hour))
	b := campaign(t, js, cfg("b", time.Hour))
	if err := a.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The TTL is an hour: only the release lets the standby in.
	b.lease(t)
	if a.Valid() {
		t.Fatal("a released lease is still valid")
	}
}

func TestPausedHolderLosesTheLease(t *testing.T) {
	js := testJS(t)
	ca := cfg("a", 2*time.Second)
	ca.RenewPeriod, ca.RenewDeadline = 200*time.Millisecond, time.Second
	a := acquire(t, js, ca)
	b := campaign(t, js, cfg("b", 2*time.Second))
	resume := a.Pause()
	// Past the renew deadline the holder stops acting as leader, before its
	// TTL lets the standby in.
	testutil.WaitFor(t, wait, "the paused holder to stop acting as leader", func() bool { return !a.Valid() })
	b.lease(t)
	resume()
	select {
	case <-a.Lost():
	case <-time.After(wait):
		t.Fatal("the paused holder did not notice that it lost the lease")
	}
	if err := a.Err(); !errors.Is(err, leader.ErrLost) || !strings.Contains(err.Error(), `holder now "b"`) {
		t.Fatalf("Err = %v, want ErrLost naming the new holder b", err)
	}
	if a.Valid() {
		t.Fatal("a lost lease is valid")
	}
}

func TestPausePastTheDeadlineStepsDown(t *testing.T) {
	js := testJS(t)
	ca := cfg("a", time.Hour)
	ca.RenewPeriod, ca.RenewDeadline = 100*time.Millisecond, 500*time.Millisecond
	a := acquire(t, js, ca)
	resume := a.Pause()
	testutil.WaitFor(t, wait, "the paused holder to stop acting as leader", func() bool { return !a.Valid() })
	resume()
	// Nobody took the lease (its TTL is an hour), but the holder cannot
	// know that nobody acted on it: it steps down.
	select {
	case <-a.Lost():
	case <-time.After(wait):
		t.Fatal("a holder paused past its renew deadline did not step down")
	}
	if err := a.Err(); !errors.Is(err, leader.ErrLost) || !strings.Contains(err.Error(), "not renewed for 500ms") {
		t.Fatalf("Err = %v, want ErrLost: not renewed", err)
	}
}

func TestRestartTakesOverItsOwnName(t *testing.T) {
	js := testJS(t)
	old := acquire(t, js, cfg("s1", time.Hour))
	old.Abandon() // crashed: its lease lives for an hour
	if err := old.Release(context.Background()); err != nil {
		t.Fatal(err) // (an abandoned lease is not released: a no-op)
	}
	other := cfg("s2", time.Hour)
	s2 := campaign(t, js, other)
	cr := cfg("s1", time.Hour) // TakeOver is on by default
	cr.RenewPeriod = 100 * time.Millisecond
	restarted := acquire(t, js, cr)
	if !restarted.Valid() {
		t.Fatal("the restarted server's lease is not valid")
	}
	// A server of the same name that lost its lease does not take it back.
	again := cfg("s1", time.Hour)
	again.TakeOver = false
	s1 := campaign(t, js, again)
	renewals(t, js, 3)
	if !s1.waiting() || !s2.waiting() {
		t.Fatal("a standby took the lease from the restarted server")
	}
}

func TestLeaseLostWhenNATSIsGone(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	c := cfg("a", 2*time.Second)
	c.RenewPeriod, c.RenewDeadline = 100*time.Millisecond, 500*time.Millisecond
	a := acquire(t, js, c)
	srv.Stop()
	select {
	case <-a.Lost():
	case <-time.After(wait):
		t.Fatal("the lease was not lost with NATS gone")
	}
	if err := a.Err(); !errors.Is(err, leader.ErrLost) || !strings.Contains(err.Error(), "not renewed for 500ms") {
		t.Fatalf("Err = %v, want ErrLost: not renewed", err)
	}
}

func TestAcquireEndsWithItsContext(t *testing.T) {
	js := testJS(t)
	acquire(t, js, cfg("a", time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := leader.Acquire(ctx, js, cfg("b", time.Hour))
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire = %v, want context.Canceled", err)
	}
}

func TestAcquireRefusesABadConfig(t *testing.T) {
	js := testJS(t)
	_, err := leader.Acquire(context.Background(), js, leader.Config{Name: "x", TTL: time.Second})
	if !errors.Is(err, leader.ErrInvalidConfig) {
		t.Fatalf("Acquire = %v, want ErrInvalidConfig", err)
	}
}

// TestALeaseExpiredEarlyStaysWithItsHolder (reliability test 21, lease
// double-ownership): the NATS server expires the lease key on its wall
// clock, so a step of that clock expires it at once, while its holder,
// which measures its lease on its monotonic clock, still leads. Here the
// key is purged (the same event for a standby: the key gone before its
// TTL). The standby waits out the TTL since the last renewal it saw
// instead of taking it; the holder takes it again at its next renewal and
// keeps leading. Once the holder dies, the standby takes over as usual.
func TestALeaseExpiredEarlyStaysWithItsHolder(t *testing.T) {
	js := testJS(t)
	a := acquire(t, js, cfg("a", 2*time.Second))
	b := campaign(t, js, cfg("b", 2*time.Second))
	renewals(t, js, 2) // the standby has seen the holder renew
	kv, err := js.KeyValue(context.Background(), subjects.LeaderBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Purge(context.Background(), subjects.LeaseKey); err != nil {
		t.Fatal(err)
	}
	// The holder writes the key again, and renews it for well past the
	// standby's grace (a TTL, 2 s).
	testutil.WaitFor(t, wait, "the holder to take the key again", func() bool {
		e, err := kv.Get(context.Background(), subjects.LeaseKey)
		return err == nil && strings.HasPrefix(string(e.Value()), "a ")
	})
	renewals(t, js, 6)
	if !b.waiting() {
		t.Fatal("the standby took a lease its holder still held (expired early on the server)")
	}
	if !a.Valid() || a.Err() != nil {
		t.Fatalf("the holder: valid %v, err %v; want it still leading", a.Valid(), a.Err())
	}
	a.Abandon()
	b.lease(t)
}
