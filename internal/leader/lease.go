package leader

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/jsutil"
	"github.com/sharetree/sharetree/subjects"
)

// ErrLost is wrapped by the error of a lease that was lost (Err).
var ErrLost = errors.New("leader: lease lost")

// Lease is the leader lease, held: Acquire returns it once taken. It is
// renewed in the background until it is lost (Lost, Err), released
// (Release) or abandoned (Abandon).
type Lease struct {
	cfg     Config
	js      jetstream.JetStream
	kv      jetstream.KeyValue
	subject string
	// value is what this process writes: its name and a random
	// incarnation, so that it knows its own writes from those of another
	// process of the same name.
	value string
	// base is the monotonic origin of validUntil, the time (since base)
	// until which the leader may act: its last renewal's sending time plus
	// RenewDeadline.
	base       time.Time
	validUntil atomic.Int64
	ended      atomic.Bool
	// rev is the lease key's revision this process last wrote (the renew
	// loop's, and Release's once the loop has stopped).
	rev uint64

	lost     chan struct{}
	lostErr  error // set before lost is closed
	lostOnce sync.Once
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	// hold pauses the renew loop (Pause).
	hold chan chan struct{}

	// What a standby saw of the key, on its own clock (see graceLeft).
	seenMu   sync.Mutex
	seenRev  uint64        // the last revision it saw written (0: none)
	seenAt   time.Duration // when (since base) it first saw seenRev
	released bool          // the key was deleted (released) since
}

// Acquire takes the lease, waiting as a standby while another server holds
// it, until ctx ends (its error, wrapped). It creates the lease bucket if
// need be.
func Acquire(ctx context.Context, js jetstream.JetStream, cfg Config) (*Lease, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: subjects.LeaderBucket, Description: "sharetree: the scheduler leader lease",
		History: 1, Storage: jetstream.FileStorage, LimitMarkerTTL: cfg.TTL, Replicas: max(cfg.Replicas, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("leader: lease bucket %s: %w", subjects.LeaderBucket, err)
	}
	l := &Lease{
		cfg: cfg, js: js, kv: kv, subject: subjects.KVKey(subjects.LeaderBucket, subjects.LeaseKey),
		value: cfg.Name + " " + rand.Text(), base: time.Now(),
		lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}), hold: make(chan chan struct{}),
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changed := l.watch(wctx)
	retry := time.NewTicker(cfg.RetryPeriod)
	defer retry.Stop()
	waitingFor, graceLogged := "", uint64(0)
	for {
		won, holder, grace, err := l.try(ctx)
		var graceOver <-chan time.Time
		switch {
		case won:
			go l.run()
			return l, nil
		case err != nil && ctx.Err() == nil:
			cfg.Logger.Warn("leader lease not taken; trying again", "bucket", subjects.LeaderBucket, "err", err)
		case grace > 0:
			graceOver = time.After(grace)
			// A short grace is the delay with which the standby saw the
			// last renewal: an ordinary expiry, not worth a warning.
			if rev := l.seen(); rev != graceLogged && grace >= cfg.TTL/4 {
				graceLogged = rev
				cfg.Logger.Warn("the leader lease is gone before its TTL ran out since its last renewal, as this server saw it (the NATS server's clock stepped forward?): waiting that long before taking it",
					"holder", waitingFor, "wait", grace.Round(time.Millisecond))
			}
		case err == nil && holder != waitingFor:
			waitingFor = holder
			cfg.Logger.Info("standing by: another server holds the leader lease", "holder", holder, "ttl", cfg.TTL)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("leader: waiting for the lease: %w", ctx.Err())
		case <-retry.C:
		case <-changed:
		case <-graceOver:
		}
	}
}

// observe records that the key was seen written at revision rev (a
// renewal, when rev is new).
func (l *Lease) observe(rev uint64) {
	l.seenMu.Lock()
	defer l.seenMu.Unlock()
	if rev != l.seenRev {
		l.seenRev, l.seenAt, l.released = rev, time.Since(l.base), false
	}
}

// observeRelease records that the key was deleted: its holder released it.
func (l *Lease) observeRelease() {
	l.seenMu.Lock()
	defer l.seenMu.Unlock()
	l.released = true
}

// seen is the last revision the standby saw written.
func (l *Lease) seen() uint64 {
	l.seenMu.Lock()
	defer l.seenMu.Unlock()
	return l.seenRev
}

// graceLeft is how long a standby that finds the key gone still waits
// before taking it: until TTL has passed, on its own monotonic clock,
// since it last saw the key renewed. The NATS server expires the key on
// its wall clock, so a step of that clock (NTP, an operator) can expire
// it at once, while its holder, which measures its lease on its
// monotonic clock, still acts as the leader; taking it then would make
// two leaders. The holder, still valid, writes the key again at its next
// renewal (see run), well within the grace. Without a renewal seen, or
// after a release (a delete), there is no grace; after an ordinary
// expiry it is about nothing, since the standby saw the last renewal
// about when the server stored it.
func (l *Lease) graceLeft() time.Duration {
	l.seenMu.Lock()
	defer l.seenMu.Unlock()
	if l.seenRev == 0 || l.released {
		return 0
	}
	return max(0, l.cfg.TTL-(time.Since(l.base)-l.seenAt))
}

// try takes the lease if it is free (and its grace, graceLeft, is over:
// grace says how long is left otherwise), or held under this server's
// name while TakeOver is set; it returns the holder's name otherwise.
func (l *Lease) try(ctx context.Context) (won bool, holder string, grace time.Duration, err error) {
	if grace = l.graceLeft(); grace > 0 {
		if _, err := l.kv.Get(ctx, subjects.LeaseKey); errors.Is(err, jetstream.ErrKeyNotFound) {
			return false, "", grace, nil
		}
	}
	sent := time.Now()
	rev, err := l.kv.Create(ctx, subjects.LeaseKey, []byte(l.value), jetstream.KeyTTL(l.cfg.TTL))
	if err == nil {
		l.taken(rev, sent)
		l.cfg.Logger.Info("leader lease taken", "name", l.cfg.Name, "ttl", l.cfg.TTL)
		return true, "", 0, nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return false, "", 0, err
	}
	e, err := l.kv.Get(ctx, subjects.LeaseKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, "", 0, nil // gone meanwhile: the next try may take it
	}
	if err != nil {
		return false, "", 0, err
	}
	l.observe(e.Revision())
	holder = holderName(string(e.Value()))
	if !l.cfg.TakeOver || holder != l.cfg.Name {
		return false, holder, 0, nil
	}
	rev, err = l.write(ctx, e.Revision())
	if err != nil {
		if jsutil.CASConflict(err) {
			return false, holder, 0, nil
		}
		return false, holder, 0, err
	}
	l.taken(rev, sent)
	l.cfg.Logger.Info("leader lease taken over from an earlier run of this server's name", "name", l.cfg.Name, "ttl", l.cfg.TTL)
	return true, holder, 0, nil
}

// taken records the lease as held at revision rev, written at sent.
func (l *Lease) taken(rev uint64, sent time.Time) {
	l.rev = rev
	l.validUntil.Store(int64(sent.Sub(l.base) + l.cfg.RenewDeadline))
}

// write sets the lease to this process's value with a fresh TTL if its
// last revision is rev, and returns the new revision. (The key-value API's
// Update cannot set a TTL; this is its write with one.)
func (l *Lease) write(ctx context.Context, rev uint64) (uint64, error) {
	ack, err := l.js.PublishMsg(ctx, &nats.Msg{Subject: l.subject, Data: []byte(l.value)},
		jetstream.WithMsgTTL(l.cfg.TTL), jetstream.WithExpectLastSequencePerSubject(rev))
	if err != nil {
		return 0, err
	}
	return ack.Sequence, nil
}

// run renews the lease until it is lost or stopped. A renewal due after
// the renew deadline passed (the process was stopped or starved that
// long) is not sent: the leader steps down, since another server may
// have taken the lease meanwhile and acted on it.
func (l *Lease) run() {
	defer close(l.done)
	t := time.NewTimer(l.cfg.RenewPeriod)
	defer t.Stop()
	var lastErr error
	for {
		select {
		case <-l.stop:
			return
		case resume := <-l.hold:
			select {
			case <-resume:
			case <-l.stop:
				return
			}
		case <-t.C:
		}
		sent := time.Now()
		if sent.Sub(l.base) >= time.Duration(l.validUntil.Load()) {
			why := "the process was stopped or starved"
			if lastErr != nil {
				why = lastErr.Error()
			}
			l.lose(fmt.Errorf("%w: not renewed for %s (%s); holder now %q", ErrLost, l.cfg.RenewDeadline, why, l.holder()))
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.cfg.RenewPeriod)
		rev, err := l.write(ctx, l.rev)
		if err != nil && jsutil.CASConflict(err) {
			e, gerr := l.kv.Get(ctx, subjects.LeaseKey)
			switch {
			case gerr == nil && string(e.Value()) == l.value:
				// The write was stored with its answer lost: the key holds
				// this process's value.
				rev, err = l.write(ctx, e.Revision())
			case errors.Is(gerr, jetstream.ErrKeyNotFound):
				// Gone though this process renewed it less than
				// RenewDeadline (< TTL) ago on its monotonic clock: the
				// NATS server expired it early, its wall clock stepped
				// forward (or an operator deleted it). Nobody else took
				// it: a standby waits out the TTL since the last renewal
				// it saw (graceLeft). Taken again, if still free.
				if crev, cerr := l.kv.Create(ctx, subjects.LeaseKey, []byte(l.value), jetstream.KeyTTL(l.cfg.TTL)); cerr == nil {
					l.cfg.Logger.Warn("the leader lease was gone before its TTL ran out since its last renewal (the NATS server's clock stepped forward?); taken again",
						"name", l.cfg.Name, "ttl", l.cfg.TTL)
					rev, err = crev, nil
				}
			}
		}
		cancel()
		switch {
		case err == nil:
			l.taken(rev, sent)
			lastErr = nil
			t.Reset(l.cfg.RenewPeriod)
		case jsutil.CASConflict(err):
			l.lose(fmt.Errorf("%w: another server took it (holder %q)", ErrLost, l.holder()))
			return
		default:
			lastErr = err
			l.cfg.Logger.Warn("leader lease not renewed; trying again", "err", err)
			t.Reset(l.cfg.RenewPeriod / 4)
		}
	}
}

// Pause stops renewing the lease until resume is called, as if the
// process were stopped (SIGSTOP) for that long: a fault-injection hook for
// tests of what depends on the lease. It does nothing to a lease that is
// no longer renewed.
func (l *Lease) Pause() (resume func()) {
	ch := make(chan struct{})
	select {
	case l.hold <- ch:
	case <-l.done:
	}
	return sync.OnceFunc(func() { close(ch) })
}

// holder is the name of the lease's holder, as far as it can be read.
func (l *Lease) holder() string {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.RenewPeriod)
	defer cancel()
	e, err := l.kv.Get(ctx, subjects.LeaseKey)
	if err != nil {
		return "unknown: " + err.Error()
	}
	return holderName(string(e.Value()))
}

// lose ends the lease with err.
func (l *Lease) lose(err error) {
	l.lostOnce.Do(func() {
		l.lostErr = err
		l.cfg.Logger.Warn("leader lease lost", "err", err)
		close(l.lost)
	})
}

// Valid reports whether this server may act as the leader now: the lease
// is neither lost nor ended, and its last renewal was sent less than
// RenewDeadline ago.
func (l *Lease) Valid() bool {
	if l.ended.Load() {
		return false
	}
	select {
	case <-l.lost:
		return false
	default:
	}
	return time.Since(l.base) < time.Duration(l.validUntil.Load())
}

// Lost is closed when the lease is lost (Err says why).
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Err is why the lease was lost (nil while it is not).
func (l *Lease) Err() error {
	select {
	case <-l.lost:
		return l.lostErr
	default:
		return nil
	}
}

// Release stops renewing and deletes the lease, if this process still
// holds it (it was neither lost nor released nor abandoned), so that a
// standby takes over at once.
func (l *Lease) Release(ctx context.Context) error {
	if !l.end() || l.Err() != nil {
		return nil
	}
	err := l.kv.Delete(ctx, subjects.LeaseKey, jetstream.LastRevision(l.rev))
	if err != nil && !jsutil.CASConflict(err) {
		return fmt.Errorf("leader: release the lease: %w", err)
	}
	l.cfg.Logger.Info("leader lease released", "name", l.cfg.Name)
	return nil
}

// Abandon stops renewing without releasing: the lease runs out after its
// TTL, as a crashed server's does.
func (l *Lease) Abandon() { l.end() }

// end stops the renew loop and waits for it; it reports whether this call
// ended the lease (false: it had ended already).
func (l *Lease) end() bool {
	first := !l.ended.Swap(true)
	l.stopOnce.Do(func() { close(l.stop) })
	<-l.done
	return first
}

// watch signals (without blocking) every change of the lease key other
// than a renewal: a delete, a purge or the marker its TTL leaves; it
// records the renewals and deletes it sees (observe, observeRelease). A watch
// that cannot start is logged; the standby then only retries on its timer.
func (l *Lease) watch(ctx context.Context) <-chan struct{} {
	out := make(chan struct{}, 1)
	w, err := l.kv.Watch(ctx, subjects.LeaseKey, jetstream.UpdatesOnly())
	if err != nil {
		l.cfg.Logger.Warn("leader lease not watched; the standby tries on its timer only", "err", err)
		return out
	}
	go func() {
		defer func() { _ = w.Stop() }()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e == nil {
					continue
				}
				switch e.Operation() {
				case jetstream.KeyValuePut:
					l.observe(e.Revision()) // a renewal, or a new holder
					continue
				case jetstream.KeyValueDelete:
					l.observeRelease()
				}
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return out
}

// holderName is the server name in a lease value ("<name> <incarnation>").
func holderName(value string) string {
	name, _, _ := strings.Cut(value, " ")
	return name
}
