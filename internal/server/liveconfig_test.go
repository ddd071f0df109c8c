package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/treeconf"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// The configuration service writes the bucket; the server watches it and
// reconfigures the running tree: no restart, running jobs kept.
func TestLiveConfigurationThroughTheService(t *testing.T) {
	c := startCluster(t, 1, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4})
	ctx := context.Background()
	cc := treeconf.NewClient(c.nc, 5*time.Second)
	first := c.submit(t, simulated("narrow", 1000, 1, time.Hour))
	second := c.submit(t, simulated("narrow", 1000, 1, time.Hour))
	c.waitState(t, first, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)
	c.waitState(t, second, pb.OperationState_OPERATION_STATE_PENDING, 10*time.Second)

	// Raise narrow's running limit: the pending operation starts.
	if _, err := cc.SetPool(ctx, &pb.SetPoolRequest{Tree: "physical", Pool: "narrow", Key: "max_running_operation_count", Value: "2"}); err != nil {
		t.Fatal(err)
	}
	c.waitState(t, second, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)

	// A new pool with a burst guarantee is live at once.
	if _, err := cc.CreatePool(ctx, "physical", "research", `{integral_guarantees: {guarantee_type: burst, resource_flow: {cpu: 1}, burst_guarantee_resources: {cpu: 2}}}`); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the engine to run the new burst pool", func() bool {
		r := c.srv.System().Result("physical")
		if r == nil {
			return false
		}
		e, ok := r.Element("research")
		return ok && e.Integral.GuaranteeType == scheduler.GuaranteeBurst
	})
	id := c.submit(t, simulated("research", 1, 1, time.Millisecond))
	// Until an update gives the new operation a fair share, the freed cores
	// would go to the other operation's hour-long jobs.
	testutil.WaitFor(t, 10*time.Second, "the engine to give the new operation a fair share", func() bool {
		e, ok := c.srv.System().Result("physical").Element(id)
		return ok && e.FairShare.Total.MaxComponent() > 0
	})

	// Refusals at write time name the rule; a pool with operations stays.
	var apiErr *client.APIError
	_, err := cc.SetPool(ctx, &pb.SetPoolRequest{Tree: "physical", Pool: "narrow", Key: "weight", Value: "-1"})
	if !errors.As(err, &apiErr) || apiErr.Err.GetRule() == "" {
		t.Errorf("negative weight: %v, want a refusal naming its rule", err)
	}
	if _, err := cc.RemovePool(ctx, "physical", "narrow", 0); !errors.As(err, &apiErr) || apiErr.Err.GetRule() == "" {
		t.Errorf("removing a pool with operations: %v, want a refusal naming its rule", err)
	}
	if _, err := c.client.Abort(ctx, first, "done"); err != nil {
		t.Fatal(err)
	}
	c.waitState(t, id, pb.OperationState_OPERATION_STATE_COMPLETED, 20*time.Second)
	st, err := c.client.Get(ctx, second)
	if err != nil || st.GetJobs().GetAborted() != 0 || st.GetJobs().GetRunning() == 0 {
		t.Errorf("second operation after the changes: %v, %v; want running, nothing aborted", st.GetJobs(), err)
	}
}
