package subjects

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidKey is wrapped by every error about a key of ConfigBucket that
// does not have one of the expected shapes.
var ErrInvalidKey = errors.New("subjects: invalid config key")

// Keys of ConfigBucket:
//
//	cluster                 the cluster attributes (default_tree)
//	tree.<tree>             one tree's configuration
//	pool.<tree>.<pool>      one pool's configuration
//
// JetStream key-value keys may not contain '$', which ephemeral pool names
// ("research$alice") and other names may: a name's '$' is written as '='
// in its key. Names are subject tokens, which never contain '=', so the
// mapping is one to one.
const (
	// ConfigClusterKey holds the cluster attributes.
	ConfigClusterKey = "cluster"
	configTreePrefix = "tree"
	configPoolPrefix = "pool"
)

// ConfigKeyKind says what a key of ConfigBucket holds.
type ConfigKeyKind int

const (
	// ConfigKeyCluster is ConfigClusterKey.
	ConfigKeyCluster ConfigKeyKind = iota
	// ConfigKeyTree is a tree's key.
	ConfigKeyTree
	// ConfigKeyPool is a pool's key.
	ConfigKeyPool
)

// String returns "cluster", "tree" or "pool".
func (k ConfigKeyKind) String() string {
	switch k {
	case ConfigKeyTree:
		return "tree"
	case ConfigKeyPool:
		return "pool"
	default:
		return "cluster"
	}
}

// ConfigKey is a parsed key of ConfigBucket.
type ConfigKey struct {
	Kind ConfigKeyKind
	// Tree is set for tree and pool keys, Pool for pool keys.
	Tree, Pool string
}

// String returns the key in the bucket.
func (k ConfigKey) String() string {
	switch k.Kind {
	case ConfigKeyTree:
		return configTreePrefix + "." + escapeKey(k.Tree)
	case ConfigKeyPool:
		return configPoolPrefix + "." + escapeKey(k.Tree) + "." + escapeKey(k.Pool)
	default:
		return ConfigClusterKey
	}
}

func escapeKey(name string) string    { return strings.ReplaceAll(name, "$", "=") }
func unescapeKey(token string) string { return strings.ReplaceAll(token, "=", "$") }

// ConfigTreeKey is the key of a tree's configuration.
func ConfigTreeKey(tree string) (string, error) {
	if err := ValidateToken("tree name", tree); err != nil {
		return "", err
	}
	return ConfigKey{Kind: ConfigKeyTree, Tree: tree}.String(), nil
}

// ConfigPoolKey is the key of a pool's configuration.
func ConfigPoolKey(tree, pool string) (string, error) {
	if err := ValidateToken("tree name", tree); err != nil {
		return "", err
	}
	if err := ValidateToken("pool name", pool); err != nil {
		return "", err
	}
	return ConfigKey{Kind: ConfigKeyPool, Tree: tree, Pool: pool}.String(), nil
}

// ConfigPoolKeys matches the keys of every pool of a tree (a key-value
// filter).
func ConfigPoolKeys(tree string) (string, error) {
	if err := ValidateToken("tree name", tree); err != nil {
		return "", err
	}
	return configPoolPrefix + "." + escapeKey(tree) + ".*", nil
}

// ParseConfigKey parses a key of ConfigBucket.
func ParseConfigKey(key string) (ConfigKey, error) {
	if key == ConfigClusterKey {
		return ConfigKey{Kind: ConfigKeyCluster}, nil
	}
	// A name's '$' is written '='; a key holding '$' itself is not one
	// ConfigKey.String writes, and would parse like its '=' spelling.
	if i := strings.IndexByte(key, '$'); i >= 0 {
		return ConfigKey{}, fmt.Errorf("%w: %q has '$' at byte %d; a name's '$' is written '=' in a key", ErrInvalidKey, key, i)
	}
	t := strings.Split(key, ".")
	bad := func(err error) (ConfigKey, error) {
		return ConfigKey{}, fmt.Errorf("%w: %q: %w", ErrInvalidKey, key, err)
	}
	switch {
	case len(t) == 2 && t[0] == configTreePrefix:
		k := ConfigKey{Kind: ConfigKeyTree, Tree: unescapeKey(t[1])}
		if err := ValidateToken("tree name", k.Tree); err != nil {
			return bad(err)
		}
		return k, nil
	case len(t) == 3 && t[0] == configPoolPrefix:
		k := ConfigKey{Kind: ConfigKeyPool, Tree: unescapeKey(t[1]), Pool: unescapeKey(t[2])}
		if err := ValidateToken("tree name", k.Tree); err != nil {
			return bad(err)
		}
		if err := ValidateToken("pool name", k.Pool); err != nil {
			return bad(err)
		}
		return k, nil
	}
	return ConfigKey{}, fmt.Errorf("%w: %q is not cluster, tree.<tree> or pool.<tree>.<pool>", ErrInvalidKey, key)
}
