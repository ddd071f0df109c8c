package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/wire"
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
	// maxBytes is the largest event published in one message (the NATS
	// server's max_payload less room for headers); a larger fair-share
	// snapshot goes in parts (see splitSnapshot).
	maxBytes int
	ch       chan pendingEvent
	seq      atomic.Uint64
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
	// lastWarn is when a loss was last logged as a warning, in nanoseconds
	// since base plus eventLossWarnEvery (so that the first loss is
	// logged): at most one a minute, the counters say the rest. Measured on
	// the monotonic clock, so that a step of the wall clock neither floods
	// the log nor silences it.
	lastWarn atomic.Int64
	base     time.Time
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
	s := &eventSink{epoch: epoch, ch: make(chan pendingEvent, buffer), leading: leading, logger: logger, maxBytes: wire.MaxReplyBytes(nc), base: time.Now()}
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
// the totals so far.
func (s *eventSink) warn(msg string, args ...any) {
	now := int64(time.Since(s.base) + eventLossWarnEvery)
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
	if len(data) > s.maxBytes {
		parts, err := splitSnapshot(pe.ev, s.maxBytes)
		if err != nil {
			s.failed(pe.subject, err)
			return
		}
		for _, part := range parts {
			s.publishData(pe.subject, part.ev.GetId(), part.data)
		}
		return
	}
	s.publishData(pe.subject, pe.ev.GetId(), data)
}

func (s *eventSink) publishData(subject, id string, data []byte) {
	msg := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, id)
	if _, err := s.js.PublishMsgAsync(msg); err != nil {
		s.failed(subject, err)
	}
}

// encodedEvent is an event and its encoding.
type encodedEvent struct {
	ev   *pb.Event
	data []byte
}

// errEventTooLarge: an event does not fit in one message and cannot be
// split.
var errEventTooLarge = errors.New("events: event larger than a message")

// splitSnapshot splits a fair-share snapshot event whose encoding exceeds
// maxBytes into parts of consecutive pools, each encoded within maxBytes
// (see pb.FairShareSnapshot.part); any other event is errEventTooLarge.
func splitSnapshot(ev *pb.Event, maxBytes int) ([]encodedEvent, error) {
	snap := ev.GetFairShare()
	pools := snap.GetPools()
	if snap == nil || len(pools) < 2 {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", errEventTooLarge, proto.Size(ev), maxBytes)
	}
	// Start from as many parts as the size asks for, with room to spare,
	// and split finer until every part fits.
	for n := proto.Size(ev)/maxBytes + 2; n <= len(pools); n = n*3/2 + 1 {
		out, ok := encodeParts(ev, snap, n, maxBytes)
		if ok {
			return out, nil
		}
	}
	return nil, fmt.Errorf("%w: a fair-share snapshot whose single pools do not fit in %d bytes", errEventTooLarge, maxBytes)
}

// encodeParts encodes ev's snapshot as n parts of consecutive pools, and
// reports whether each fits in maxBytes.
func encodeParts(ev *pb.Event, snap *pb.FairShareSnapshot, n, maxBytes int) ([]encodedEvent, bool) {
	pools := snap.GetPools()
	out := make([]encodedEvent, 0, n)
	for k := range n {
		lo, hi := k*len(pools)/n, (k+1)*len(pools)/n
		part := &pb.Event{Id: fmt.Sprintf("%s.%d", ev.GetId(), k+1), Time: ev.GetTime(), Tree: ev.GetTree(), LeaderEpoch: ev.GetLeaderEpoch(),
			Kind: &pb.Event_FairShare{FairShare: &pb.FairShareSnapshot{Pools: pools[lo:hi], OperationCount: snap.GetOperationCount(),
				NodeCount: snap.GetNodeCount(), Reviving: snap.GetReviving(), Part: int32(k + 1), Parts: int32(n)}}}
		data, err := proto.Marshal(part)
		if err != nil || len(data) > maxBytes {
			return nil, false
		}
		out = append(out, encodedEvent{ev: part, data: data})
	}
	return out, true
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
