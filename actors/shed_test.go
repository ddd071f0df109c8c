package actors

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// Reliability test 19: past MaxHeartbeatPasses heartbeats in their pass, a
// heartbeat is answered at once, throttled and counted, instead of
// queueing; once the passes end, heartbeats are served again.
func TestHeartbeatsBeyondThePassLimitAreShed(t *testing.T) {
	h := startHarnessConfig(t, func(c *Config) { c.MaxHeartbeatPasses = 1 }, nil)
	h.beat("n1", nil, nil)
	h.beat("n2", nil, nil)
	ledger := h.sys.dir.Load().trees[0].ledger
	ledger.mu.Lock() // n1's next pass waits
	locked := true
	defer func() {
		if locked {
			ledger.mu.Unlock()
		}
	}()
	n1 := make(chan *pb.Error, 1)
	h.sys.Heartbeat(&NodeHeartbeat{Heartbeat: &pb.Heartbeat{NodeId: "n1", Incarnation: "i1", Sequence: 100, ResourceLimits: &pb.Resources{Cpu: 8}},
		Reply: func(_ *pb.HeartbeatResponse, e *pb.Error) { n1 <- e }})
	testutil.WaitFor(t, 10*time.Second, "n1's heartbeat to be in its pass", func() bool { p, _ := h.sys.HeartbeatLoad(); return p == 1 })

	answered := make(chan *pb.Error, 1)
	h.sys.Heartbeat(&NodeHeartbeat{Heartbeat: &pb.Heartbeat{NodeId: "n2", Incarnation: "i1", Sequence: 100, ResourceLimits: &pb.Resources{Cpu: 8}},
		Reply: func(_ *pb.HeartbeatResponse, e *pb.Error) { answered <- e }})
	select {
	case e := <-answered: // at once: Heartbeat answers before it returns
		if e.GetCode() != pb.ErrorCode_ERROR_CODE_UNAVAILABLE || !strings.Contains(e.GetMessage(), "throttled") {
			t.Fatalf("n2's heartbeat answered %v, want UNAVAILABLE, throttled", e)
		}
	default:
		t.Fatal("n2's heartbeat was not answered at once while the limit was reached")
	}
	if _, shed := h.sys.HeartbeatLoad(); shed != 1 {
		t.Errorf("%d heartbeats shed, want 1", shed)
	}

	ledger.mu.Unlock()
	locked = false
	select {
	case e := <-n1:
		if e != nil {
			t.Fatalf("n1's heartbeat answered %v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("n1's heartbeat was not answered once its pass could run")
	}
	testutil.WaitFor(t, 10*time.Second, "the pass to end", func() bool { p, _ := h.sys.HeartbeatLoad(); return p == 0 })
	h.seq["n2"] = 100
	h.beat("n2", nil, nil) // served again (beat fails the test on an error)
}

// A node whose heartbeats are shed is alive: it is neither taken offline
// nor lost, while a silent node is.
func TestShedHeartbeatsKeepTheNodeAlive(t *testing.T) {
	h := startHarnessConfig(t, func(c *Config) { c.NodeOfflineTimeout, c.NodeLostTimeout = 4*time.Second, 8*time.Second }, nil)
	h.beat("shed", nil, nil)
	h.beat("silent", nil, nil)
	h.clock.advance(10 * time.Second)
	if !h.sys.router.shed("shed", h.clock.Now()) || h.sys.router.shed("unknown", h.clock.Now()) {
		t.Fatal("shed: known node not found, or an unknown one found")
	}
	// The silent node is lost at the next liveness check; the node whose
	// heartbeat was just shed is checked in the same round and kept.
	testutil.WaitFor(t, 10*time.Second, "the silent node to be lost", func() bool { return h.sys.NodeCount() == 1 })
	names := []string{}
	for _, pid := range h.sys.router.all() {
		names = append(names, pid.Id)
	}
	if !slices.Contains(names, "node:shed") {
		t.Errorf("node actors %v: the node whose heartbeats are shed was lost", names)
	}
	// Offline and lost in the same check (silent past both timeouts).
	if off, lost := h.sys.NodeTransitions(); off != 1 || lost != 1 {
		t.Errorf("%d nodes taken offline, %d lost; want the silent one: 1 and 1", off, lost)
	}
}
