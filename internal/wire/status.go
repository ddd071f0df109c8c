package wire

import (
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"google.golang.org/protobuf/proto"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// StatusCode maps a typed error code to the HTTP-like code every sharetree
// micro service puts in its Nats-Service-Error-Code header.
func StatusCode(c pb.ErrorCode) int {
	switch c {
	case pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, pb.ErrorCode_ERROR_CODE_NODE_MISMATCH:
		return 400
	case pb.ErrorCode_ERROR_CODE_PERMISSION_DENIED:
		return 403
	case pb.ErrorCode_ERROR_CODE_NOT_FOUND:
		return 404
	case pb.ErrorCode_ERROR_CODE_ALREADY_EXISTS, pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION,
		pb.ErrorCode_ERROR_CODE_STALE_HEARTBEAT, pb.ErrorCode_ERROR_CODE_CONFLICT:
		return 409
	case pb.ErrorCode_ERROR_CODE_LIMIT_EXCEEDED:
		return 429
	case pb.ErrorCode_ERROR_CODE_UNAVAILABLE:
		return 503
	}
	return 500
}

// ErrorHeader is the micro error header of a typed error, for a reply
// published directly on a request's reply subject (its body is the Error).
func ErrorHeader(e *pb.Error) nats.Header {
	return nats.Header{
		micro.ErrorHeader:     []string{e.GetMessage()},
		micro.ErrorCodeHeader: []string{strconv.Itoa(StatusCode(e.GetCode()))},
	}
}

// RespondError answers a micro request with a typed error while its handler
// runs: the micro error headers and the Error as the body.
func RespondError(req micro.Request, e *pb.Error) error {
	data, err := proto.Marshal(e)
	if err != nil {
		return err
	}
	return req.Error(strconv.Itoa(StatusCode(e.GetCode())), e.GetMessage(), data)
}

// ReplyHeadroom is what a reply leaves of the server's max payload for
// its subject and headers: a reply's body may be at most
// MaxReplyBytes(nc).
const ReplyHeadroom = 4 << 10

// smallReply is a body size every NATS server carries (their max payload
// is 1 MiB by default; none is configured below this plus ReplyHeadroom):
// PublishReply checks only larger bodies against the connection's max
// payload, because reading it takes the connection's lock, and every
// heartbeat reply of a busy scheduler would then take that lock once more.
const smallReply = 32 << 10

// MaxReplyBytes is the largest reply body PublishReply sends on nc.
func MaxReplyBytes(nc *nats.Conn) int { return int(nc.MaxPayload()) - ReplyHeadroom }

// PublishReply publishes the answer to a micro request on its reply subject
// directly, for a reply sent after the handler has returned (micro.Request's
// Respond and Error may not be called then): msg as given, or, when e is
// set, the Error as the body with the micro error headers (ErrorHeader) in
// place of msg's data and header. A body larger than MaxReplyBytes, which
// NATS would refuse (the requester would only time out), is replaced by a
// LIMIT_EXCEEDED Error that says so. Nothing is published when msg.Subject
// is empty (the requester asked for no reply).
func PublishReply(nc *nats.Conn, msg *nats.Msg, e *pb.Error) error {
	if msg.Subject == "" {
		return nil
	}
	if e == nil && len(msg.Data) > smallReply {
		if limit := MaxReplyBytes(nc); len(msg.Data) > limit {
			e = &pb.Error{Code: pb.ErrorCode_ERROR_CODE_LIMIT_EXCEEDED, Message: fmt.Sprintf(
				"the reply is %d bytes, more than the %d a message may carry on this NATS server (its max_payload less %d for headers): ask for less",
				len(msg.Data), limit, ReplyHeadroom)}
		}
	}
	if e != nil {
		data, err := proto.Marshal(e)
		if err != nil {
			return err
		}
		msg.Data, msg.Header = data, ErrorHeader(e)
	}
	return nc.PublishMsg(msg)
}
