package wire

import (
	"time"

	"github.com/nats-io/nats.go"

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
