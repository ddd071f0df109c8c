package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

type pendingEvent struct {
	subject string
	ev      *pb.Event
}

// eventSink publishes events to the events stream from one goroutine with
// asynchronous JetStream publishes. Publish never blocks: when the buffer is
// full the event is dropped and counted.
type eventSink struct {
	js    jetstream.JetStream
	epoch uint64
	ch    chan pendingEvent
	seq   atomic.Uint64
	// queued counts the events accepted by Publish and not yet handed to
	// an asynchronous publish (see settled).
	queued atomic.Int64
	// drops counts events not published: the buffer was full, the
	// tree's name made no subject, or the server was not the leader. fails counts publishes that failed: the
	// event did not encode, the publish was refused, or its acknowledgement
	// was an error (the stream refused it) or never came.
	drops atomic.Uint64
	fails atomic.Uint64
	// leading reports whether the server acts as the leader (see
	// leader.Lease.Valid); an event published while it does not is
	// dropped and counted: it may tell of a decision nobody received.
	leading func() bool
	logger  *slog.Logger
	// lastWarn is when (unix nanoseconds) a loss was last logged as a
	// warning: at most one a minute, the counters say the rest.
	lastWarn atomic.Int64
	wg       sync.WaitGroup
	once     sync.Once
}

const (
	// eventLossWarnEvery is the least time between two warnings of lost
	// events.
	eventLossWarnEvery = time.Minute
	// eventAckTimeout bounds the wait for an event publish's
	// acknowledgement; one that never comes is a failed publish.
	eventAckTimeout = 10 * time.Second
)

// newEventSink starts a sink publishing on nc through a JetStream context
// of its own (its asynchronous publishes' errors are the sink's).
func newEventSink(nc *nats.Conn, epoch uint64, buffer int, leading func() bool, logger *slog.Logger) (*eventSink, error) {
	s := &eventSink{epoch: epoch, ch: make(chan pendingEvent, buffer), leading: leading, logger: logger}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(eventAckTimeout),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, m *nats.Msg, err error) {
			s.failed(m.Subject, err)
		}))
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	s.js = js
	s.wg.Add(1)
	go s.run()
	return s, nil
}

// dropped counts an event not published and warns (rate-limited); where
// is the event's subject, or its tree when it has no subject.
func (s *eventSink) dropped(whereKey, where, why string) {
	s.drops.Add(1)
	s.warn("events dropped", whereKey, where, "why", why)
}

// failed counts a failed publish and warns (rate-limited).
func (s *eventSink) failed(subject string, err error) {
	s.fails.Add(1)
	s.warn("event publish failed", "subject", subject, "err", err)
}

// warn logs a loss of events at most once every eventLossWarnEvery, with
// the totals so far (wall time: it decides nothing but the log's pace).
func (s *eventSink) warn(msg string, args ...any) {
	now := time.Now().UnixNano()
	last := s.lastWarn.Load()
	if now-last < int64(eventLossWarnEvery) || !s.lastWarn.CompareAndSwap(last, now) {
		s.logger.Debug(msg, args...)
		return
	}
	s.logger.Warn(msg, append(args, "dropped_total", s.drops.Load(), "failed_total", s.fails.Load())...)
}

// Stats returns the events lost so far: dropped before publishing, and
// publishes that failed.
func (s *eventSink) stats() (dropped, failed uint64) { return s.drops.Load(), s.fails.Load() }

// Publish implements actors.EventSink.
func (s *eventSink) Publish(tree string, kind subjects.EventKind, ev *pb.Event) {
	subj, err := subjects.Events(tree, kind)
	if err != nil {
		s.dropped("tree", tree, err.Error())
		return
	}
	if !s.leading() {
		s.dropped("subject", subj, "this server is not the leader")
		return
	}
	ev.Id = fmt.Sprintf("%d-%d", s.epoch, s.seq.Add(1))
	ev.LeaderEpoch = s.epoch
	s.queued.Add(1)
	select {
	case s.ch <- pendingEvent{subject: subj, ev: ev}:
	default:
		s.queued.Add(-1)
		s.dropped("subject", subj, "the buffer is full (EventBuffer)")
	}
}

// settled reports whether every event accepted so far has been published
// and its publish answered (stored, or failed and counted).
func (s *eventSink) settled() bool {
	return s.queued.Load() == 0 && s.js.PublishAsyncPending() == 0
}

func (s *eventSink) run() {
	defer s.wg.Done()
	for pe := range s.ch {
		s.publish(pe)
		s.queued.Add(-1) // after the publish is pending (see settled)
	}
}

func (s *eventSink) publish(pe pendingEvent) {
	data, err := proto.Marshal(pe.ev)
	if err != nil {
		s.failed(pe.subject, err)
		return
	}
	msg := &nats.Msg{Subject: pe.subject, Data: data, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, pe.ev.GetId())
	if _, err := s.js.PublishMsgAsync(msg); err != nil {
		s.failed(pe.subject, err)
	}
}

// close publishes what is buffered and waits for the acks (bounded by ctx).
func (s *eventSink) close(ctx context.Context) {
	s.once.Do(func() { close(s.ch) })
	s.wg.Wait()
	select {
	case <-s.js.PublishAsyncComplete():
	case <-ctx.Done():
	}
}

// signalSink publishes job signals on the node's signal subject.
type signalSink struct {
	nc *nats.Conn
	// leading reports whether the server may send commands (see
	// leader.Lease.Valid); a signal it may not send is dropped.
	leading func() bool
	logger  *slog.Logger
}

// Signal implements actors.SignalSink.
func (s *signalSink) Signal(node string, sig *pb.JobSignal) {
	if !s.leading() {
		s.logger.Debug("job signal dropped: not the leader", "node", node)
		return
	}
	subj, err := subjects.NodeSignal(node)
	if err != nil {
		s.logger.Warn("job signal", "node", node, "err", err)
		return
	}
	data, err := proto.Marshal(sig)
	if err != nil {
		return
	}
	if err := s.nc.Publish(subj, data); err != nil {
		s.logger.Debug("job signal publish", "node", node, "err", err)
	}
}
