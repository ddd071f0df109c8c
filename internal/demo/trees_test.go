package demo

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
)

func TestDemoTreesAddToTheSeedExample(t *testing.T) {
	seed, err := os.ReadFile("../../cmd/sharetree/examples/pool-trees.yaml")
	if err != nil {
		t.Fatal(err)
	}
	trees, err := demoTrees("pool-trees.yaml", seed)
	if err != nil {
		t.Fatal(err)
	}
	if len(trees.Trees) != 1 {
		t.Fatalf("%d trees, want 1", len(trees.Trees))
	}
	tr := trees.Trees[0]
	var names []scheduler.PoolID
	for _, p := range tr.Pools {
		names = append(names, p.Name)
	}
	want := []scheduler.PoolID{"project-root", "project-adhoc", "project-batch", "project-backup", "burst", "relaxed"}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("pools (-want +got):\n%s", d)
	}
	if len(tr.PoolDocs) != len(tr.Pools) {
		t.Errorf("%d pool documents for %d pools", len(tr.PoolDocs), len(tr.Pools))
	}
	// The seed's guarantees are kept; the demo's settings and volumes added.
	if g := tr.Pools[0].StrongGuaranteeResources.Values[scheduler.CPU]; g != 100 {
		t.Errorf("project-root guarantee = %g, want the seed's 100", g)
	}
	if tr.Config.MainResource != scheduler.CPU || tr.Config.FairShareUpdatePeriod.String() != "200ms" {
		t.Errorf("tree config: main resource %v, update period %v", tr.Config.MainResource, tr.Config.FairShareUpdatePeriod)
	}
	if v := tr.Volumes["burst"][scheduler.CPU]; v != 960 {
		t.Errorf("burst volume = %g, want 960", v)
	}
	if trees.DefaultTree != "physical" {
		t.Errorf("default tree %q", trees.DefaultTree)
	}
}

func TestDemoTreesRefuseAConflictingSeed(t *testing.T) {
	for name, tc := range map[string]struct{ seed, want string }{
		"main resource": {`
version: 1
trees:
  - name: physical
    config: {main_resource: gpu}
    pools: [{name: a}]
`, "main_resource"},
		"pool twice": {`
version: 1
trees:
  - name: physical
    config: {main_resource: cpu}
    pools: [{name: burst}]
`, "pool burst"},
	} {
		_, err := demoTrees("seed.yaml", []byte(tc.seed))
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "seed.yaml") {
			t.Errorf("%s: %v, want ErrConfig naming %q and the file", name, err, tc.want)
		}
	}
}
