package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

func TestOperationUpdateMovesWeightsAndLimits(t *testing.T) {
	c := startCluster(t, 2, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4})
	ctx := context.Background()
	id := c.submit(t, simulated("light", 100000, 1, 100*time.Millisecond))
	c.waitState(t, id, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)
	testutil.WaitFor(t, 10*time.Second, "the operation to fill the cluster", func() bool {
		st, err := c.client.Get(ctx, id)
		return err == nil && st.GetJobs().GetRunning() == 8
	})

	// A new pool and weight: the jobs move along, the engine sees both.
	st, err := c.client.Update(ctx, id, &pb.UpdateOperationRequest{Pool: "heavy", Weight: proto.Float64(5)})
	if err != nil {
		t.Fatal(err)
	}
	if got := st.GetTrees()[0].GetPool(); got != "heavy" || st.GetSpec().GetPool() != "heavy" || st.GetSpec().GetWeight() != 5 {
		t.Errorf("after update: tree pool %q, spec pool %q weight %g; want heavy, heavy, 5", got, st.GetSpec().GetPool(), st.GetSpec().GetWeight())
	}
	testutil.WaitFor(t, 10*time.Second, "the engine to place the operation in heavy with weight 5", func() bool {
		r := c.srv.System().Result("physical")
		if r == nil {
			return false
		}
		e, ok := r.Element(id)
		heavy, ok2 := r.Element("heavy")
		return ok && ok2 && e.Parent == "heavy" && e.Weight == 5 && heavy.ResourceUsage[scheduler.CPU] > 0
	})
	st, err = c.client.Get(ctx, id)
	if err != nil || st.GetJobs().GetFailed() != 0 || st.GetJobs().GetAborted() != 0 {
		t.Fatalf("after the move: %v, jobs %v; want none failed or aborted", err, st.GetJobs())
	}

	// Lower limits: no new job beyond them once the running ones finish.
	if _, err := c.client.Update(ctx, id, &pb.UpdateOperationRequest{ResourceLimits: &pb.ResourceLimits{Cpu: proto.Float64(2)}}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the operation to run within its new cpu limit", func() bool {
		st, err := c.client.Get(ctx, id)
		return err == nil && st.GetJobs().GetRunning() <= 2 && st.GetJobs().GetCompleted() > 0
	})
	for range 5 {
		st, err := c.client.Get(ctx, id)
		if err != nil || st.GetJobs().GetRunning() > 2 {
			t.Fatalf("with limit cpu=2: %d jobs running, %v", st.GetJobs().GetRunning(), err)
		}
		completed := st.GetJobs().GetCompleted()
		testutil.WaitFor(t, 10*time.Second, "more jobs to complete", func() bool {
			s, err := c.client.Get(ctx, id)
			return err == nil && s.GetJobs().GetCompleted() > completed
		})
	}
	// Cleared limits: the cluster fills again.
	if _, err := c.client.Update(ctx, id, &pb.UpdateOperationRequest{ClearResourceLimits: true}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the operation to fill the cluster again", func() bool {
		st, err := c.client.Get(ctx, id)
		return err == nil && st.GetJobs().GetRunning() == 8
	})

	// Refusals name the field and change nothing.
	var apiErr *client.APIError
	bad := []struct {
		name  string
		req   *pb.UpdateOperationRequest
		code  pb.ErrorCode
		field string
	}{
		{"unknown pool", &pb.UpdateOperationRequest{Pool: "nope"}, pb.ErrorCode_ERROR_CODE_NOT_FOUND, "pool"},
		{"bad weight", &pb.UpdateOperationRequest{Weight: proto.Float64(-1)}, pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "weight"},
		{"negative limit", &pb.UpdateOperationRequest{ResourceLimits: &pb.ResourceLimits{Cpu: proto.Float64(-1)}}, pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "resource_limits"},
		{"another tree", &pb.UpdateOperationRequest{SchedulingOptionsPerPoolTree: map[string]*pb.PoolTreeOptions{"gpu": {Pool: "light"}}},
			pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "scheduling_options_per_pool_tree[gpu]"},
	}
	for _, tc := range bad {
		_, err := c.client.Update(ctx, id, tc.req)
		if !errors.As(err, &apiErr) || apiErr.Code() != tc.code || apiErr.Err.GetField() != tc.field {
			t.Errorf("%s: %v, want %s on %s", tc.name, err, tc.code, tc.field)
		}
	}
	st, err = c.client.Get(ctx, id)
	if err != nil || st.GetSpec().GetPool() != "heavy" || st.GetSpec().GetWeight() != 5 || st.GetSpec().GetResourceLimits() != nil {
		t.Errorf("after refused updates: spec %v, %v; want pool heavy, weight 5, no limits", st.GetSpec(), err)
	}
	if _, err := c.client.Update(ctx, "op-9-9", &pb.UpdateOperationRequest{Pool: "light"}); !errors.As(err, &apiErr) || apiErr.Code() != pb.ErrorCode_ERROR_CODE_NOT_FOUND {
		t.Errorf("update of an unknown operation: %v, want NOT_FOUND", err)
	}
	if _, err := c.client.Abort(ctx, id, "test over"); err != nil {
		t.Fatal(err)
	}
	c.waitState(t, id, pb.OperationState_OPERATION_STATE_ABORTED, 10*time.Second)
	if _, err := c.client.Update(ctx, id, &pb.UpdateOperationRequest{Pool: "light"}); !errors.As(err, &apiErr) || apiErr.Code() != pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION {
		t.Errorf("update of an aborted operation: %v, want FAILED_PRECONDITION", err)
	}
}

func TestOperationUpdateStartsAPendingOperationInItsNewPool(t *testing.T) {
	c := startCluster(t, 1, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4})
	ctx := context.Background()
	first := c.submit(t, simulated("narrow", 1000, 1, time.Hour))
	second := c.submit(t, simulated("narrow", 1, 1, 10*time.Millisecond))
	c.waitState(t, first, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)
	c.waitState(t, second, pb.OperationState_OPERATION_STATE_PENDING, 10*time.Second)
	st, err := c.client.Update(ctx, second, &pb.UpdateOperationRequest{Pool: "light"})
	if err != nil {
		t.Fatal(err)
	}
	if st.GetState() != pb.OperationState_OPERATION_STATE_RUNNING || st.GetTrees()[0].GetPendingReason() != nil {
		t.Errorf("moved pending operation: state %s, pending reason %v; want RUNNING, none", st.GetState(), st.GetTrees()[0].GetPendingReason())
	}
	// The long operation holds the whole node; the moved one completes
	// once its share is given back... it needs a slot, so make room.
	if _, err := c.client.Abort(ctx, first, "make room"); err != nil {
		t.Fatal(err)
	}
	c.waitState(t, second, pb.OperationState_OPERATION_STATE_COMPLETED, 20*time.Second)
}
