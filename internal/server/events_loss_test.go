package server

import (
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// Lost events are counted and warned about: one the tree's name makes no
// subject for is dropped; one no stream stores fails at its acknowledgement.
func TestEventLossIsCountedAndWarned(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	var logs testutil.LockedBuffer
	sink, err := newEventSink(nc, 1, 16, func() bool { return true }, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sink.close(t.Context()) })

	sink.Publish("a.b", subjects.EventFairShare, &pb.Event{})
	if d, f := sink.stats(); d != 1 || f != 0 {
		t.Fatalf("after a bad tree name: dropped %d, failed %d; want 1, 0", d, f)
	}
	if got := logs.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "events dropped") {
		t.Errorf("log %q lacks the drop's warning", got)
	}

	// No events stream exists on this server: the publish's
	// acknowledgement fails.
	sink.Publish("t", subjects.EventFairShare, &pb.Event{})
	testutil.WaitFor(t, 10*time.Second, "the failed publish to be counted", func() bool { _, f := sink.stats(); return f == 1 })
	if d, _ := sink.stats(); d != 1 {
		t.Errorf("dropped %d after the failed publish; want still 1", d)
	}
}

// An event published while the server is not the leader is dropped and
// counted: it may tell of a decision no agent received.
func TestEventsOfANonLeaderAreDropped(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	var leading atomic.Bool
	sink, err := newEventSink(nc, 1, 16, leading.Load, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sink.close(t.Context()) })
	sink.Publish("t", subjects.EventJob, &pb.Event{})
	if d, _ := sink.stats(); d != 1 {
		t.Fatalf("an event of a server not leading: dropped %d, want 1", d)
	}
	leading.Store(true)
	sink.Publish("t", subjects.EventJob, &pb.Event{})
	if d, _ := sink.stats(); d != 1 {
		t.Fatalf("an event of the leader: dropped %d, want still 1", d)
	}
}
