package wire

import (
	"errors"
	"fmt"
)

// ErrBadRequestID is wrapped by ValidateRequestID's errors.
var ErrBadRequestID = errors.New("bad request id")

// MaxRequestIDLen bounds a submission's request id
// (StartOperationRequest.request_id).
const MaxRequestIDLen = 128

// ValidateRequestID checks a non-empty request id: at most MaxRequestIDLen
// letters, digits, '-', '_', '.' or ':' (a UUID, a hash, a job name with a
// date).
func ValidateRequestID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty", ErrBadRequestID)
	}
	if len(id) > MaxRequestIDLen {
		return fmt.Errorf("%w: %d characters, more than %d", ErrBadRequestID, len(id), MaxRequestIDLen)
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return fmt.Errorf("%w: %q: character %q at %d is not a letter, digit, '-', '_', '.' or ':'", ErrBadRequestID, id, c, i)
		}
	}
	return nil
}
