package subjects

import (
	"errors"
	"fmt"
	"strings"
)

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
func NodeKey(node string) (string, error) {
	if err := ValidateToken("node id", node); err != nil {
		return "", err
	}
	return nodePrefix + "." + escapeKey(node), nil
}

// ParseNodeKey returns the node id of a key NodeKey wrote.
func ParseNodeKey(key string) (string, error) {
	if i := strings.IndexByte(key, '$'); i >= 0 {
		return "", fmt.Errorf("%w: %q has '$' at byte %d; an id's '$' is written '=' in a key", ErrInvalidNodeKey, key, i)
	}
	t := strings.Split(key, ".")
	if len(t) != 2 || t[0] != nodePrefix {
		return "", fmt.Errorf("%w: %q is not %s.<node id>", ErrInvalidNodeKey, key, nodePrefix)
	}
	node := unescapeKey(t[1])
	if err := ValidateToken("node id", node); err != nil {
		return "", fmt.Errorf("%w: %q: %w", ErrInvalidNodeKey, key, err)
	}
	return node, nil
}
