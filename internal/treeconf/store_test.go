package treeconf

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

func TestConflictBetweenTwoWriters(t *testing.T) {
	e := newEnv(t)
	e.applyBase(t)
	other := e.second(t)
	cur, err := e.admin.GetPool(ctx(t), "physical", "burst")
	if err != nil {
		t.Fatal(err)
	}
	// Both read revision cur.Revision; the second writer wins, the first
	// loses its compare-and-set.
	if _, err := other.SetPool(ctx(t), "physical", "burst", Replace([]byte(`{weight: 2}`), cur.Revision)); err != nil {
		t.Fatal(err)
	}
	_, err = e.admin.SetPool(ctx(t), "physical", "burst", Replace([]byte(`{weight: 3}`), cur.Revision))
	var ce *ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, ErrConflict) {
		t.Fatalf("error = %v, want a *ConflictError", err)
	}
	if ce.Key != "pool.physical.burst" || ce.Expected != cur.Revision || ce.Actual <= cur.Revision {
		t.Errorf("conflict = %+v, want key pool.physical.burst, expected %d, actual above it", ce, cur.Revision)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("expected revision %d, it is at revision %d", cur.Revision, ce.Actual)) {
		t.Errorf("message %q does not name both revisions", err)
	}
	got, _ := e.admin.GetPool(ctx(t), "physical", "burst")
	if string(got.Value) != `{"weight":2}` {
		t.Errorf("stored %s, want the winner's document", got.Value)
	}
	// The store itself refuses a stale revision the same way.
	_, err = e.store.Update(ctx(t), poolKey("physical", "burst"), []byte(`{}`), cur.Revision)
	if !errors.As(err, &ce) || ce.Actual != got.Revision {
		t.Errorf("store update with a stale revision: %v", err)
	}
	if err := e.store.Delete(ctx(t), poolKey("physical", "burst"), cur.Revision); !errors.Is(err, ErrConflict) {
		t.Errorf("store delete with a stale revision: %v", err)
	}
	if _, err := e.admin.RemovePool(ctx(t), "physical", "relaxed", 1); !errors.Is(err, ErrConflict) {
		t.Errorf("remove with a stale revision: %v", err)
	}
}

// TestRacingPatchesLoseNothing has writers in two "processes" (two Admins
// over two connections, so only compare-and-set separates them) each set a
// different key of the same pool at once.
func TestRacingPatchesLoseNothing(t *testing.T) {
	e := newEnv(t)
	e.applyBase(t)
	admins := []*Admin{e.admin, e.second(t), e.second(t)}
	patches := map[string]string{
		"resource_limits.cpu": "11", "resource_limits.memory": "12", "resource_limits.gpu": "13",
		"resource_limits.user_slots": "14", "resource_limits.network": "15", "weight": "2.5",
		"fair_share_starvation_tolerance": "0.5", "fair_share_starvation_timeout": "45s",
		"enable_aggressive_starvation": "true", "forbid_immediate_operations": "true",
		"enable_lightweight_operations": "true", "fifo_sort_parameters": "[start_time]",
		"non_preemptible_resource_usage_threshold": "{cpu: 1}", "max_operation_count": "40",
		"create_ephemeral_subpools": "true", "ephemeral_subpool_config": "{max_running_operation_count: 2, max_operation_count: 5}",
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(patches))
	i := 0
	for _, k := range sortedKeys(patches) {
		a := admins[i%len(admins)]
		i++
		wg.Add(1)
		go func(k, v string) {
			defer wg.Done()
			if _, err := a.SetPool(ctx(t), "physical", "burst", Set(k, v)); err != nil {
				errs <- fmt.Errorf("set %s: %w", k, err)
			}
		}(k, patches[k])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := e.admin.GetPool(ctx(t), "physical", "burst")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(got.Value, &doc); err != nil {
		t.Fatal(err)
	}
	limits, _ := doc["resource_limits"].(map[string]any)
	if len(limits) != 5 {
		t.Errorf("resource_limits lost a patch: %v", limits)
	}
	for _, k := range sortedKeys(patches) {
		top, _, _ := strings.Cut(k, ".")
		if _, ok := doc[top]; !ok {
			t.Errorf("patch of %s was lost: %s", k, got.Value)
		}
	}
	if _, ok := doc["integral_guarantees"]; !ok {
		t.Errorf("the pool's own integral_guarantees were lost: %s", got.Value)
	}
}

func TestWatchEmitsChanges(t *testing.T) {
	e := newEnv(t)
	e.applyBase(t)
	snaps, err := e.store.Watch(ctx(t), WithCoalescing(20*time.Millisecond, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var first Snapshot
	testutil.WaitFor(t, 5*time.Second, "the first snapshot", func() bool {
		select {
		case first = <-snaps:
			return true
		default:
			return false
		}
	})
	if len(first.Trees) != 2 || first.DefaultTree != "physical" {
		t.Fatalf("first snapshot: %d trees, default %q", len(first.Trees), first.DefaultTree)
	}
	phys, _ := first.Tree("physical")
	var names []string
	for _, p := range phys.Pools {
		names = append(names, p.Pool.Name())
	}
	want := []string{"burst", "project-root", "project-adhoc", "project-backup", "project-batch", "relaxed"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("pool order, parents first (-want +got):\n%s", diff)
	}
	if rel, _ := phys.Pool("relaxed"); rel.Effective.MaxRunningOperationCount == nil || *rel.Effective.MaxRunningOperationCount != 2 {
		t.Errorf("preset small not applied to relaxed's effective config: %+v", rel.Effective)
	}
	if _, err := e.admin.SetPool(ctx(t), "physical", "project-batch", Set("weight", "20")); err != nil {
		t.Fatal(err)
	}
	var last Snapshot
	testutil.WaitFor(t, 5*time.Second, "a snapshot with the new weight", func() bool {
		select {
		case last = <-snaps:
		default:
			return false
		}
		tr, _ := last.Tree("physical")
		p, ok := tr.Pool("project-batch")
		return ok && p.Effective.Weight != nil && *p.Effective.Weight == 20
	})
	if last.Revision <= first.Revision {
		t.Errorf("revision did not advance: %d then %d", first.Revision, last.Revision)
	}
	// A burst of writes is coalesced: after it settles, the latest snapshot
	// has every write.
	for i := range 10 {
		if _, err := e.admin.SetPool(ctx(t), "cloud", "research", Set("max_operation_count", fmt.Sprint(20+i))); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 5*time.Second, "the burst's last write", func() bool {
		select {
		case last = <-snaps:
		default:
			return false
		}
		tr, _ := last.Tree("cloud")
		p, _ := tr.Pool("research")
		return p.Effective.MaxOperationCount != nil && *p.Effective.MaxOperationCount == 29
	})
}

func TestWatchReportsInvalidTree(t *testing.T) {
	e := newEnv(t)
	e.applyBase(t)
	// A writer around the service breaks the guarantee rule.
	if _, err := e.store.Update(ctx(t), poolKey("physical", "project-backup"), []byte(`{"parent":"project-root","strong_guarantee_resources":{"cpu":50}}`), mustRev(t, e, "physical", "project-backup")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Create(ctx(t), subjects.ConfigKey{Kind: subjects.ConfigKeyPool, Tree: "ghost", Pool: "p"}, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	snap, err := e.store.Load(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	phys, _ := snap.Tree("physical")
	var re *RuleError
	if !errors.As(phys.Err, &re) || re.Rule != RuleGuaranteeSum {
		t.Errorf("tree error = %v, want guarantee_sum", phys.Err)
	}
	if cloud, _ := snap.Tree("cloud"); cloud.Err != nil {
		t.Errorf("a valid tree reports %v", cloud.Err)
	}
	if len(snap.Problems) != 1 || !strings.Contains(snap.Problems[0], `"ghost"`) {
		t.Errorf("problems = %q", snap.Problems)
	}
}

func mustRev(t *testing.T, e *env, tree, pool string) uint64 {
	t.Helper()
	en, err := e.admin.GetPool(ctx(t), tree, pool)
	if err != nil {
		t.Fatal(err)
	}
	return en.Revision
}

func TestApplyCreateUpdatePruneDryRun(t *testing.T) {
	e := newEnv(t)
	res, err := e.admin.Apply(ctx(t), []byte(baseTrees), false, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied || len(res.Changes) != 10 {
		t.Fatalf("dry run: applied %v, %d changes; want false, 10", res.Applied, len(res.Changes))
	}
	if len(e.dump(t)) != 0 {
		t.Fatalf("dry run wrote")
	}
	res, err = e.admin.Apply(ctx(t), []byte(baseTrees), false, false)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, d := range res.Changes {
		actions = append(actions, d.Action.String()+" "+d.Key.String())
		if d.Revision == 0 {
			t.Errorf("%s %s: no revision", d.Action, d.Key)
		}
	}
	// Pools are written parents first, siblings by name, whatever the
	// document's order.
	want := []string{"create tree.physical", "create pool.physical.burst", "create pool.physical.project-root",
		"create pool.physical.project-adhoc", "create pool.physical.project-backup", "create pool.physical.project-batch",
		"create pool.physical.relaxed", "create tree.cloud", "create pool.cloud.research", "create cluster"}
	if diff := cmp.Diff(want, actions); diff != "" {
		t.Errorf("apply order (-want +got):\n%s", diff)
	}
	// Applying the same document again changes nothing.
	res, err = e.admin.Apply(ctx(t), []byte(baseTrees), true, false)
	if err != nil || len(res.Changes) != 0 {
		t.Fatalf("re-apply: %d changes, %v", len(res.Changes), err)
	}
	// An update, a new pool (listed before its parent: apply writes the
	// parent first), and (with prune) removals.
	next := `
version: 1
default_tree: cloud
trees:
  - name: cloud
    config: {node_tag_filter: "cloud | spot"}
    pools:
      - {name: research-ml, parent: research}
      - {name: research, weight: 3}
`
	res, err = e.admin.Apply(ctx(t), []byte(next), false, true)
	if err != nil {
		t.Fatal(err)
	}
	got := diffSummary(res)
	want = []string{"update tree.cloud [node_tag_filter]", "update pool.cloud.research [weight]", "create pool.cloud.research-ml [parent]",
		"update cluster [default_tree]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("apply without prune (-want +got):\n%s", diff)
	}
	res, err = e.admin.Apply(ctx(t), []byte(next), true, true)
	if err != nil {
		t.Fatal(err)
	}
	got = diffSummary(res)
	want = append(want, "remove pool.physical.project-adhoc [parent strong_guarantee_resources]",
		"remove pool.physical.project-backup [max_running_operation_count parent strong_guarantee_resources]",
		"remove pool.physical.project-batch [max_running_operation_count parent strong_guarantee_resources weight]",
		"remove pool.physical.burst [integral_guarantees]", "remove pool.physical.project-root [max_running_operation_count strong_guarantee_resources]",
		"remove pool.physical.relaxed [config_presets integral_guarantees]", "remove tree.physical [main_resource pool_config_presets]")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dry run with prune (-want +got):\n%s", diff)
	}
	e.ops.set("physical", "project-batch", 1)
	_, err = e.admin.Apply(ctx(t), []byte(next), true, false)
	wantRule(t, err, RuleError{Rule: RulePoolHasOperations, Tree: "physical", Pool: "project-batch"}, "1 operations")
	e.ops.set("physical", "project-batch", 0)
	if _, err = e.admin.Apply(ctx(t), []byte(next), true, false); err != nil {
		t.Fatal(err)
	}
	snap, err := e.store.Load(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Trees) != 1 || snap.DefaultTree != "cloud" || len(snap.Trees[0].Pools) != 2 || snap.Trees[0].Err != nil {
		t.Errorf("after prune: %+v", snap)
	}
	// A document that breaks a rule writes nothing.
	before := e.dump(t)
	_, err = e.admin.Apply(ctx(t), []byte("version: 1\ntrees: [{name: cloud, pools: [{name: research, weight: -1}]}]"), false, false)
	wantRule(t, err, RuleError{Rule: RuleWeight, Tree: "cloud", Pool: "research", Key: "weight"}, "got -1")
	_, err = e.admin.Apply(ctx(t), []byte("version: 1\ntrees: [{name: cloud, pools: [{name: research, accumulated_resource_volume: {cpu: 1}}]}]"), false, false)
	wantRule(t, err, RuleError{Rule: RuleInvalidValue, Tree: "cloud", Pool: "research", Key: "trees[0].pools[0].accumulated_resource_volume"}, "state")
	if diff := cmp.Diff(before, e.dump(t)); diff != "" {
		t.Errorf("refused apply wrote (-before +after):\n%s", diff)
	}
}

func diffSummary(res ApplyResult) []string {
	var out []string
	for _, d := range res.Changes {
		out = append(out, fmt.Sprintf("%s %s %v", d.Action, d.Key, d.Keys))
	}
	return out
}

func TestSeedOnlyOnEmptyBucket(t *testing.T) {
	e := newEnv(t)
	file, err := scenario.ParseTrees("trees.yaml", []byte(baseTrees))
	if err != nil {
		t.Fatal(err)
	}
	wrote, err := e.store.Seed(ctx(t), file)
	if err != nil || !wrote {
		t.Fatalf("seed of an empty bucket: wrote %v, %v", wrote, err)
	}
	snap, err := e.store.Load(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Trees) != 2 || snap.DefaultTree != "physical" || snap.ClusterRevision == 0 {
		t.Fatalf("seeded snapshot: %+v", snap)
	}
	phys, _ := snap.Tree("physical")
	if phys.Err != nil || len(phys.Pools) != 6 {
		t.Fatalf("physical: %v, %d pools", phys.Err, len(phys.Pools))
	}
	// The effective configs equal the trees file's (presets applied the same
	// way on both paths).
	for _, spec := range file.Trees[0].Pools {
		p, _ := phys.Pool(string(spec.Name))
		if diff := cmp.Diff(spec, p.Effective); diff != "" {
			t.Errorf("pool %s (-file +stored):\n%s", spec.Name, diff)
		}
	}
	before := e.dump(t)
	other, _ := scenario.ParseTrees("other.yaml", []byte("version: 1\ntrees: [{name: other}]"))
	wrote, err = e.store.Seed(ctx(t), other)
	if err != nil || wrote {
		t.Fatalf("seed of a seeded bucket: wrote %v, %v", wrote, err)
	}
	if diff := cmp.Diff(before, e.dump(t)); diff != "" {
		t.Errorf("second seed changed the bucket:\n%s", diff)
	}
}

func TestSeedFinishesAnInterruptedSeed(t *testing.T) {
	e := newEnv(t)
	// A seed that stopped after the first tree key.
	rev, err := e.store.Create(ctx(t), treeKey("cloud"), []byte(`{"node_tag_filter":"cloud"}`))
	if err != nil {
		t.Fatal(err)
	}
	file, _ := scenario.ParseTrees("trees.yaml", []byte(baseTrees))
	wrote, err := e.store.Seed(ctx(t), file)
	if err != nil || !wrote {
		t.Fatalf("wrote %v, %v", wrote, err)
	}
	got := e.dump(t)
	if got["pool.cloud.research"] != `{}` || got["cluster"] != `{"default_tree":"physical"}` || len(got) != 10 {
		t.Errorf("bucket after finishing the seed: %v", got)
	}
	if en, _ := e.store.Get(ctx(t), treeKey("cloud")); en.Revision != rev {
		t.Errorf("the existing key was rewritten: revision %d, was %d", en.Revision, rev)
	}
}

func TestSeedDefaultTreesBuiltInCode(t *testing.T) {
	e := newEnv(t)
	w := 2.0
	file := &scenario.TreesFile{DefaultTree: "default", Trees: []scenario.TreeSpec{{
		Name: "default", Config: scheduler.DefaultTreeConfig(),
		Pools: []scheduler.PoolConfig{{Name: "a", Weight: &w}},
	}}}
	if _, err := e.store.Seed(ctx(t), file); err != nil {
		t.Fatal(err)
	}
	got := e.dump(t)
	want := map[string]string{"cluster": `{"default_tree":"default"}`, "tree.default": `{}`, "pool.default.a": `{"weight":2}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	bad := &scenario.TreesFile{DefaultTree: "t", Trees: []scenario.TreeSpec{{Name: "t", Config: scheduler.DefaultTreeConfig(),
		Pools: []scheduler.PoolConfig{{Name: "a", StrongGuaranteeResources: scheduler.PartialResources{}.With(scheduler.GPU, 1)}}}}}
	e2 := newEnv(t)
	_, err := e2.store.Seed(ctx(t), bad)
	wantRule(t, err, RuleError{Rule: RuleMainResource, Tree: "t", Pool: "a", Key: "strong_guarantee_resources"})
	if len(e2.dump(t)) != 0 {
		t.Errorf("an invalid seed wrote")
	}
}

func TestTreeLifecycle(t *testing.T) {
	e := newEnv(t)
	// The first tree becomes the default tree.
	if _, err := e.admin.CreateTree(ctx(t), "a", []byte(`{node_tag_filter: "ssd & !gpu"}`)); err != nil {
		t.Fatal(err)
	}
	cl, _ := e.admin.GetCluster(ctx(t))
	if string(cl.Value) != `{"default_tree":"a"}` {
		t.Errorf("cluster = %s", cl.Value)
	}
	if _, err := e.admin.CreateTree(ctx(t), "b", nil); err != nil {
		t.Fatal(err)
	}
	_, err := e.admin.RemoveTree(ctx(t), "a", 0)
	wantRule(t, err, RuleError{Rule: RuleDefaultTree, Tree: "a"}, "default_tree")
	if _, err := e.admin.SetCluster(ctx(t), Set("default_tree", "b")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.RemoveTree(ctx(t), "a", 0); err != nil {
		t.Fatal(err)
	}
	// The last tree may go; default_tree is cleared with it.
	if _, err := e.admin.RemoveTree(ctx(t), "b", 0); err != nil {
		t.Fatal(err)
	}
	if got := e.dump(t); len(got) != 1 || got["cluster"] != `{}` {
		t.Errorf("bucket = %v", got)
	}
	// Setting a key to null removes it; a nested key is patched in place.
	if _, err := e.admin.CreateTree(ctx(t), "c", []byte(`{integral_guarantees: {smooth_period: 30s}, max_operation_count: 100000}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.admin.SetTree(ctx(t), "c", Set("max_operation_count", "null")); err != nil {
		t.Fatal(err)
	}
	en, err := e.admin.SetTree(ctx(t), "c", Set("integral_guarantees.pool_capacity_saturation_period", "1h"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"integral_guarantees":{"pool_capacity_saturation_period":"1h0m0s","smooth_period":"30s"}}`; string(en.Value) != want {
		t.Errorf("tree c = %s, want %s", en.Value, want)
	}
	same, err := e.admin.SetTree(ctx(t), "c", Set("integral_guarantees.smooth_period", "30s"))
	if err != nil || same.Revision != en.Revision {
		t.Errorf("a write that changes nothing wrote revision %d (was %d): %v", same.Revision, en.Revision, err)
	}
}
