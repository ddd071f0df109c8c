package scenario

import (
	"errors"
	"strings"
)

// ErrInvalidScenario is wrapped by every parse and validation error of a
// scenario (every *Error unwraps to it), so callers can tell a bad file from a
// failure to read it with errors.Is.
var ErrInvalidScenario = errors.New("scenario: invalid scenario")

// ErrUnknownKey is wrapped (besides ErrInvalidScenario) by the error for a
// key the format does not define at that place.
var ErrUnknownKey = errors.New("scenario: unknown key")

// ErrDuplicateName is wrapped (besides ErrInvalidScenario) by the error for
// a tree or pool name given twice.
var ErrDuplicateName = errors.New("scenario: duplicate name")

// ErrUnknownPreset is wrapped by ResolvePool's error for a config_presets
// entry the tree's pool_config_presets does not define.
var ErrUnknownPreset = errors.New("scenario: unknown pool config preset")

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
	// Kind, when not nil, is a more specific sentinel the error also wraps
	// (ErrUnknownKey, ErrDuplicateName).
	Kind error
}

// Error returns "FILE: PATH: MSG", or "FILE: MSG" when Path is empty.
func (e *Error) Error() string {
	if e.Path == "" {
		return e.File + ": " + e.Msg
	}
	return e.File + ": " + e.Path + ": " + e.Msg
}

// Unwrap returns ErrInvalidScenario and, when set, Kind.
func (e *Error) Unwrap() []error {
	if e.Kind != nil {
		return []error{ErrInvalidScenario, e.Kind}
	}
	return []error{ErrInvalidScenario}
}

// causeText returns err's message without the leading text of the sentinel
// it wraps ("scheduler: invalid configuration: pool ..." becomes
// "pool ..."), so messages do not repeat the package prefix.
func causeText(err, sentinel error) string {
	return strings.TrimPrefix(err.Error(), sentinel.Error()+": ")
}
