package server_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/treeconf"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// limitsTrees follows the operation-limits seed: research holds at most 3
// operations (its subpool counts toward it), each of its pools runs one at
// a time; light is a fifo pool with lightweight operations enabled; capped
// takes its running limit from a preset.
const limitsTrees = `
version: 1
trees:
  - name: physical
    config:
      fair_share_update_period: 50ms
      pool_config_presets: {single: {max_running_operation_count: 1}}
    pools:
      - {name: research, max_operation_count: 3, max_running_operation_count: 1}
      - {name: research-sub, parent: research}
      - {name: other}
      - {name: light, mode: fifo, enable_lightweight_operations: true, max_running_operation_count: 1}
      - {name: capped, config_presets: [single]}
`

// pendingAt returns the operation's pending reason in its tree (nil when it
// runs).
func pendingAt(t *testing.T, c *cluster, id string) *pb.PendingReason {
	t.Helper()
	st, err := c.client.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return st.GetTrees()[0].GetPendingReason()
}

func TestOperationLimitsFollowTheSeed(t *testing.T) {
	c := startClusterWith(t, limitsTrees, 1, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4}, nil)
	ctx := context.Background()
	long := func(pool string) *pb.OperationSpec { return simulated(pool, 100, 1, time.Hour) }

	// One running slot in research: the first runs, the others wait in
	// research's queue in submission order, the subpool's operation too
	// (it is counted on every ancestor).
	first := c.submit(t, long("research"))
	c.waitState(t, first, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)
	second := c.submit(t, long("research-sub"))
	third := c.submit(t, long("research"))
	for i, id := range []string{second, third} {
		c.waitState(t, id, pb.OperationState_OPERATION_STATE_PENDING, 10*time.Second)
		pr := pendingAt(t, c, id)
		if pr.GetPool() != "research" || pr.GetLimit() != "max_running_operation_count" || pr.GetValue() != 1 || pr.GetQueuePosition() != int64(i) {
			t.Errorf("pending reason of operation %d = %v, want research's max_running_operation_count 1 at position %d", i+2, pr, i)
		}
	}
	// Another pool is not held by research's limit.
	c.waitState(t, c.submit(t, long("other")), pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)

	// A fourth operation in research or its subpool: max_operation_count 3
	// is reached on research, and start_operation fails naming it.
	var apiErr *client.APIError
	for _, pool := range []string{"research", "research-sub"} {
		_, err := c.client.Submit(ctx, long(pool))
		if !errors.As(err, &apiErr) || apiErr.Code() != pb.ErrorCode_ERROR_CODE_LIMIT_EXCEEDED || !strings.Contains(err.Error(), "research") {
			t.Errorf("a fourth operation in %s: %v, want LIMIT_EXCEEDED naming research", pool, err)
		}
	}

	// Aborting a pending operation frees its place: the queue moves up and
	// a new operation fits under max_operation_count again.
	if _, err := c.client.Abort(ctx, second, "test"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the third operation to move up the queue", func() bool {
		pr := pendingAt(t, c, third)
		return pr != nil && pr.GetQueuePosition() == 0
	})
	fourth := c.submit(t, long("research-sub"))
	c.waitState(t, fourth, pb.OperationState_OPERATION_STATE_PENDING, 10*time.Second)
	if pr := pendingAt(t, c, fourth); pr.GetQueuePosition() != 1 {
		t.Errorf("the new operation waits at %d, want 1 (behind the third)", pr.GetQueuePosition())
	}
	// The running one leaving starts the queue's head, in order.
	if _, err := c.client.Abort(ctx, first, "test"); err != nil {
		t.Fatal(err)
	}
	c.waitState(t, third, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)
	if pr := pendingAt(t, c, fourth); pr.GetQueuePosition() != 0 {
		t.Errorf("after the head started the last one waits at %d, want 0", pr.GetQueuePosition())
	}
}

func TestLightweightOperationsAndPresetsLive(t *testing.T) {
	c := startClusterWith(t, limitsTrees, 1, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4}, nil)
	ctx := context.Background()
	// light allows one running operation, yet vanilla operations there are
	// lightweight: all three run.
	var light []string
	for range 3 {
		light = append(light, c.submit(t, simulated("light", 100, 1, time.Hour)))
	}
	for _, id := range light {
		st := c.waitState(t, id, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)
		if !st.GetTrees()[0].GetLightweight() {
			t.Errorf("operation %s is not lightweight", id)
		}
	}
	// Operations of another type use the running limit.
	heavy := func() string {
		s := simulated("light", 100, 1, time.Hour)
		s.Type = pb.OperationType_OPERATION_TYPE_MAP
		return c.submit(t, s)
	}
	m1, m2 := heavy(), heavy()
	if st := c.waitState(t, m1, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second); st.GetTrees()[0].GetLightweight() {
		t.Error("a map operation runs as lightweight")
	}
	c.waitState(t, m2, pb.OperationState_OPERATION_STATE_PENDING, 10*time.Second)

	// capped takes max_running_operation_count 1 from its preset.
	p1 := c.submit(t, simulated("capped", 100, 1, time.Hour))
	p2 := c.submit(t, simulated("capped", 100, 1, time.Hour))
	c.waitState(t, p1, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)
	c.waitState(t, p2, pb.OperationState_OPERATION_STATE_PENDING, 10*time.Second)
	if pr := pendingAt(t, c, p2); pr.GetPool() != "capped" || pr.GetValue() != 1 {
		t.Errorf("pending reason %v, want capped's limit 1 from the preset", pr)
	}
	// Changing the preset live changes every pool that uses it.
	cc := treeconf.NewClient(c.nc, 5*time.Second)
	if _, err := cc.SetTree(ctx, &pb.SetTreeRequest{Tree: "physical", Key: "pool_config_presets", Value: "{single: {max_running_operation_count: 2}}"}); err != nil {
		t.Fatal(err)
	}
	c.waitState(t, p2, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)
}

// A pool's weight changed through the configuration service shows in the
// fair shares within two fair-share updates (counted, not timed).
func TestLiveWeightChangeReachesFairSharesWithinTwoUpdates(t *testing.T) {
	const doc = `
version: 1
trees:
  - name: physical
    config: {fair_share_update_period: 300ms}
    pools:
      - {name: a}
      - {name: b}
`
	c := startClusterWith(t, doc, 1, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4}, nil)
	ctx := context.Background()
	for _, pool := range []string{"a", "b"} {
		c.submit(t, simulated(pool, 1000, 1, time.Hour))
	}
	share := func(r *scheduler.Result, pool string) float64 {
		e, ok := r.Element(pool)
		if !ok {
			return -1
		}
		return e.FairShare.Total[scheduler.CPU]
	}
	testutil.WaitFor(t, 10*time.Second, "equal fair shares", func() bool {
		r := c.srv.System().Result("physical")
		return r != nil && math.Abs(share(r, "a")-0.5) < 0.01 && math.Abs(share(r, "b")-0.5) < 0.01
	})
	cc := treeconf.NewClient(c.nc, 5*time.Second)
	before := c.srv.System().Result("physical")
	if _, err := cc.SetPool(ctx, &pb.SetPoolRequest{Tree: "physical", Pool: "a", Key: "weight", Value: "3"}); err != nil {
		t.Fatal(err)
	}
	// Count the updates published after the write until one shows the
	// new weight.
	seen := []*scheduler.Result{before}
	testutil.WaitFor(t, 20*time.Second, "a fair share that reflects weight 3", func() bool {
		r := c.srv.System().Result("physical")
		if r != seen[len(seen)-1] {
			seen = append(seen, r)
		}
		return math.Abs(share(r, "a")-0.75) < 0.01
	})
	if updates := len(seen) - 1; updates > 2 {
		t.Errorf("the new weight showed in update %d after the write, want within 2", updates)
	}
	if got := share(seen[len(seen)-1], "b"); math.Abs(got-0.25) > 0.01 {
		t.Errorf("b's fair share = %.3f, want 0.25", got)
	}
	t.Logf("weight change visible in update %d", len(seen)-1)
}
