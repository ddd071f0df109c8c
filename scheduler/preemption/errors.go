package preemption

import "errors"

// Sentinel errors. Every error the package returns wraps one of these, so
// callers can use errors.Is instead of matching on text.
var (
	// ErrInvalidView: a view whose fields break their contract (NaN or
	// negative amounts, duplicate ids, a job of an operation the view does
	// not describe, a pool chain naming an undescribed pool, thresholds out
	// of range).
	ErrInvalidView = errors.New("preemption: invalid view")
	// ErrInvalidSource: adapter inputs that cannot be turned into a view
	// (no fair-share result, no placement, an invalid tree configuration).
	ErrInvalidSource = errors.New("preemption: invalid source")
)
