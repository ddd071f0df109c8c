package actors

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// memRoster is a NodeRoster in memory. While gate is set, Add waits for
// it to be closed; failAdds makes that many Adds fail first.
type memRoster struct {
	mu       sync.Mutex
	nodes    map[string]bool
	gate     chan struct{}
	failAdds int
	adds     int
}

func newMemRoster(nodes ...string) *memRoster {
	r := &memRoster{nodes: map[string]bool{}}
	for _, n := range nodes {
		r.nodes[n] = true
	}
	return r
}

func (r *memRoster) Load(context.Context) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.nodes)), nil
}

func (r *memRoster) Add(ctx context.Context, node string) error {
	r.mu.Lock()
	gate := r.gate
	r.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.adds++
	if r.failAdds > 0 {
		r.failAdds--
		return errors.New("the store refused the write")
	}
	r.nodes[node] = true
	return nil
}

func (r *memRoster) Remove(_ context.Context, node string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.nodes, node)
	return nil
}

func (r *memRoster) list() []string {
	nodes, _ := r.Load(context.Background())
	return nodes
}

// A restarted scheduler whose roster lists n1 and n2 holds its revived
// operation only until both have reported their jobs — far sooner than
// its 10 s JobRevivalTimeout. A job of an operation it did not revive
// holds nothing up; the job no node reported starts at once after.
func TestRevivalEndsOnceEveryRosterNodeReported(t *testing.T) {
	ro := newMemRoster("n1", "n2")
	h := startHarness(t, func(d *Deps) { d.Roster = ro }, revivedOp("op-1-1", 3))
	ledger := h.sys.dir.Load().trees[0].ledger
	testutil.WaitFor(t, 10*time.Second, "the revived operation to be scheduled", func() bool { return ledger.hasOperation("op-1-1") })

	n1 := []string{"op-1-1.0.0.0.1", "ghost-9.0.0.0"}
	for range 3 {
		h.clock.advance(10 * time.Millisecond)
		if got := startIDs(h.beat("n1", n1, nil)); len(got) != 0 {
			t.Fatalf("n1 got %v while n2 of the roster had not reported", got)
		}
	}
	in, err := h.sys.Introspect("physical", Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if in.Release(); !in.Reviving {
		t.Fatal("the tree is not reviving while n2 has not reported")
	}
	// n2's report ends the revival; its own pass, which follows, starts
	// the job nobody reported.
	h.clock.advance(10 * time.Millisecond)
	if diff := cmp.Diff([]string{"op-1-1.0.2.0.2"}, startIDs(h.beat("n2", []string{"op-1-1.0.1.0.1"}, nil))); diff != "" {
		t.Errorf("started once every roster node reported, 40 ms after the restart (-want +got):\n%s", diff)
	}
	h.waitJobs("op-1-1", 3, 0)
	// The first fair-share update after the revival's end charts it all.
	testutil.WaitFor(t, 10*time.Second, "the tree no longer reviving", func() bool {
		in, err := h.sys.Introspect("physical", Scope{})
		if err != nil {
			t.Fatal(err)
		}
		in.Release()
		return !in.Reviving
	})
}

// Without a node of the roster reporting, the revival lasts its whole
// timeout, as without a roster.
func TestRevivalWaitsForASilentRosterNode(t *testing.T) {
	ro := newMemRoster("n1", "silent")
	h := startHarness(t, func(d *Deps) { d.Roster = ro }, revivedOp("op-1-1", 2))
	ledger := h.sys.dir.Load().trees[0].ledger
	testutil.WaitFor(t, 10*time.Second, "the revived operation to be scheduled", func() bool { return ledger.hasOperation("op-1-1") })
	running := []string{"op-1-1.0.0.0.1"}
	for _, step := range []time.Duration{10 * time.Millisecond, 5 * time.Second, 4 * time.Second} {
		h.clock.advance(step)
		if got := startIDs(h.beat("n1", running, nil)); len(got) != 0 {
			t.Fatalf("started %v before the timeout, with a node of the roster silent", got)
		}
	}
	if active, waiting := h.sys.Revival(); !active || waiting != 1 {
		t.Errorf("Revival() = %v, %d; want on, waiting for the silent node", active, waiting)
	}
	h.clock.advance(time.Second) // 10 s: the timeout
	if active, waiting := h.sys.Revival(); active || waiting != 0 {
		t.Errorf("Revival() at the timeout = %v, %d; want over", active, waiting)
	}
	if diff := cmp.Diff([]string{"op-1-1.0.1.0.2"}, startIDs(h.beat("n1", running, nil))); diff != "" {
		t.Errorf("started at the timeout (-want +got):\n%s", diff)
	}
}

// A node gets no job until the roster holds it: while its add is pending,
// or after one failed (the next heartbeat tries again).
func TestANodeGetsNoJobUntilTheRosterHoldsIt(t *testing.T) {
	ro := newMemRoster()
	ro.gate, ro.failAdds = make(chan struct{}), 1
	h := startHarness(t, func(d *Deps) { d.Roster = ro })
	h.submit(1)
	for range 3 {
		h.clock.advance(10 * time.Millisecond)
		if got := startIDs(h.beat("n1", nil, nil)); len(got) != 0 {
			t.Fatalf("n1 got %v before the roster held it", got)
		}
	}
	close(ro.gate) // the first add fails, the second takes
	var started []string
	testutil.WaitFor(t, 10*time.Second, "n1's first job, once the roster holds it", func() bool {
		h.clock.advance(10 * time.Millisecond)
		started = startIDs(h.beat("n1", nil, nil))
		return len(started) > 0
	})
	if diff := cmp.Diff([]string{"n1"}, ro.list()); diff != "" {
		t.Errorf("roster (-want +got):\n%s", diff)
	}
	ro.mu.Lock()
	adds := ro.adds
	ro.mu.Unlock()
	if adds != 2 {
		t.Errorf("%d adds, want 2 (one failed, one taken)", adds)
	}
}

// A node declared lost leaves the roster; so does a node of the roster
// never heard from since the start, once NodeLostTimeout has passed.
func TestLostNodesLeaveTheRoster(t *testing.T) {
	ro := newMemRoster("gone")
	h := startHarness(t, func(d *Deps) { d.Roster = ro })
	h.beat("n1", nil, nil)
	testutil.WaitFor(t, 10*time.Second, "n1 in the roster", func() bool { return slices.Contains(ro.list(), "n1") })
	if n := h.sys.RosterSize(); n != 2 {
		t.Errorf("RosterSize() = %d, want 2 (gone and n1)", n)
	}
	h.clock.advance(DefaultConfig().NodeLostTimeout + time.Second)
	testutil.WaitFor(t, 10*time.Second, "the roster emptied", func() bool { return len(ro.list()) == 0 && h.sys.RosterSize() == 0 })
	// n1 comes back: it is added again.
	h.beat("n1", nil, nil)
	testutil.WaitFor(t, 10*time.Second, "n1 back in the roster", func() bool {
		return strings.Join(ro.list(), ",") == "n1"
	})
}

// An operation that could not be revived (its pool is gone) is not waited
// for: a node reporting one of its jobs has reported all it must, and the
// revival ends with the roster's last node.
func TestRevivalDoesNotWaitForAnOperationThatFailedToRevive(t *testing.T) {
	ro := newMemRoster("n1")
	gone := revivedOp("op-1-2", 1)
	gone.Spec.Pool = "gone"
	h := startHarness(t, func(d *Deps) { d.Roster = ro }, revivedOp("op-1-1", 2), gone)
	ledger := h.sys.dir.Load().trees[0].ledger
	testutil.WaitFor(t, 10*time.Second, "op-1-1 scheduled, op-1-2 failed", func() bool {
		return ledger.hasOperation("op-1-1") && h.status("op-1-2").GetState() == pb.OperationState_OPERATION_STATE_FAILED
	})
	h.clock.advance(10 * time.Millisecond)
	if diff := cmp.Diff([]string{"op-1-1.0.1.0.2"}, startIDs(h.beat("n1", []string{"op-1-1.0.0.0.1", "op-1-2.0.0.0.1"}, nil))); diff != "" {
		t.Errorf("started once n1 reported (-want +got):\n%s", diff)
	}
}
