package nodeagent

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// Why a heartbeat failed (for logs).
var (
	errNotConnected = errors.New("not connected to NATS")
	errTimeout      = errors.New("no response before the heartbeat timeout")
	errRefused      = errors.New("scheduler refused the heartbeat")
	errReconnected  = errors.New("the connection moved to another NATS server while the heartbeat awaited its response")
	errUnavailable  = errors.New("unavailable")
	errStale        = errors.New("answered only by a scheduler of an older leader epoch")
)

// NATS's status header for "no responders" (nats.go does not export it).
const (
	statusHeader       = "Status"
	statusNoResponders = "503"
)

// loop is Run's heartbeat state; only Run's goroutine touches it.
type loop struct {
	a        *Agent
	period   time.Duration
	asked    time.Duration // the last period a response asked for
	ticker   *time.Ticker
	timeout  *time.Timer
	inflight uint64    // sequence of the heartbeat awaiting its response; 0 is none
	deadline time.Time // when the in-flight heartbeat times out
	passed   error     // why the in-flight heartbeat's answers so far were passed over (see passOver)
	failures int       // consecutive failed heartbeats
}

// heartbeat sends the next heartbeat unless one is in flight.
func (l *loop) heartbeat() {
	if l.inflight != 0 {
		return // the in-flight one times out or succeeds first
	}
	a := l.a
	if !a.nc.IsConnected() {
		l.fail(errNotConnected)
		return
	}
	hb, dropped := a.buildHeartbeat(a.nc.MaxPayload())
	if dropped > 0 {
		a.log.Warn("heartbeat too large: finished jobs left for later heartbeats", "left", dropped)
	}
	data, err := proto.Marshal(hb)
	if err != nil {
		l.fail(fmt.Errorf("encode heartbeat: %w", err))
		return
	}
	msg := &nats.Msg{Subject: a.hbSubject, Reply: a.inbox + "." + strconv.FormatUint(hb.Sequence, 10), Data: data}
	if err := a.nc.PublishMsg(msg); err != nil {
		l.fail(fmt.Errorf("publish heartbeat: %w", err))
		return
	}
	a.counters.hbSent.Add(1)
	l.inflight, l.passed = hb.Sequence, nil
	l.deadline = time.Now().Add(a.cfg.HeartbeatTimeout)
	l.timeout.Reset(a.cfg.HeartbeatTimeout)
}

// passOver keeps waiting, for at most one more period, for another answer
// to the in-flight heartbeat than the one just received: an UNAVAILABLE
// refusal or a response of an older leader epoch. The heartbeat subject
// has no queue group, so every scheduler serving it gets each heartbeat:
// an old leader that lost its lease (paused, or stepping down) answers
// too, at once, and must not hide the new leader's answer. Without one
// by then, the heartbeat fails for why (see timedOut), as it would have
// at once before, and the next goes out.
func (l *loop) passOver(why error) {
	if l.passed == nil {
		wait := min(l.period, time.Until(l.deadline))
		l.deadline = time.Now().Add(wait)
		l.timeout.Reset(wait)
	}
	if l.passed == nil || !errors.Is(why, errStale) {
		l.passed = why // a refusal says more than a stale answer
	}
}

// reconnected gives up on the heartbeat in flight when the connection
// reconnected (to the same NATS server restarted, or another of its
// cluster) and sends the next one at once: the response to one sent
// before may have been lost with the old connection, and waiting out the
// heartbeat timeout (5s) for it would leave the node unheard that long. A
// response that arrives after all is dropped as late, like one after a
// timeout (the jobs it started, never started here, are missing from the
// next heartbeat and run again).
func (l *loop) reconnected() {
	if l.inflight == 0 {
		return
	}
	l.inflight, l.passed = 0, nil
	l.timeout.Stop()
	l.fail(errReconnected)
	l.heartbeat()
}

// timedOut gives up on the in-flight heartbeat. One whose only answers
// were passed over fails for their reason, and the next goes out at once
// (it waited a period already).
func (l *loop) timedOut() {
	if l.inflight == 0 {
		return
	}
	l.inflight = 0
	if why := l.passed; why != nil {
		l.passed = nil
		l.fail(why)
		l.heartbeat()
		return
	}
	l.fail(errTimeout)
}

// reply handles a message on the agent's reply inbox.
func (l *loop) reply(m *nats.Msg) {
	a := l.a
	seq, _ := strconv.ParseUint(m.Subject[strings.LastIndexByte(m.Subject, '.')+1:], 10, 64)
	if seq == 0 || seq != l.inflight {
		a.counters.lateResponses.Add(1)
		a.log.Debug("late heartbeat response dropped", "sequence", seq)
		// Its commands are not applied (the next heartbeat tells the
		// scheduler what runs), but a higher epoch it carries is
		// adopted: it proves a newer leader, whose answers must not lose
		// the race to an old one's again (see passOver).
		if resp, err := decodeResponse(m); err == nil {
			a.mu.Lock()
			a.acceptEpochLocked(resp.GetLeaderEpoch())
			a.mu.Unlock()
		}
		return
	}
	resp, err := decodeResponse(m)
	switch {
	case errors.Is(err, errUnavailable):
		l.passOver(err)
		return
	case err == nil && a.staleEpoch(resp.GetLeaderEpoch()):
		a.counters.staleResponses.Add(1)
		a.log.Debug("stale heartbeat response ignored", "epoch", resp.GetLeaderEpoch())
		l.passOver(errStale)
		return
	}
	l.inflight, l.passed = 0, nil
	l.timeout.Stop()
	if err != nil {
		l.fail(err)
		return
	}
	if !a.applyResponse(resp) {
		a.counters.staleResponses.Add(1)
		return
	}
	a.counters.hbOK.Add(1)
	if l.failures > 0 {
		a.log.Info("heartbeats resumed", "failed", l.failures)
		l.failures = 0
		a.counters.consecutiveFailures.Store(0)
	}
	if p := resp.GetHeartbeatPeriod().AsDuration(); p > 0 && p != l.asked {
		l.asked = p
		if p < MinSchedulerHeartbeatPeriod {
			a.log.Warn("the scheduler's heartbeat period is too short; using the least one", "asked", p, "period", MinSchedulerHeartbeatPeriod)
			p = MinSchedulerHeartbeatPeriod
		}
		if p != l.period {
			a.log.Info("heartbeat period set by the scheduler", "period", p)
			l.period = p
			l.ticker.Reset(p)
			a.counters.period.Store(int64(p))
		}
	}
}

// fail counts a failed heartbeat; the first of a run is a warning, the
// rest debug (thousands of agents must not flood the log in an outage).
func (l *loop) fail(err error) {
	c := &l.a.counters
	c.hbFailed.Add(1)
	switch {
	case errors.Is(err, errRefused):
		c.hbRefused.Add(1)
	case errors.Is(err, errTimeout), errors.Is(err, nats.ErrNoResponders), errors.Is(err, errReconnected), errors.Is(err, errStale):
		c.hbUnanswered.Add(1)
	}
	l.failures++
	c.consecutiveFailures.Store(uint64(l.failures))
	if l.failures == 1 {
		l.a.log.Warn("heartbeat failed; retrying every period", "err", err)
	} else {
		l.a.log.Debug("heartbeat failed", "err", err, "consecutive", l.failures)
	}
}

// decodeResponse turns a reply into a response, or the error it carries.
func decodeResponse(m *nats.Msg) (*pb.HeartbeatResponse, error) {
	if len(m.Data) == 0 && m.Header.Get(statusHeader) == statusNoResponders {
		return nil, nats.ErrNoResponders
	}
	if code := m.Header.Get(micro.ErrorCodeHeader); code != "" {
		e := &pb.Error{}
		if proto.Unmarshal(m.Data, e) == nil && e.GetMessage() != "" {
			if e.GetCode() == pb.ErrorCode_ERROR_CODE_UNAVAILABLE {
				return nil, fmt.Errorf("%w: %w: %s", errRefused, errUnavailable, e.GetMessage())
			}
			return nil, fmt.Errorf("%w: %s: %s", errRefused, e.GetCode(), e.GetMessage())
		}
		return nil, fmt.Errorf("%w: %s %s", errRefused, code, m.Header.Get(micro.ErrorHeader))
	}
	resp := &pb.HeartbeatResponse{}
	if err := proto.Unmarshal(m.Data, resp); err != nil {
		return nil, fmt.Errorf("decode heartbeat response: %w", err)
	}
	return resp, nil
}

// buildHeartbeat takes the next sequence number and reports the full state.
// Finished jobs that would push the heartbeat over maxPayload bytes are left
// for later heartbeats (they stay kept); dropped says how many. One that
// would not fit even alone goes with its log tail cut to fit (its end kept;
// the kept job keeps the whole tail), so that it is ever reported.
func (a *Agent) buildHeartbeat(maxPayload int64) (hb *pb.Heartbeat, dropped int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	hb = &pb.Heartbeat{
		NodeId:         a.cfg.NodeID,
		Incarnation:    a.cfg.Incarnation,
		Sequence:       a.seq,
		ResourceLimits: a.limits,
		Tags:           a.cfg.Tags,
		LeaderEpoch:    a.epoch,
		RunningJobs:    make([]*pb.RunningJob, 0, len(a.running)),
	}
	var usage scheduler.Resources
	for _, id := range slices.Sorted(maps.Keys(a.running)) {
		j := a.running[id]
		usage = usage.Add(j.res)
		hb.RunningJobs = append(hb.RunningJobs, &pb.RunningJob{
			JobId: j.id, OperationId: j.opID, Resources: j.resPB,
			StartTime: timestamppb.New(j.start), Interrupting: j.interrupted,
		})
	}
	hb.ResourceUsage = wire.ToResources(usage)
	room := maxPayload - int64(proto.Size(hb)) - 1024 // slack for headers and field tags
	budget := room
	for _, id := range slices.Sorted(maps.Keys(a.finished)) {
		fj := a.finished[id]
		size := int64(proto.Size(fj)) + 8
		if maxPayload > 0 && size > room {
			fj = cutLogTail(fj, size-room)
			size = int64(proto.Size(fj)) + 8
		}
		if maxPayload > 0 && size > budget {
			dropped++
			continue
		}
		budget -= size
		hb.FinishedJobs = append(hb.FinishedJobs, fj)
	}
	return hb, dropped
}

// cutLogTail returns a copy of fj whose log tail is at least n bytes
// shorter (its end kept, cut at a rune boundary), or fj when its tail is
// not that long.
func cutLogTail(fj *pb.FinishedJob, n int64) *pb.FinishedJob {
	tail := fj.GetLogTail()
	if n > int64(len(tail)) {
		return fj
	}
	out := proto.Clone(fj).(*pb.FinishedJob)
	out.LogTail = dropFront(tail, int(n))
	return out
}

// applyResponse applies a response unless it comes from an older leader
// epoch (then it returns false and changes nothing).
func (a *Agent) applyResponse(resp *pb.HeartbeatResponse) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.acceptEpochLocked(resp.GetLeaderEpoch()) {
		a.log.Debug("stale heartbeat response ignored", "epoch", resp.GetLeaderEpoch(), "highest", a.epoch)
		return false
	}
	for _, id := range resp.GetAcknowledgedFinishedJobs() {
		delete(a.finished, id)
	}
	for _, ab := range resp.GetJobsToAbort() {
		a.abortLocked(ab.GetJobId(), ab.GetReason())
	}
	for _, in := range resp.GetJobsToInterrupt() {
		a.interruptLocked(in)
	}
	for _, spec := range resp.GetJobsToStart() {
		a.startLocked(spec)
	}
	return true
}

// staleEpoch reports whether epoch is below the highest one seen.
func (a *Agent) staleEpoch(epoch uint64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return epoch < a.epoch
}

// acceptEpochLocked reports whether a command from epoch may be applied,
// raising the highest epoch seen.
func (a *Agent) acceptEpochLocked(epoch uint64) bool {
	if epoch < a.epoch {
		return false
	}
	if epoch > a.epoch {
		if a.epoch != 0 {
			a.log.Info("new scheduler leader epoch", "epoch", epoch, "previous", a.epoch)
		}
		a.epoch = epoch
	}
	return true
}
