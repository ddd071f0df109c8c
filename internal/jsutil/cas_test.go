package jsutil

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

func TestCASConflict(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"key exists", fmt.Errorf("create: %w", jetstream.ErrKeyExists), true},
		{"revision mismatch", jetstream.ErrKeyRevisionMismatch, true},
		{"wrong last sequence", &jetstream.APIError{ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence}, true},
		{"wrong last sequence, replicated", fmt.Errorf("x: %w", &jetstream.APIError{ErrorCode: jetstream.JSErrCodeStreamWrongLastSequenceConstant}), true},
		{"other API error", &jetstream.APIError{ErrorCode: jetstream.JSErrCodeStreamNotFound}, false},
		{"key not found", jetstream.ErrKeyNotFound, false},
		{"other", errors.New("timeout"), false},
	} {
		if got := CASConflict(c.err); got != c.want {
			t.Errorf("%s: CASConflict = %v, want %v", c.name, got, c.want)
		}
	}
}
