package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

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
	drops  atomic.Uint64
	fails  atomic.Uint64
	logger *slog.Logger
	wg     sync.WaitGroup
	once   sync.Once
}

func newEventSink(js jetstream.JetStream, epoch uint64, buffer int, logger *slog.Logger) *eventSink {
	s := &eventSink{js: js, epoch: epoch, ch: make(chan pendingEvent, buffer), logger: logger}
	s.wg.Add(1)
	go s.run()
	return s
}

// Publish implements actors.EventSink.
func (s *eventSink) Publish(tree string, kind subjects.EventKind, ev *pb.Event) {
	subj, err := subjects.Events(tree, kind)
	if err != nil {
		s.drops.Add(1)
		return
	}
	ev.Id = fmt.Sprintf("%d-%d", s.epoch, s.seq.Add(1))
	ev.LeaderEpoch = s.epoch
	s.queued.Add(1)
	select {
	case s.ch <- pendingEvent{subject: subj, ev: ev}:
	default:
		s.queued.Add(-1)
		s.drops.Add(1)
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
		s.fails.Add(1)
		return
	}
	msg := &nats.Msg{Subject: pe.subject, Data: data, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, pe.ev.GetId())
	if _, err := s.js.PublishMsgAsync(msg); err != nil {
		s.fails.Add(1)
		s.logger.Debug("event publish", "subject", pe.subject, "err", err)
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
	nc     *nats.Conn
	logger *slog.Logger
}

// Signal implements actors.SignalSink.
func (s *signalSink) Signal(node string, sig *pb.JobSignal) {
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
