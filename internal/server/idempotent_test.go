package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// TestRetriedSubmissionStartsOneOperation: a submission sent three times
// with one request id (a client retrying after timeouts) starts one
// operation, and every answer names it; after a scheduler restart the
// same request id still names it.
func TestRetriedSubmissionStartsOneOperation(t *testing.T) {
	start, srv, nc := restartable(t, 100*time.Millisecond)
	ctx := context.Background()
	cl := client.New(nc, 5*time.Second)
	spec := simulated("light", 2, 1, time.Hour)
	req := &pb.StartOperationRequest{Spec: spec, RequestId: "0b5e2c1f-6a1d-4c44-9a3e-2f1d0c7b8e9a"}
	var ids []string
	for range 3 {
		resp := &pb.StartOperationResponse{}
		if err := cl.Call(ctx, subjects.OpSubmit(), req, resp); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, resp.GetOperationId())
	}
	if ids[0] == "" || ids[1] != ids[0] || ids[2] != ids[0] {
		t.Fatalf("answers %v, want one operation three times", ids)
	}
	count := func(cl *client.Client) int {
		t.Helper()
		ops, err := cl.List(ctx, &pb.ListOperationsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return len(ops)
	}
	if n := count(cl); n != 1 {
		t.Errorf("%d operations, want 1", n)
	}
	id, err := cl.SubmitRequest(ctx, spec, req.GetRequestId())
	if err != nil || id != ids[0] {
		t.Errorf("SubmitRequest: %q, %v; want %s", id, err, ids[0])
	}
	srv.Close()

	_, nc = start()
	cl = client.New(nc, 5*time.Second)
	testutil.WaitFor(t, 10*time.Second, "the operation to be revived", func() bool {
		st, err := cl.Get(ctx, ids[0])
		return err == nil && st.GetRequestId() == req.GetRequestId()
	})
	id, err = cl.SubmitRequest(ctx, spec, req.GetRequestId())
	if err != nil || id != ids[0] {
		t.Errorf("after the restart: %q, %v; want %s", id, err, ids[0])
	}
	if n := count(cl); n != 1 {
		t.Errorf("%d operations after the restart, want 1", n)
	}
}
