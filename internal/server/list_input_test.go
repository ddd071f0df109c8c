package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// TestListWithBadFiltersIsRefused: a listing filter no operation could
// match because it is malformed (a state no operation is in, a pool name
// no pool can have) is refused as INVALID_ARGUMENT naming the field, not
// answered with an empty list that reads as "no such operations".
func TestListWithBadFiltersIsRefused(t *testing.T) {
	_, nc := servertest.Start(t, treesYAML, nil)
	cl := client.New(nc, 10*time.Second)
	ctx := context.Background()
	if _, err := cl.Submit(ctx, simulated("light", 1, 1, time.Hour)); err != nil {
		t.Fatal(err)
	}
	running := pb.OperationState_OPERATION_STATE_RUNNING
	for _, tc := range []struct {
		name  string
		req   *pb.ListOperationsRequest
		field string
	}{
		{"unspecified state", &pb.ListOperationsRequest{States: []pb.OperationState{pb.OperationState_OPERATION_STATE_UNSPECIFIED}}, "states[0]"},
		{"unknown state", &pb.ListOperationsRequest{States: []pb.OperationState{running, pb.OperationState(42)}}, "states[1]"},
		{"pool with a dot", &pb.ListOperationsRequest{Pool: "light.x"}, "pool"},
		{"pool with a wildcard", &pb.ListOperationsRequest{Pool: "*"}, "pool"},
	} {
		ops, err := cl.List(ctx, tc.req)
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) || apiErr.Code() != pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT || apiErr.Err.GetField() != tc.field {
			t.Errorf("%s: %d operations, error %v; want INVALID_ARGUMENT on %s", tc.name, len(ops), err, tc.field)
		}
	}
	// Well-formed filters still list.
	ops, err := cl.List(ctx, &pb.ListOperationsRequest{Pool: "light"})
	if err != nil || len(ops) != 1 {
		t.Errorf("list of pool light: %d operations, %v; want 1", len(ops), err)
	}
}
