package demo

import (
	_ "embed"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/scheduler"
)

//go:embed trees.yaml
var extrasYAML []byte

// demoTrees is the demo's configuration: the seed apply file's trees with
// the demo's additions (trees.yaml) on top. For a tree in both, the
// additions' tree configuration replaces the seed's, which must not set a
// key the additions set differently or leave out, and the additions' pools
// follow the seed's; pool names must not repeat.
func demoTrees(seedName string, seed []byte) (*scenario.TreesFile, error) {
	base, err := scenario.ParseTrees(seedName, seed)
	if err != nil {
		return nil, err
	}
	extras, err := scenario.ParseTrees("demo trees", extrasYAML)
	if err != nil {
		return nil, err
	}
	for _, x := range extras.Trees {
		i := slices.IndexFunc(base.Trees, func(t scenario.TreeSpec) bool { return t.Name == x.Name })
		if i < 0 {
			base.Trees = append(base.Trees, x)
			continue
		}
		t := &base.Trees[i]
		seedDoc := scenario.EncodeTreeDoc(t.Doc)
		extraDoc := scenario.EncodeTreeDoc(x.Doc)
		for _, k := range slices.Sorted(maps.Keys(seedDoc)) {
			if !reflect.DeepEqual(seedDoc[k], extraDoc[k]) {
				return nil, fmt.Errorf("%w: tree %s: %s sets %s to %v, the demo's additions to %v", ErrConfig, x.Name, seedName, k, seedDoc[k], extraDoc[k])
			}
		}
		t.Config, t.Doc = x.Config, x.Doc
		for j, p := range x.Pools {
			if slices.ContainsFunc(t.Pools, func(q scheduler.PoolConfig) bool { return q.Name == p.Name }) {
				return nil, fmt.Errorf("%w: tree %s: pool %s is in %s and in the demo's additions", ErrConfig, x.Name, p.Name, seedName)
			}
			t.Pools = append(t.Pools, p)
			t.PoolDocs = append(t.PoolDocs, x.PoolDocs[j])
		}
		maps.Copy(t.Volumes, x.Volumes)
	}
	return base, nil
}
