package subjects

import (
	"fmt"
	"strings"
)

// The live pool-tree configuration's subject space. Names occupy fixed
// token positions and each kind of request has its own token count, so no
// tree or pool name, however it is spelled ("get", "pool", "apply"), can
// make one kind of subject look like another:
//
//	sharetree.v1.config.<verb>                         4 tokens: trees, apply, get, set (cluster)
//	sharetree.v1.tree.<tree>.<verb>                    5 tokens: create, get, set, remove, pools
//	sharetree.v1.tree.<tree>.pool.<pool>.<verb>        7 tokens: create, get, set, remove

// ConfigVerb is a request about the whole configuration.
type ConfigVerb string

// The requests about the whole configuration.
const (
	// ConfigTrees lists the trees.
	ConfigTrees ConfigVerb = "trees"
	// ConfigApply applies a trees document.
	ConfigApply ConfigVerb = "apply"
	// ConfigGet reads the cluster attributes (default_tree).
	ConfigGet ConfigVerb = "get"
	// ConfigSet changes the cluster attributes.
	ConfigSet ConfigVerb = "set"
)

// ConfigVerbs lists every ConfigVerb, in a fixed order.
var ConfigVerbs = []ConfigVerb{ConfigTrees, ConfigApply, ConfigGet, ConfigSet}

// TreeVerb is a request about one tree.
type TreeVerb string

// The requests about one tree.
const (
	TreeCreate TreeVerb = "create"
	TreeGet    TreeVerb = "get"
	TreeSet    TreeVerb = "set"
	TreeRemove TreeVerb = "remove"
	// TreePools lists the tree's pools.
	TreePools TreeVerb = "pools"
)

// TreeVerbs lists every TreeVerb, in a fixed order.
var TreeVerbs = []TreeVerb{TreeCreate, TreeGet, TreeSet, TreeRemove, TreePools}

// PoolVerb is a request about one pool.
type PoolVerb string

// The requests about one pool.
const (
	PoolCreate PoolVerb = "create"
	PoolGet    PoolVerb = "get"
	PoolSet    PoolVerb = "set"
	PoolRemove PoolVerb = "remove"
)

// PoolVerbs lists every PoolVerb, in a fixed order.
var PoolVerbs = []PoolVerb{PoolCreate, PoolGet, PoolSet, PoolRemove}

func member[T comparable](v T, all []T) bool {
	for _, w := range all {
		if v == w {
			return true
		}
	}
	return false
}

// Config is the subject of a request about the whole configuration.
func Config(verb ConfigVerb) (string, error) {
	if !member(verb, ConfigVerbs) {
		return "", fmt.Errorf("%w: config verb %q is not one of %v", ErrInvalidToken, verb, ConfigVerbs)
	}
	return join(Prefix, "config", string(verb)), nil
}

// ConfigTree is the subject of a request about one tree.
func ConfigTree(tree string, verb TreeVerb) (string, error) {
	if err := ValidateToken("tree name", tree); err != nil {
		return "", err
	}
	if !member(verb, TreeVerbs) {
		return "", fmt.Errorf("%w: tree verb %q is not one of %v", ErrInvalidToken, verb, TreeVerbs)
	}
	return join(Prefix, "tree", tree, string(verb)), nil
}

// ConfigTreeAll matches one verb for every tree (the service endpoint).
func ConfigTreeAll(verb TreeVerb) string { return join(Prefix, "tree", "*", string(verb)) }

// ParseConfigTree returns the tree and verb of a tree request subject.
func ParseConfigTree(subject string) (string, TreeVerb, error) {
	t := strings.Split(subject, ".")
	if len(t) != 5 || join(t[0], t[1]) != Prefix || t[2] != "tree" {
		return "", "", fmt.Errorf("%w: %q is not %s.tree.<tree>.<verb>", ErrInvalidSubject, subject, Prefix)
	}
	if err := ValidateToken("tree name", t[3]); err != nil {
		return "", "", fmt.Errorf("%w: in %q: %w", ErrInvalidSubject, subject, err)
	}
	v := TreeVerb(t[4])
	if !member(v, TreeVerbs) {
		return "", "", fmt.Errorf("%w: in %q: verb %q is not one of %v", ErrInvalidSubject, subject, t[4], TreeVerbs)
	}
	return t[3], v, nil
}

// ConfigPool is the subject of a request about one pool.
func ConfigPool(tree, pool string, verb PoolVerb) (string, error) {
	if err := ValidateToken("tree name", tree); err != nil {
		return "", err
	}
	if err := ValidateToken("pool name", pool); err != nil {
		return "", err
	}
	if !member(verb, PoolVerbs) {
		return "", fmt.Errorf("%w: pool verb %q is not one of %v", ErrInvalidToken, verb, PoolVerbs)
	}
	return join(Prefix, "tree", tree, "pool", pool, string(verb)), nil
}

// ConfigPoolAll matches one verb for every pool of every tree (the service
// endpoint).
func ConfigPoolAll(verb PoolVerb) string {
	return join(Prefix, "tree", "*", "pool", "*", string(verb))
}

// ParseConfigPool returns the tree, pool and verb of a pool request subject.
func ParseConfigPool(subject string) (string, string, PoolVerb, error) {
	t := strings.Split(subject, ".")
	if len(t) != 7 || join(t[0], t[1]) != Prefix || t[2] != "tree" || t[4] != "pool" {
		return "", "", "", fmt.Errorf("%w: %q is not %s.tree.<tree>.pool.<pool>.<verb>", ErrInvalidSubject, subject, Prefix)
	}
	if err := ValidateToken("tree name", t[3]); err != nil {
		return "", "", "", fmt.Errorf("%w: in %q: %w", ErrInvalidSubject, subject, err)
	}
	if err := ValidateToken("pool name", t[5]); err != nil {
		return "", "", "", fmt.Errorf("%w: in %q: %w", ErrInvalidSubject, subject, err)
	}
	v := PoolVerb(t[6])
	if !member(v, PoolVerbs) {
		return "", "", "", fmt.Errorf("%w: in %q: verb %q is not one of %v", ErrInvalidSubject, subject, t[6], PoolVerbs)
	}
	return t[3], t[5], v, nil
}
