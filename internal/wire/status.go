package wire

import (
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
