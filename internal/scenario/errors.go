package scenario

import (
	"errors"
	"strings"
)

// ErrInvalidScenario is wrapped by every parse and validation error of a
// scenario (every *Error unwraps to it), so callers can tell a bad file from a
// failure to read it with errors.Is.
var ErrInvalidScenario = errors.New("scenario: invalid scenario")

// Error is a problem with a scenario file: the file, the path to the key at
// fault and the reason.
type Error struct {
	// File is the file name given to Parse or ParseFile.
	File string
	// Path locates the key, e.g. "pools[2].integral_guarantees.guarantee_type"
	// or "steps[1].set.pools.PoolA.weight"; "" for problems with the whole
	// file (syntax errors, an empty document).
	Path string
	// Msg is the reason, usually starting with the YAML line ("line 12: ...").
	Msg string
}

// Error returns "FILE: PATH: MSG", or "FILE: MSG" when Path is empty.
func (e *Error) Error() string {
	if e.Path == "" {
		return e.File + ": " + e.Msg
	}
	return e.File + ": " + e.Path + ": " + e.Msg
}

// Unwrap returns ErrInvalidScenario.
func (e *Error) Unwrap() error { return ErrInvalidScenario }

// causeText returns err's message without the leading text of the sentinel
// it wraps ("scheduler: invalid configuration: pool ..." becomes
// "pool ..."), so messages do not repeat the package prefix.
func causeText(err, sentinel error) string {
	return strings.TrimPrefix(err.Error(), sentinel.Error()+": ")
}
