package cfgerr

import (
	"errors"
	"fmt"
	"strings"
)

// FieldError is one bad field of a configuration.
type FieldError struct {
	// Sentinel is the configuration package's error the FieldError wraps.
	Sentinel error
	// Field is the field's path in the configuration ("Actors.HeartbeatPeriod").
	Field string
	// Reason says what is wrong ("must be positive, got 0s").
	Reason string
	// Cause is the error Reason was made of, if any (Wrap).
	Cause error
}

// New returns a *FieldError for field, wrapping sentinel.
func New(sentinel error, field, format string, args ...any) error {
	return &FieldError{Sentinel: sentinel, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Wrap returns a *FieldError for field whose reason is cause, wrapping
// both sentinel and cause.
func Wrap(sentinel error, field string, cause error) error {
	return &FieldError{Sentinel: sentinel, Field: field, Reason: cause.Error(), Cause: cause}
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%v: %s: %s", e.Sentinel, e.Field, e.Reason)
}

// Unwrap returns the sentinel, and the cause when there is one.
func (e *FieldError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Sentinel, e.Cause}
	}
	return []error{e.Sentinel}
}

// Base is the field without its last index ("Tags" of "Tags[1]").
func (e *FieldError) Base() string {
	if i := strings.LastIndexByte(e.Field, '['); i > 0 && strings.HasSuffix(e.Field, "]") {
		return e.Field[:i]
	}
	return e.Field
}

// Within returns err wrapped in sentinel, its field (when err holds a
// *FieldError) put under parent: a configuration embedding another's
// names the inner field by its path from the outer one.
func Within(sentinel error, parent string, err error) error {
	var fe *FieldError
	if !errors.As(err, &fe) {
		return fmt.Errorf("%w: %w", sentinel, err)
	}
	inner := *fe
	inner.Field = parent + "." + fe.Field
	return &nested{outer: sentinel, FieldError: &inner}
}

// nested is a FieldError of an embedded configuration: it wraps the outer
// configuration's sentinel as well as the inner one's.
type nested struct {
	outer error
	*FieldError
}

func (e *nested) Error() string { return fmt.Sprintf("%v: %v", e.outer, e.FieldError) }

// Unwrap returns both sentinels and the field error.
func (e *nested) Unwrap() []error { return []error{e.outer, e.FieldError} }

// Field returns err's *FieldError, if it holds one.
func Field(err error) (*FieldError, bool) {
	var fe *FieldError
	ok := errors.As(err, &fe)
	return fe, ok
}
