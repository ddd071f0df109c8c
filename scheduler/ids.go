package scheduler

// PoolID names a pool; it is unique within its tree.
type PoolID string

// OperationID names an operation; it is unique within the cluster.
type OperationID string

// NodeID names an exec node.
type NodeID string

// RootID is the name under which the tree's root is reported.
const RootID = "<Root>"
