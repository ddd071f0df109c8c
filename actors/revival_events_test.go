package actors

import (
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// fairShareSnapshots returns the fair-share snapshots published so far.
func (r *recordedEvents) fairShareSnapshots() []*pb.FairShareSnapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*pb.FairShareSnapshot
	for _, e := range r.evs {
		if e.kind == subjects.EventFairShare {
			out = append(out, e.ev.GetFairShare())
		}
	}
	return out
}

// A restarted scheduler's fair-share snapshots say, until its
// JobRevivalTimeout, that it still waits for the nodes' jobs (their usage
// may be too low); then they no longer do.
func TestFairShareSnapshotsSayTheSchedulerRevives(t *testing.T) {
	events := &recordedEvents{}
	h := startHarness(t, func(d *Deps) { d.Events = events }, revivedOp("op-1-1", 2))
	testutil.WaitFor(t, 10*time.Second, "a fair-share snapshot", func() bool { return len(events.fairShareSnapshots()) > 0 })
	if first := events.fairShareSnapshots()[0]; !first.GetReviving() {
		t.Errorf("the first snapshot, within the revival window, is not marked reviving: %v", first)
	}
	h.clock.advance(11 * time.Second) // past the 10 s JobRevivalTimeout
	testutil.WaitFor(t, 10*time.Second, "a snapshot after the revival window", func() bool {
		s := events.fairShareSnapshots()
		return len(s) > 1 && !s[len(s)-1].GetReviving()
	})
}
