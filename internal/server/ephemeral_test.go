package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

const ephemeralTrees = `
version: 1
trees:
  - name: physical
    config: {fair_share_update_period: 50ms, default_parent_pool: users, max_ephemeral_pool_per_user: 2}
    pools:
      - {name: users}
      - {name: teams, create_ephemeral_subpools: true, ephemeral_subpool_config: {max_running_operation_count: 1}}
      - {name: org, forbid_immediate_operations: true}
      - {name: org-child, parent: org}
`

func TestEphemeralPools(t *testing.T) {
	c := startClusterWith(t, ephemeralTrees, 1, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4}, nil)
	ctx := context.Background()
	result := func() *scheduler.Result { return c.srv.System().Result("physical") }

	// No pool: the user's ephemeral pool under default_parent_pool.
	spec := simulated("", 1000, 1, time.Hour)
	spec.User = "alice"
	alice := c.submit(t, spec)
	st := c.waitState(t, alice, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)
	if got := st.GetTrees()[0].GetPool(); got != "alice" {
		t.Errorf("operation without a pool runs in %q, want alice", got)
	}
	testutil.WaitFor(t, 10*time.Second, "the engine to show alice under users", func() bool {
		r := result()
		if r == nil {
			return false
		}
		e, ok := r.Element("alice")
		return ok && e.Parent == "users"
	})

	// create_ephemeral_subpools: teams$bob, with the sub-pool config's
	// running limit of 1.
	spec = simulated("teams", 1, 1, time.Hour)
	spec.User = "bob"
	b1 := c.submit(t, spec)
	b2 := c.submit(t, spec)
	st = c.waitState(t, b2, pb.OperationState_OPERATION_STATE_PENDING, 10*time.Second)
	if r := st.GetTrees()[0].GetPendingReason(); r.GetPool() != "teams$bob" || r.GetValue() != 1 {
		t.Errorf("second operation of bob waits on %v, want teams$bob's max_running_operation_count 1", r)
	}
	if st := c.waitState(t, b1, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second); st.GetTrees()[0].GetPool() != "teams$bob" {
		t.Errorf("bob's operation runs in %q, want teams$bob", st.GetTrees()[0].GetPool())
	}

	// forbid_immediate_operations and max_ephemeral_pool_per_user.
	var apiErr *client.APIError
	if _, err := c.client.Submit(ctx, simulated("org", 1, 1, time.Second)); !errors.As(err, &apiErr) || apiErr.Code() != pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT {
		t.Errorf("submission into a pool with forbid_immediate_operations: %v, want INVALID_ARGUMENT", err)
	}
	c.submit(t, simulated("org-child", 1, 1, time.Millisecond))
	spec = simulated("", 1, 1, time.Hour)
	spec.User = "bob"
	c.submit(t, spec) // bob's second ephemeral pool ("bob" under users)
	spec = simulated("teams", 1, 1, time.Hour)
	spec.User = "bob"
	if _, err := c.client.Submit(ctx, spec); err != nil {
		t.Errorf("a third operation in an existing ephemeral pool: %v", err)
	}
	spec = simulated("", 1, 1, time.Hour)
	spec.User = "bad$user"
	if _, err := c.client.Submit(ctx, spec); !errors.As(err, &apiErr) || apiErr.Err.GetField() != "spec.user" {
		t.Errorf("user with '$': %v, want INVALID_ARGUMENT on spec.user", err)
	}

	// The ephemeral pool goes with its last operation.
	if _, err := c.client.Abort(ctx, alice, "done"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "alice's ephemeral pool to go", func() bool {
		r := result()
		_, ok := r.Element("alice")
		return !ok
	})
}

func TestEphemeralPoolLimitPerUser(t *testing.T) {
	doc := strings.Replace(ephemeralTrees, "max_ephemeral_pool_per_user: 2", "max_ephemeral_pool_per_user: 1", 1)
	c := startClusterWith(t, doc, 1, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4}, nil)
	ctx := context.Background()
	spec := simulated("", 1, 1, time.Hour)
	spec.User = "carol"
	c.submit(t, spec) // the ephemeral pool "carol" under users
	c.submit(t, spec) // a second operation in the same pool
	spec = simulated("teams", 1, 1, time.Hour)
	spec.User = "carol"
	var apiErr *client.APIError
	if _, err := c.client.Submit(ctx, spec); !errors.As(err, &apiErr) || apiErr.Code() != pb.ErrorCode_ERROR_CODE_LIMIT_EXCEEDED ||
		!strings.Contains(apiErr.Error(), "max_ephemeral_pool_per_user") {
		t.Errorf("a second ephemeral pool of carol: %v, want LIMIT_EXCEEDED naming max_ephemeral_pool_per_user", err)
	}
	spec.User = "dave"
	if _, err := c.client.Submit(ctx, spec); err != nil {
		t.Errorf("another user's ephemeral pool: %v", err)
	}
}
