package server_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

func treeSpecs(t *testing.T, doc string) ([]actors.TreeSpec, string) {
	t.Helper()
	f, err := scenario.ParseTrees("trees.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var out []actors.TreeSpec
	for _, tr := range f.Trees {
		out = append(out, actors.TreeSpec{Name: tr.Name, Config: tr.Config, Pools: tr.Pools})
	}
	return out, f.DefaultTree
}

func TestTreesAreReconfiguredLive(t *testing.T) {
	c := startCluster(t, 1, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4})
	ctx := context.Background()
	first := c.submit(t, simulated("narrow", 1000, 1, time.Hour))
	second := c.submit(t, simulated("narrow", 1000, 1, time.Hour))
	c.waitState(t, first, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)
	c.waitState(t, second, pb.OperationState_OPERATION_STATE_PENDING, 10*time.Second)
	testutil.WaitFor(t, 10*time.Second, "the first operation to fill the node", func() bool {
		st, err := c.client.Get(ctx, first)
		return err == nil && st.GetJobs().GetRunning() == 4
	})

	// narrow gets a second running slot, heavy is gone, extra is new, and
	// the update period changes: the pending operation starts, the running
	// one keeps its jobs.
	specs, def := treeSpecs(t, `
version: 1
trees:
  - name: physical
    config: {fair_share_update_period: 20ms}
    pools:
      - {name: light, weight: 1}
      - {name: narrow, max_running_operation_count: 2}
      - {name: extra, parent: narrow, weight: 2}
`)
	if err := c.srv.System().ApplyTrees(specs, def, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	c.waitState(t, second, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)
	st, err := c.client.Get(ctx, first)
	if err != nil || st.GetJobs().GetAborted() != 0 || st.GetJobs().GetFailed() != 0 || st.GetJobs().GetRunning() == 0 {
		t.Fatalf("running operation after the reconfiguration: jobs %v, %v; want its jobs kept", st.GetJobs(), err)
	}
	testutil.WaitFor(t, 10*time.Second, "the engine to run the new pools", func() bool {
		r := c.srv.System().Result("physical")
		if r == nil {
			return false
		}
		_, hasExtra := r.Element("extra")
		_, hasHeavy := r.Element("heavy")
		return hasExtra && !hasHeavy
	})
	if _, err := c.client.Submit(ctx, simulated("heavy", 1, 1, time.Second)); err == nil {
		t.Errorf("submission into the removed pool heavy succeeded")
	}
	id := c.submit(t, simulated("extra", 1, 1, time.Millisecond))
	// It waits for a running slot of narrow (2: first and second); both
	// go, so that nothing else competes for the cores it gets.
	for _, op := range []string{first, second} {
		if _, err := c.client.Abort(ctx, op, "room"); err != nil {
			t.Fatal(err)
		}
	}
	c.waitState(t, id, pb.OperationState_OPERATION_STATE_COMPLETED, 20*time.Second)

	// Removing a pool that holds an operation is refused; the tree keeps
	// its configuration.
	holder := c.submit(t, simulated("narrow", 1000, 1, time.Hour))
	c.waitState(t, holder, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)
	specs, def = treeSpecs(t, `
version: 1
trees:
  - name: physical
    pools:
      - {name: light}
`)
	err = c.srv.System().ApplyTrees(specs, def, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "narrow") {
		t.Errorf("removing a pool with an operation: %v, want a refusal naming narrow", err)
	}
	if r := c.srv.System().Result("physical"); r == nil {
		t.Fatal("no result")
	}
	if _, err := c.client.Submit(ctx, simulated("extra", 1, 1, time.Millisecond)); err != nil {
		t.Errorf("the refused configuration changed the tree: %v", err)
	}
}

// tagFilter matches nodes carrying one tag (or, empty, lacking every tag
// in not).
type tagFilter struct {
	tag string
	not []string
}

func (f tagFilter) Match(tags []string) bool {
	if f.tag != "" {
		return slices.Contains(tags, f.tag)
	}
	for _, n := range f.not {
		if slices.Contains(tags, n) {
			return false
		}
	}
	return true
}

func TestNodesJoinTheTreeTheirTagsSelect(t *testing.T) {
	c := startClusterTagged(t, 2, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4}, func(i int) []string {
		if i == 1 {
			return []string{"gpu"}
		}
		return nil
	})
	specs, def := treeSpecs(t, `
version: 1
default_tree: physical
trees:
  - name: physical
    pools:
      - {name: light}
      - {name: narrow}
  - name: gpu
    pools:
      - {name: training}
`)
	specs[0].NodeFilter = tagFilter{not: []string{"gpu"}}
	specs[1].NodeFilter = tagFilter{tag: "gpu"}
	if err := c.srv.System().ApplyTrees(specs, def, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "each tree to own one node", func() bool {
		p, g := c.srv.System().Result("physical"), c.srv.System().Result("gpu")
		return p != nil && g != nil && p.Total[scheduler.CPU] == 4 && g.Total[scheduler.CPU] == 4
	})
	ctx := context.Background()
	spec := simulated("training", 8, 1, 50*time.Millisecond)
	spec.PoolTrees = []string{"gpu"}
	id := c.submit(t, spec)
	c.waitState(t, id, pb.OperationState_OPERATION_STATE_COMPLETED, 20*time.Second)
	if got := c.agents[0].Stats().JobsStarted; got != 0 {
		t.Errorf("node-0 (not gpu) ran %d jobs of the gpu tree", got)
	}
	if _, err := c.client.Get(ctx, id); err != nil {
		t.Fatal(err)
	}
	// Both trees claim every node: nodes join none.
	specs[1].NodeFilter = nil
	specs[0].NodeFilter = nil
	if err := c.srv.System().ApplyTrees(specs, def, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "conflicting nodes to leave both trees", func() bool {
		p, g := c.srv.System().Result("physical"), c.srv.System().Result("gpu")
		return p.Total[scheduler.CPU] == 0 && g.Total[scheduler.CPU] == 0
	})
}
