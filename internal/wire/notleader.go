package wire

import (
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// NotLeaderDelay is how long a scheduler that is not the leader waits
// before it refuses a request on an endpoint every serving scheduler gets
// (no queue group): the caller takes the first answer, and the leader's,
// when there is one, comes first.
const NotLeaderDelay = 250 * time.Millisecond

// NotLeader is the refusal of a scheduler that is not the leader.
func NotLeader() *pb.Error {
	return &pb.Error{Code: pb.ErrorCode_ERROR_CODE_UNAVAILABLE,
		Message: "this scheduler is not the leader (its lease is lost or not renewed in time); try again"}
}

// RefuseLate answers a request, whose reply subject is reply, with
// NotLeader after NotLeaderDelay, on another goroutine (see PublishReply);
// nothing when reply is empty. done, when not nil, runs once it is sent.
func RefuseLate(nc *nats.Conn, reply string, done func()) {
	if reply == "" {
		return // nobody waits for an answer
	}
	time.AfterFunc(NotLeaderDelay, func() {
		_ = PublishReply(nc, &nats.Msg{Subject: reply}, NotLeader())
		if done != nil {
			done()
		}
	})
}

// Leader serves an endpoint from the leading scheduler only. Its
// endpoints have no queue group: NATS gives each message of a queue group
// to one member chosen at random, whether it can answer or not, and an old
// leader stopped with its subscriptions held (its lease run out, its
// successor serving) would swallow some of the requests until it woke or
// was cut off. Every scheduler serving gets each request instead; while
// Leading reports false, one refuses it late (RefuseLate), so that the
// leader's answer, the one the caller takes, comes first, and an old
// leader that wakes up acts on nothing.
type Leader struct {
	NC *nats.Conn
	// Leading reports whether this scheduler is the leader (nil: always).
	Leading func() bool
	// Refused, when not nil, runs for each refusal sent.
	Refused func()
}

// AddEndpoint adds endpoint name on subject to svc, handled by h while
// this scheduler leads.
func (l Leader) AddEndpoint(svc micro.Service, name, subject string, h micro.HandlerFunc) error {
	handler := h
	if l.Leading != nil {
		handler = func(req micro.Request) {
			if !l.Leading() {
				RefuseLate(l.NC, req.Reply(), l.Refused)
				return
			}
			h(req)
		}
	}
	return svc.AddEndpoint(name, handler, micro.WithEndpointSubject(subject), micro.WithEndpointQueueGroupDisabled())
}
