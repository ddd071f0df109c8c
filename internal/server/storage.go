package server

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/subjects"
)

// The stores whose writes storageHealth watches.
const (
	storeOperations = "operations" // the operations bucket
	storeState      = "state"      // the trees' state in the scheduler bucket
	storeJournal    = "journal"    // the completions journal
	storeJetStream  = "jetstream"  // JetStream itself (the probe's account info)
)

// storageHealth says whether JetStream takes the scheduler's writes
// (actors.StorageHealth): unavailable from the first failed write of a
// store (or a failed probe) until that store's next write succeeds. A
// write refused by a fence (a newer leader) says nothing of the storage.
// Every probe period it asks JetStream for the account's information, and,
// while a bucket's writes fail, writes its probe key (subjects.ProbeKey),
// so that it notices an outage when nothing is written and its end when
// nothing else would write again (the journal's writer and the operations
// try their own writes again on their own).
type storageHealth struct {
	logger *slog.Logger
	down   atomic.Bool
	// outages counts the changes to unavailable.
	outages atomic.Uint64

	mu      sync.Mutex
	failing map[string]error
	since   time.Time
}

func newStorageHealth(logger *slog.Logger) *storageHealth {
	return &storageHealth{logger: logger, failing: map[string]error{}}
}

// Available implements actors.StorageHealth.
func (h *storageHealth) Available() bool { return !h.down.Load() }

// observe records the outcome of a write (or a probe) of store.
func (h *storageHealth) observe(store string, err error) {
	if h == nil || errors.Is(err, ErrFenced) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, was := h.failing[store]
	switch {
	case err == nil && was:
		delete(h.failing, store)
		if len(h.failing) == 0 {
			h.down.Store(false)
			h.logger.Info("storage available again: jobs start again", "store", store, "unavailable_for", time.Since(h.since).Round(time.Millisecond))
		}
	case err != nil && !was:
		h.failing[store] = err
		if len(h.failing) == 1 {
			h.since = time.Now()
			h.down.Store(true)
			h.outages.Add(1)
			h.logger.Error("storage unavailable: no job starts or preemptions until it takes writes again; running jobs go on",
				"store", store, "err", err)
		}
	}
}

// failingStores are the stores whose last write failed, sorted.
func (h *storageHealth) failingStores() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.failing))
	for s := range h.failing {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// storageProber probes the storage for a storageHealth every period
// until stopped. A probe not answered within timeout failed: a stopped
// JetStream does not answer at all.
type storageProber struct {
	health  *storageHealth
	js      jetstream.JetStream
	ops     *fence // the operations bucket's
	state   *fence // the scheduler bucket's
	epoch   uint64
	period  time.Duration
	timeout time.Duration
	stop    chan struct{}
	done    chan struct{}
}

func (p *storageProber) run() {
	defer close(p.done)
	t := time.NewTicker(p.period)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		p.probe()
	}
}

// probe asks for the account's information, and writes the probe key of
// each bucket whose writes fail.
func (p *storageProber) probe() {
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	_, err := p.js.AccountInfo(ctx)
	p.health.observe(storeJetStream, err)
	value := []byte(strconv.FormatUint(p.epoch, 10) + " " + time.Now().UTC().Format(time.RFC3339Nano))
	for _, s := range p.health.failingStores() {
		switch s {
		case storeOperations:
			p.health.observe(s, p.ops.put(ctx, subjects.KVKey(subjects.OperationsBucket, subjects.ProbeKey), value))
		case storeState:
			p.health.observe(s, p.state.put(ctx, subjects.KVKey(subjects.SchedulerBucket, subjects.ProbeKey), value))
		}
	}
}
