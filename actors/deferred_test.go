package actors

import (
	"testing"
	"time"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// A node's heartbeats that arrive while one is being processed wait, one at
// most: a newer one supersedes the one waiting, which is answered
// UNAVAILABLE at once; the one processed and the newest are answered.
func TestHeartbeatsWaitingForAPassAreBounded(t *testing.T) {
	h := startHarness(t, nil)
	h.beat("n1", nil, nil) // the node is known
	ledger := h.sys.dir.Load().trees[0].ledger
	ledger.mu.Lock() // the placer's next pass waits
	locked := true
	defer func() {
		if locked {
			ledger.mu.Unlock()
		}
	}()
	type answer struct {
		seq uint64
		err *pb.Error
	}
	answers := make(chan answer, 8)
	send := func(seq uint64) {
		hb := &pb.Heartbeat{NodeId: "n1", Incarnation: "i1", Sequence: seq, ResourceLimits: &pb.Resources{Cpu: 8}}
		h.sys.Heartbeat(&NodeHeartbeat{Heartbeat: hb, Reply: func(_ *pb.HeartbeatResponse, e *pb.Error) { answers <- answer{seq, e} }})
	}
	for seq := uint64(2); seq <= 5; seq++ {
		send(seq)
	}
	// 2 is in the pass; 3 and 4 are superseded in turn while it runs.
	for _, want := range []uint64{3, 4} {
		select {
		case a := <-answers:
			if a.seq != want || a.err.GetCode() != pb.ErrorCode_ERROR_CODE_UNAVAILABLE {
				t.Fatalf("answer %d %v, want %d superseded (UNAVAILABLE)", a.seq, a.err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("heartbeat %d was not answered while another was processed", want)
		}
	}
	ledger.mu.Unlock()
	locked = false
	for _, want := range []uint64{2, 5} {
		select {
		case a := <-answers:
			if a.seq != want || a.err != nil {
				t.Fatalf("answer %d %v, want %d answered", a.seq, a.err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("heartbeat %d was not answered", want)
		}
	}
}
