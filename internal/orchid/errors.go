package orchid

import (
	"context"
	"errors"
	"strings"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/internal/client"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// Errors of the orchid; each is wrapped with the name that was not found.
var (
	// ErrUnknownPool: the tree has no such pool.
	ErrUnknownPool = errors.New("orchid: unknown pool")
	// ErrUnknownOperation: no such operation (in the tree, or at all).
	ErrUnknownOperation = errors.New("orchid: unknown operation")
	// ErrUnknownAttribute: no element has an attribute of that name (or
	// the value has no such field).
	ErrUnknownAttribute = errors.New("orchid: unknown attribute")
	// ErrAttributeNotSet: the attribute exists but does not apply to this
	// element (an integral attribute of a pool that is not integral, a
	// pending reason of a running operation).
	ErrAttributeNotSet = errors.New("orchid: attribute not set")
)

// ErrorProto maps an error of an orchid query to the wire's typed Error:
// unknown trees, pools, operations and unset attributes are NOT_FOUND,
// unknown attributes and malformed requests INVALID_ARGUMENT, a scheduler
// that does not answer in time UNAVAILABLE. A refusal read over NATS (a
// *client.APIError) keeps the Error it carries.
func ErrorProto(err error) *pb.Error {
	var ae *client.APIError
	if errors.As(err, &ae) && ae.Err != nil {
		return ae.Err
	}
	msg := err.Error()
	for _, p := range []string{"orchid: ", "actors: ", "subjects: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	e := &pb.Error{Code: pb.ErrorCode_ERROR_CODE_INTERNAL, Message: msg}
	switch {
	case errors.Is(err, actors.ErrUnknownTree):
		e.Code, e.Field = pb.ErrorCode_ERROR_CODE_NOT_FOUND, "tree"
	case errors.Is(err, ErrUnknownPool):
		e.Code, e.Field = pb.ErrorCode_ERROR_CODE_NOT_FOUND, "pool"
	case errors.Is(err, ErrUnknownOperation):
		e.Code, e.Field = pb.ErrorCode_ERROR_CODE_NOT_FOUND, "operation_id"
	case errors.Is(err, ErrAttributeNotSet):
		e.Code, e.Field = pb.ErrorCode_ERROR_CODE_NOT_FOUND, "attribute"
	case errors.Is(err, ErrUnknownAttribute):
		e.Code, e.Field = pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "attribute"
	case errors.Is(err, subjects.ErrInvalidSubject), errors.Is(err, subjects.ErrInvalidToken):
		e.Code = pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT
	case errors.Is(err, actors.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		e.Code = pb.ErrorCode_ERROR_CODE_UNAVAILABLE
	}
	return e
}
