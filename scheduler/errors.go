package scheduler

import "errors"

// Sentinel errors. Every error the package returns wraps one of these, so
// callers can use errors.Is instead of matching on text.
var (
	// ErrUnknownResource: a resource name that is not one of user_slots, cpu,
	// gpu, memory, network.
	ErrUnknownResource = errors.New("scheduler: unknown resource")
	// ErrInvalidConfig: a tree or pool configuration that breaks a rule.
	ErrInvalidConfig = errors.New("scheduler: invalid configuration")
	// ErrInvalidTree: the pools do not form a tree (missing parent, cycle,
	// duplicate name).
	ErrInvalidTree = errors.New("scheduler: invalid pool tree")
	// ErrInvalidOperation: an operation whose pool, weight or resources are
	// not acceptable.
	ErrInvalidOperation = errors.New("scheduler: invalid operation")
	// ErrTooManyOperations: max_operation_count of the operation's pool or of
	// an ancestor is reached.
	ErrTooManyOperations = errors.New("scheduler: too many operations")
	// ErrUnknownOperation: an operation id that is not registered.
	ErrUnknownOperation = errors.New("scheduler: unknown operation")
	// ErrDuplicateOperation: an operation id that is already registered.
	ErrDuplicateOperation = errors.New("scheduler: duplicate operation")
	// ErrInvalidState: a previous state the engine cannot continue from (an
	// operation listed twice).
	ErrInvalidState = errors.New("scheduler: invalid previous state")
)
