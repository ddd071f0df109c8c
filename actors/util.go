package actors

import (
	"fmt"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

func pbErr(code pb.ErrorCode, field, format string, args ...any) *pb.Error {
	return &pb.Error{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}
