package treeconf

import (
	"maps"

	"github.com/sharetree/sharetree/subjects"
)

// state is the whole configuration as read from the bucket up to one
// revision, decoded. States are copied on write (with, without): a
// treeState or poolState reachable from one state is never changed.
type state struct {
	// rev is the last bucket revision the state includes.
	rev uint64
	// cluster is the decoded cluster key; clusterRev is its revision (0
	// when the key does not exist).
	cluster    Cluster
	clusterRev uint64
	clusterRaw []byte
	clusterErr error
	// trees by name; a tree with pools but no tree key has exists false.
	trees map[string]*treeState
	// ignored are keys that are not configuration keys, sorted.
	ignored []string
}

// treeState is one tree: its key and its pools.
type treeState struct {
	name   string
	exists bool
	tree   Tree
	rev    uint64
	raw    []byte
	// err is why the tree's document does not decode.
	err   error
	pools map[string]*poolState
}

// poolState is one pool's key.
type poolState struct {
	pool Pool
	rev  uint64
	raw  []byte
	err  error
}

func newState() *state { return &state{trees: map[string]*treeState{}} }

// put records a key's value at rev (decoding it).
func (s *state) put(key string, value []byte, rev uint64) {
	s.rev = max(s.rev, rev)
	k, err := subjects.ParseConfigKey(key)
	if err != nil {
		s.ignored = insertSorted(s.ignored, key)
		return
	}
	switch k.Kind {
	case subjects.ConfigKeyCluster:
		s.clusterRaw, s.clusterRev = value, rev
		s.cluster, s.clusterErr = decodeCluster(value)
	case subjects.ConfigKeyTree:
		t := s.treeForWrite(k.Tree)
		t.exists, t.rev, t.raw = true, rev, value
		t.tree, t.err = DecodeTree(k.Tree, value)
	case subjects.ConfigKeyPool:
		t := s.treeForWrite(k.Tree)
		p := &poolState{rev: rev, raw: value}
		p.pool, p.err = DecodePool(k.Tree, k.Pool, value)
		t.pools[k.Pool] = p
	}
}

// del records a key's deletion at rev.
func (s *state) del(key string, rev uint64) {
	s.rev = max(s.rev, rev)
	k, err := subjects.ParseConfigKey(key)
	if err != nil {
		return
	}
	switch k.Kind {
	case subjects.ConfigKeyCluster:
		s.cluster, s.clusterRev, s.clusterRaw, s.clusterErr = Cluster{}, 0, nil, nil
	case subjects.ConfigKeyTree:
		if t, ok := s.trees[k.Tree]; ok {
			t.exists, t.tree, t.rev, t.raw, t.err = false, Tree{}, 0, nil, nil
			s.dropIfEmpty(k.Tree)
		}
	case subjects.ConfigKeyPool:
		if t, ok := s.trees[k.Tree]; ok {
			delete(t.pools, k.Pool)
			s.dropIfEmpty(k.Tree)
		}
	}
}

// treeForWrite returns the tree's state for an in-place change (used while
// the state is being built, before anyone else sees it).
func (s *state) treeForWrite(name string) *treeState {
	t, ok := s.trees[name]
	if !ok {
		t = &treeState{name: name, pools: map[string]*poolState{}}
		s.trees[name] = t
	}
	return t
}

func (s *state) dropIfEmpty(name string) {
	if t := s.trees[name]; t != nil && !t.exists && len(t.pools) == 0 {
		delete(s.trees, name)
	}
}

// tree returns an existing tree.
func (s *state) tree(name string) (*treeState, bool) {
	t, ok := s.trees[name]
	if !ok || !t.exists {
		return nil, false
	}
	return t, true
}

// treeNames returns the names of the existing trees, sorted.
func (s *state) treeNames() []string {
	var out []string
	for _, name := range sortedKeys(s.trees) {
		if s.trees[name].exists {
			out = append(out, name)
		}
	}
	return out
}

// copyTop returns a copy of the state sharing its trees.
func (s *state) copyTop() *state {
	c := *s
	c.trees = maps.Clone(s.trees)
	return &c
}

// copyTree returns a copy of one tree's state (its pool map copied).
func (t *treeState) copyTree() *treeState {
	c := *t
	c.pools = maps.Clone(t.pools)
	return &c
}

// withTree returns a state where the tree's document is tree.
func (s *state) withTree(tree Tree) *state {
	c := s.copyTop()
	var t *treeState
	if old, ok := s.trees[tree.Name]; ok {
		t = old.copyTree()
	} else {
		t = &treeState{name: tree.Name, pools: map[string]*poolState{}}
	}
	t.exists, t.tree, t.err = true, tree, nil
	c.trees[tree.Name] = t
	return c
}

// withoutTree returns a state without the tree's key (its pools stay).
func (s *state) withoutTree(name string) *state {
	c := s.copyTop()
	if old, ok := s.trees[name]; ok {
		t := old.copyTree()
		t.exists, t.tree, t.err = false, Tree{}, nil
		c.trees[name] = t
		c.dropIfEmpty(name)
	}
	return c
}

// withPool returns a state where the pool's document is pool.
func (s *state) withPool(tree string, pool Pool) *state {
	c := s.copyTop()
	var t *treeState
	if old, ok := s.trees[tree]; ok {
		t = old.copyTree()
	} else {
		t = &treeState{name: tree, pools: map[string]*poolState{}}
	}
	p := &poolState{pool: pool}
	if old, ok := t.pools[pool.Name()]; ok {
		p.rev = old.rev
	}
	t.pools[pool.Name()] = p
	c.trees[tree] = t
	return c
}

// withoutPool returns a state without the pool.
func (s *state) withoutPool(tree, pool string) *state {
	c := s.copyTop()
	if old, ok := s.trees[tree]; ok {
		t := old.copyTree()
		delete(t.pools, pool)
		c.trees[tree] = t
		c.dropIfEmpty(tree)
	}
	return c
}

// withCluster returns a state with the cluster attributes.
func (s *state) withCluster(cl Cluster) *state {
	c := s.copyTop()
	c.cluster, c.clusterErr = cl, nil
	return c
}

func insertSorted(list []string, s string) []string {
	for i, x := range list {
		if x == s {
			return list
		}
		if x > s {
			return append(list[:i], append([]string{s}, list[i:]...)...)
		}
	}
	return append(list, s)
}
