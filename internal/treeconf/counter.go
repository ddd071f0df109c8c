package treeconf

// OperationCounter is the hook through which the scheduler tells the
// configuration service about live operations, so that a pool or tree that
// still has operations is not removed. The scheduler supplies it; it must
// be safe for concurrent use and fast (it is called while a write is
// validated).
type OperationCounter interface {
	// PoolOperationCount returns the number of operations (running and
	// pending) in the pool and its subtree, ephemeral sub-pools included;
	// pool "" counts the whole tree.
	PoolOperationCount(tree, pool string) int
}

// NoOperations is the OperationCounter of a configuration without a
// scheduler: every count is 0.
type NoOperations struct{}

// PoolOperationCount returns 0.
func (NoOperations) PoolOperationCount(string, string) int { return 0 }
