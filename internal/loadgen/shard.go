package loadgen

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"google.golang.org/protobuf/proto"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// NATS's status header and its "no responders" value (nats.go does not
// export them).
const (
	statusHeader       = "Status"
	statusNoResponders = "503"
)

// errRefused is wrapped when the scheduler answered with an error.
var errRefused = errors.New("scheduler refused the heartbeat")

// signalBuffer is the channel of a shard's signal subscriptions.
const signalBuffer = 4096

// rttSample is one answered heartbeat: when it was sent (since the start of
// the window) and its round trip.
type rttSample struct {
	at, rtt time.Duration
}

// shard is one NATS connection and the agents that share it: one goroutine
// sends their heartbeats, one subscription receives every response and one
// goroutine applies the job signals.
type shard struct {
	r       *runner
	nc      *nats.Conn
	prefix  string // reply subjects: prefix.<agent>.<sequence>
	agents  []*simAgent
	phases  []time.Duration // agents[i] is due at phases[i] in every period
	byNode  map[string]*simAgent
	subs    []*nats.Subscription
	sigCh   chan *nats.Msg
	sigDone chan struct{}
	sigWG   sync.WaitGroup
	closed  <-chan struct{} // closed by the connection's closed handler

	mu   sync.Mutex // guards rtts (appended by the reply callback)
	rtts []rttSample

	lags []time.Duration // sender-owned: how late each heartbeat went out
	buf  []byte          // sender-owned encoding buffer
}

func newShard(r *runner, nc *nats.Conn, closed <-chan struct{}) *shard {
	return &shard{r: r, nc: nc, closed: closed, prefix: nc.NewInbox(), byNode: map[string]*simAgent{}, sigCh: make(chan *nats.Msg, signalBuffer), sigDone: make(chan struct{})}
}

// add appends an agent due at phase (calls come in phase order).
func (s *shard) add(id string, phase time.Duration) error {
	hb, err := subjects.NodeHeartbeat(id)
	if err != nil {
		return fmt.Errorf("agent %s: %w", id, err)
	}
	a := &simAgent{local: len(s.agents), id: id, subject: hb, limits: s.r.limits}
	s.agents = append(s.agents, a)
	s.phases = append(s.phases, phase)
	s.byNode[id] = a
	return nil
}

// subscribe subscribes to the replies and to every agent's signals.
func (s *shard) subscribe() error {
	sub, err := s.nc.Subscribe(s.prefix+".*.*", s.onReply)
	if err != nil {
		return fmt.Errorf("subscribe to replies: %w", err)
	}
	// Thousands of responses a second may queue behind a slow callback;
	// dropping them would show as timeouts, so do not limit the queue.
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		return fmt.Errorf("reply subscription limits: %w", err)
	}
	s.subs = append(s.subs, sub)
	for _, a := range s.agents {
		subj, err := subjects.NodeSignal(a.id)
		if err != nil {
			return fmt.Errorf("agent %s: %w", a.id, err)
		}
		sig, err := s.nc.ChanSubscribe(subj, s.sigCh)
		if err != nil {
			return fmt.Errorf("subscribe to %s: %w", subj, err)
		}
		s.subs = append(s.subs, sig)
	}
	s.sigWG.Add(1)
	go func() {
		defer s.sigWG.Done()
		for {
			select {
			case m := <-s.sigCh:
				s.onSignal(m)
			case <-s.sigDone:
				return
			}
		}
	}()
	return s.nc.Flush()
}

// close drains the connection (the reply callback finishes what is queued),
// closes it and stops the signal goroutine.
func (s *shard) close(timeout time.Duration) {
	if err := s.nc.Drain(); err == nil {
		select {
		case <-s.closed:
		case <-time.After(timeout):
		}
	}
	s.nc.Close()
	close(s.sigDone)
	s.sigWG.Wait()
}

// drive sends the heartbeats of the shard's agents on their schedule until
// the end of the run or ctx is done.
func (s *shard) drive(ctx context.Context) {
	r := s.r
	period := r.cfg.HeartbeatPeriod
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	idx, round := 0, 0
	for {
		due := r.t0.Add(time.Duration(round)*period + s.phases[idx])
		if !due.Before(r.end) {
			return
		}
		if wait := time.Until(due); wait > 0 {
			t.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		} else if ctx.Err() != nil {
			return
		}
		now := time.Now()
		if r.inWindow(due) {
			s.lags = append(s.lags, now.Sub(due))
		}
		s.send(s.agents[idx], now)
		if idx++; idx == len(s.agents) {
			idx, round = 0, round+1
		}
	}
}

// send heartbeats for a unless its previous heartbeat is still in flight.
func (s *shard) send(a *simAgent, now time.Time) {
	r := s.r
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.inflight != 0 {
		if now.Sub(a.sentAt) < r.cfg.HeartbeatTimeout {
			r.skipped(now)
			return
		}
		a.inflight = 0
		r.timedOut(a.sentAt)
	}
	data, seq, err := a.build(r, now, r.incarnation, s.buf[:0])
	if err != nil {
		r.failed(now, fmt.Errorf("encode heartbeat: %w", err))
		return
	}
	s.buf = data[:0]
	reply := s.prefix + "." + strconv.Itoa(a.local) + "." + strconv.FormatUint(seq, 10)
	sentAt := time.Now()
	if err := s.nc.PublishRequest(a.subject, reply, data); err != nil {
		r.failed(sentAt, fmt.Errorf("publish heartbeat: %w", err))
		return
	}
	a.inflight, a.sentAt = seq, sentAt
	r.sent(sentAt)
}

// onReply handles a heartbeat response.
func (s *shard) onReply(m *nats.Msg) {
	now := time.Now()
	r := s.r
	tail := m.Subject[len(s.prefix)+1:]
	dot := strings.IndexByte(tail, '.')
	local, err1 := strconv.Atoi(tail[:max(dot, 0)])
	seq, err2 := strconv.ParseUint(tail[dot+1:], 10, 64)
	if dot < 0 || err1 != nil || err2 != nil || local < 0 || local >= len(s.agents) {
		r.late.Add(1)
		return
	}
	a := s.agents[local]
	a.mu.Lock()
	if seq == 0 || seq != a.inflight {
		a.mu.Unlock()
		r.late.Add(1)
		return
	}
	sentAt := a.sentAt
	a.inflight = 0
	resp, err := decodeResponse(m)
	if err != nil {
		a.mu.Unlock()
		r.failed(sentAt, err)
		return
	}
	o := a.apply(r, resp, now)
	a.mu.Unlock()
	r.answered(sentAt, now, o)
	if r.inWindow(sentAt) {
		s.mu.Lock()
		s.rtts = append(s.rtts, rttSample{at: sentAt.Sub(r.winStart), rtt: now.Sub(sentAt)})
		s.mu.Unlock()
	}
}

// onSignal applies a job signal to its agent.
func (s *shard) onSignal(m *nats.Msg) {
	r := s.r
	// sharetree.v1.node.<node>.signal
	parts := strings.Split(m.Subject, ".")
	if len(parts) < 2 {
		return
	}
	a := s.byNode[parts[len(parts)-2]]
	sig := &pb.JobSignal{}
	if a == nil || proto.Unmarshal(m.Data, sig) != nil {
		r.badSignals.Add(1)
		return
	}
	if a.signal(r, sig, time.Now()) {
		r.signals.Add(1)
	} else {
		r.badSignals.Add(1)
	}
}

// inflight counts the agents awaiting a response.
func (s *shard) inflight() int {
	n := 0
	for _, a := range s.agents {
		a.mu.Lock()
		if a.inflight != 0 {
			n++
		}
		a.mu.Unlock()
	}
	return n
}

// abandon counts the heartbeats still in flight as failed (unanswered).
func (s *shard) abandon() {
	for _, a := range s.agents {
		a.mu.Lock()
		if a.inflight != 0 {
			a.inflight = 0
			s.r.timedOut(a.sentAt)
		}
		a.mu.Unlock()
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
