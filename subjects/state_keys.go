package subjects

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidStateKey is wrapped by every error about a tree-state key of
// SchedulerBucket that does not have the expected shape.
var ErrInvalidStateKey = errors.New("subjects: invalid tree state key")

// statePrefix starts the keys of SchedulerBucket that hold a pool tree's
// fair-share state:
//
//	state.<tree>            the tree's integral volumes (a TreeState)
//
// A tree name's '$' is written '=' as in ConfigBucket's keys.
const statePrefix = "state"

// TreeStateKeys matches the keys of every tree's state (a key-value
// filter).
const TreeStateKeys = statePrefix + ".*"

// TreeStateKey is the key of a tree's fair-share state in SchedulerBucket.
func TreeStateKey(tree string) (string, error) {
	if err := ValidateToken("tree name", tree); err != nil {
		return "", err
	}
	return statePrefix + "." + escapeKey(tree), nil
}

// ParseTreeStateKey returns the tree name of a key TreeStateKey wrote.
func ParseTreeStateKey(key string) (string, error) {
	if i := strings.IndexByte(key, '$'); i >= 0 {
		return "", fmt.Errorf("%w: %q has '$' at byte %d; a name's '$' is written '=' in a key", ErrInvalidStateKey, key, i)
	}
	t := strings.Split(key, ".")
	if len(t) != 2 || t[0] != statePrefix {
		return "", fmt.Errorf("%w: %q is not %s.<tree>", ErrInvalidStateKey, key, statePrefix)
	}
	tree := unescapeKey(t[1])
	if err := ValidateToken("tree name", tree); err != nil {
		return "", fmt.Errorf("%w: %q: %w", ErrInvalidStateKey, key, err)
	}
	return tree, nil
}
