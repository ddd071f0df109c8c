package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// TestListingComesInPages: over NATS, a listing of more operations than a
// page holds comes in pages whose tokens lead through every operation
// once, in submission order; the client's List follows them (up to its
// limit), and a token that is not one is refused with a typed error.
func TestListingComesInPages(t *testing.T) {
	c := startCluster(t, 1, scheduler.Resources{scheduler.CPU: 1, scheduler.UserSlots: 1})
	var want []string
	for range 12 {
		want = append(want, c.submit(t, simulated("light", 1, 1, time.Hour)))
	}
	ctx := context.Background()
	testutil.WaitFor(t, 10*time.Second, "the 12 operations to be listed", func() bool {
		r, err := c.client.ListPage(ctx, &pb.ListOperationsRequest{})
		return err == nil && len(r.GetOperations()) == 12
	})

	var got []string
	pages := 0
	req := &pb.ListOperationsRequest{Limit: 5}
	for {
		r, err := c.client.ListPage(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, st := range r.GetOperations() {
			got = append(got, st.GetId())
		}
		if r.GetNextPageToken() == "" {
			break
		}
		req.PageToken = r.GetNextPageToken()
	}
	if diff := cmp.Diff(want, got); diff != "" || pages != 3 {
		t.Errorf("%d pages of 5 listed (-want +got):\n%s", pages, diff)
	}

	for _, limit := range []int32{0, 7} {
		ops, err := c.client.List(ctx, &pb.ListOperationsRequest{Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		n := len(want)
		if limit > 0 {
			n = int(limit)
		}
		var ids []string
		for _, st := range ops {
			ids = append(ids, st.GetId())
		}
		if diff := cmp.Diff(want[:n], ids); diff != "" {
			t.Errorf("List with limit %d (-want +got):\n%s", limit, diff)
		}
	}

	_, err := c.client.ListPage(ctx, &pb.ListOperationsRequest{PageToken: "not-a-token"})
	var api *client.APIError
	if !errors.As(err, &api) || api.Code() != pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT || api.Err.GetField() != "page_token" {
		t.Errorf("a bad page token: %v, want INVALID_ARGUMENT on page_token", err)
	}
}
