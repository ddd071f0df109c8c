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
func TreeStateKey(tree string) (string, error) { return prefixedKey(statePrefix, "tree name", tree) }

// ParseTreeStateKey returns the tree name of a key TreeStateKey wrote.
func ParseTreeStateKey(key string) (string, error) {
	return parsePrefixedKey(key, statePrefix, "tree name", ErrInvalidStateKey)
}

// prefixedKey is "<prefix>.<name>", with name a valid token (what it is
// names it in the error) whose '$' is written '='.
func prefixedKey(prefix, what, name string) (string, error) {
	if err := ValidateToken(what, name); err != nil {
		return "", err
	}
	return prefix + "." + escapeKey(name), nil
}

// parsePrefixedKey returns the name of a key prefixedKey wrote; any other
// key is an error wrapping sentinel.
func parsePrefixedKey(key, prefix, what string, sentinel error) (string, error) {
	if i := strings.IndexByte(key, '$'); i >= 0 {
		return "", fmt.Errorf("%w: %q has '$' at byte %d; a name's '$' is written '=' in a key", sentinel, key, i)
	}
	t := strings.Split(key, ".")
	if len(t) != 2 || t[0] != prefix {
		return "", fmt.Errorf("%w: %q is not %s.<%s>", sentinel, key, prefix, what)
	}
	name := unescapeKey(t[1])
	if err := ValidateToken(what, name); err != nil {
		return "", fmt.Errorf("%w: %q: %w", sentinel, key, err)
	}
	return name, nil
}
