package wire

import (
	"testing"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

func TestStatusCode(t *testing.T) {
	want := map[pb.ErrorCode]int{
		pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT:    400,
		pb.ErrorCode_ERROR_CODE_NODE_MISMATCH:       400,
		pb.ErrorCode_ERROR_CODE_NOT_FOUND:           404,
		pb.ErrorCode_ERROR_CODE_ALREADY_EXISTS:      409,
		pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION: 409,
		pb.ErrorCode_ERROR_CODE_STALE_HEARTBEAT:     409,
		pb.ErrorCode_ERROR_CODE_CONFLICT:            409,
		pb.ErrorCode_ERROR_CODE_LIMIT_EXCEEDED:      429,
		pb.ErrorCode_ERROR_CODE_UNAVAILABLE:         503,
		pb.ErrorCode_ERROR_CODE_INTERNAL:            500,
	}
	for code, status := range want {
		if got := StatusCode(code); got != status {
			t.Errorf("StatusCode(%s) = %d, want %d", code, got, status)
		}
	}
}
