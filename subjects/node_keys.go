package subjects

import "errors"

// ErrInvalidNodeKey is wrapped by every error about a node-roster key of
// SchedulerBucket that does not have the expected shape.
var ErrInvalidNodeKey = errors.New("subjects: invalid node roster key")

// nodePrefix starts the keys of SchedulerBucket that make the node
// roster:
//
//	node.<node id>          a node that may run jobs (a NodeRosterEntry)
//
// A node id's '$' is written '=' as in ConfigBucket's keys.
const nodePrefix = "node"

// NodeKeys matches the keys of every node of the roster (a key-value
// filter).
const NodeKeys = nodePrefix + ".*"

// NodeKey is the key of a node in the roster.
func NodeKey(node string) (string, error) { return prefixedKey(nodePrefix, "node id", node) }

// ParseNodeKey returns the node id of a key NodeKey wrote.
func ParseNodeKey(key string) (string, error) {
	return parsePrefixedKey(key, nodePrefix, "node id", ErrInvalidNodeKey)
}
