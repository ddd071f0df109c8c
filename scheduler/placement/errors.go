package placement

import "errors"

// Sentinel errors. Every error the package returns wraps one of these.
var (
	// ErrInvalidPools: the pools given to SetPools do not form a valid tree
	// (empty or reserved name, duplicate, unknown parent, cycle, a pool under
	// a fifo pool, bad mode or limits).
	ErrInvalidPools = errors.New("placement: invalid pool tree")
	// ErrPoolInUse: SetPools would remove a pool that still holds
	// operations.
	ErrPoolInUse = errors.New("placement: pool holds operations")
	// ErrUnknownPool: an operation names a pool that does not exist.
	ErrUnknownPool = errors.New("placement: unknown pool")
	// ErrDuplicateOperation: an operation id that is already registered.
	ErrDuplicateOperation = errors.New("placement: duplicate operation")
	// ErrInvalidOperation: an operation whose id, weight, limits or tasks
	// are not acceptable.
	ErrInvalidOperation = errors.New("placement: invalid operation")
)

// ErrUnknownOperation: an update names an operation that is not registered.
var ErrUnknownOperation = errors.New("placement: unknown operation")
