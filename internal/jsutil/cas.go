package jsutil

import (
	"errors"

	"github.com/nats-io/nats.go/jetstream"
)

// CASConflict reports whether err is a compare-and-set write refused only
// because the key or subject moved on (another writer came first): a
// key-value Create over an existing key, an Update or a delete at a stale
// revision, or a publish whose expected last sequence was not the last
// (standalone and replicated streams answer with different codes).
func CASConflict(err error) bool {
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) &&
		(apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
