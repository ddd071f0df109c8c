package nodeagent

import (
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// signal applies a pb.JobSignal published on the node's signal subject.
// Malformed payloads and signals from an older leader epoch are counted and
// dropped.
func (a *Agent) signal(m *nats.Msg) {
	s := &pb.JobSignal{}
	if err := proto.Unmarshal(m.Data, s); err != nil {
		a.counters.malformedSignals.Add(1)
		a.log.Warn("malformed job signal dropped", "err", err, "bytes", len(m.Data))
		return
	}
	id := s.GetAbort().GetJobId() + s.GetInterrupt().GetJobId()
	if id == "" {
		a.counters.malformedSignals.Add(1)
		a.log.Warn("job signal without an abort or interrupt of a job dropped")
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.acceptEpochLocked(s.GetLeaderEpoch()) {
		a.counters.staleSignals.Add(1)
		a.log.Debug("stale job signal ignored", "job", id, "epoch", s.GetLeaderEpoch(), "highest", a.epoch)
		return
	}
	a.counters.signalsApplied.Add(1)
	switch {
	case s.GetAbort() != nil:
		a.abortLocked(id, s.GetAbort().GetReason())
	case s.GetInterrupt() != nil:
		a.interruptLocked(s.GetInterrupt())
	}
}
