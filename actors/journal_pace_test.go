package actors

import (
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/internal/testutil"
)

// The writer waits Config.JournalBatchInterval after a write began before
// it writes again, so what arrives meanwhile goes in one batch.
func TestJournalWriterGathersWhatArrivesWithinTheInterval(t *testing.T) {
	j := newMemJournal()
	cfg := DefaultConfig()
	cfg.HeartbeatPeriod = time.Minute
	cfg.JournalBatchInterval = time.Second
	as := actor.NewActorSystem()
	t.Cleanup(as.Shutdown)
	w := newJournalWriter(j, as.Root, &cfg, nil, nil)
	waits := make(chan time.Duration, 1)
	fire := make(chan time.Time)
	w.after = func(d time.Duration) <-chan time.Time { waits <- d; return fire }
	w.start()
	t.Cleanup(w.close)
	node := actor.NewPID("nonhost", "n1")

	w.append("op", "a", false, node, 1)
	testutil.WaitFor(t, 5*time.Second, "the first completion to be written", func() bool { return w.stats().Batches == 1 })
	w.append("op", "b", false, node, 2)
	select {
	case d := <-waits:
		if d <= 0 || d > time.Second {
			t.Fatalf("waited %s before the second write; want (0, 1s]", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the writer did not wait before its second write; journal %v", j.jobIDs())
	}
	w.append("op", "c", false, node, 3)
	fire <- time.Time{}
	testutil.WaitFor(t, 5*time.Second, "the second batch", func() bool { return w.stats().Batches == 2 })
	if diff := cmp.Diff([]string{"a", "b", "c"}, j.jobIDs()); diff != "" {
		t.Fatalf("journal (-want +got):\n%s", diff)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if got := len(j.batches[1].JobIDs); got != 2 {
		t.Errorf("second batch holds %v; want b and c together", j.batches[1].JobIDs)
	}
}

// The interval is capped at half the heartbeat period.
func TestJournalIntervalCappedByHeartbeatPeriod(t *testing.T) {
	cfg := DefaultConfig()
	cfg.HeartbeatPeriod = 40 * time.Millisecond
	cfg.JournalBatchInterval = time.Second
	as := actor.NewActorSystem()
	t.Cleanup(as.Shutdown)
	w := newJournalWriter(newMemJournal(), as.Root, &cfg, nil, nil)
	if w.interval != 20*time.Millisecond {
		t.Errorf("interval %s; want 20ms", w.interval)
	}
}
