package treeconf

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
)

func TestTreeAndPoolRoundTrip(t *testing.T) {
	tree, err := DecodeTree("physical", []byte(`{main_resource: gpu, nodes_filter: "gpu&!(spot)", max_ephemeral_pools_per_user: 2,
pool_config_presets: {capped: {resource_limits: {gpu: 8}}}, fair_share_preemption_timeout: 1m}`))
	if err != nil {
		t.Fatal(err)
	}
	data, err := tree.JSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"fair_share_starvation_timeout":"1m0s","main_resource":"gpu","max_ephemeral_pool_per_user":2,"node_tag_filter":"gpu & !spot","pool_config_presets":{"capped":{"resource_limits":{"gpu":8}}}}`
	if string(data) != want {
		t.Errorf("canonical tree\n got %s\nwant %s", data, want)
	}
	back, err := DecodeTree("physical", data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tree, back); diff != "" {
		t.Errorf("tree round trip (-want +got):\n%s", diff)
	}
	f, err := back.NodeFilter()
	if err != nil || !f.Match([]string{"gpu"}) || f.Match([]string{"gpu", "spot"}) {
		t.Errorf("node filter %q: %v", f, err)
	}
	pool, err := DecodePool("physical", "research$alice", []byte(`{parent: research, weight: 2, offloading_settings: {cloud: {share: 0.5}}}`))
	if err != nil {
		t.Fatal(err)
	}
	pdata, _ := pool.JSON()
	pback, err := DecodePool("physical", "research$alice", pdata)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(pool, pback); diff != "" {
		t.Errorf("pool round trip (-want +got):\n%s", diff)
	}
	if pool.Name() != "research$alice" || pool.Parent() != "research" {
		t.Errorf("name %q parent %q", pool.Name(), pool.Parent())
	}
}

func TestEphemeralPool(t *testing.T) {
	e := newEnv(t)
	e.applyBase(t)
	if _, err := e.admin.SetPool(ctx(t), "cloud", "research", Replace([]byte(`{create_ephemeral_subpools: true,
ephemeral_subpool_config: {mode: fifo, max_running_operation_count: 1, max_operation_count: 4, resource_limits: {cpu: 8}}}`), 0)); err != nil {
		t.Fatal(err)
	}
	snap, err := e.store.Load(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	cloud, _ := snap.Tree("cloud")
	got, err := cloud.EphemeralPool("research", "alice")
	if err != nil {
		t.Fatal(err)
	}
	one, four := 1, 4
	want := scheduler.PoolConfig{Name: "research$alice", Parent: "research", Mode: scheduler.ModeFIFO,
		MaxRunningOperationCount: &one, MaxOperationCount: &four, ResourceLimits: scheduler.PartialResources{}.With(scheduler.CPU, 8)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ephemeral pool (-want +got):\n%s", diff)
	}
	if root, _ := cloud.EphemeralPool("", "bob"); root.Name != "bob" || root.Parent != "" {
		t.Errorf("ephemeral pool in the root = %+v", root)
	}
	if _, err := cloud.EphemeralPool("nope", "bob"); err == nil {
		t.Errorf("ephemeral pool under a missing parent accepted")
	}
	if n := len(cloud.PoolConfigs()); n != 1 || !cloud.Filter.Match([]string{"cloud"}) || cloud.Filter.Match(nil) {
		t.Errorf("cloud: %d pools, filter %q", n, cloud.Filter)
	}
}
