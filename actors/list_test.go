package actors

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// list asks the system for one page.
func (h *adoptHarness) list(req *pb.ListOperationsRequest, maxBytes int) (*pb.ListOperationsResponse, *pb.Error) {
	h.t.Helper()
	type answer struct {
		r *pb.ListOperationsResponse
		e *pb.Error
	}
	got := make(chan answer, 1)
	h.sys.List(&ListOperations{Request: req, MaxBytes: maxBytes, Reply: func(r *pb.ListOperationsResponse, e *pb.Error) { got <- answer{r, e} }})
	a := await(h.t, got, "list")
	return a.r, a.e
}

// listAll follows a listing's pages, checking each against maxBytes and
// limit, and returns the ids listed.
func (h *adoptHarness) listAll(req *pb.ListOperationsRequest, maxBytes int) []string {
	h.t.Helper()
	req = proto.Clone(req).(*pb.ListOperationsRequest)
	var ids []string
	for pages := 0; ; pages++ {
		if pages > 1000 {
			h.t.Fatal("the listing does not end")
		}
		r, e := h.list(req, maxBytes)
		if e != nil {
			h.t.Fatalf("page %d: %v", pages, e)
		}
		ops := r.GetOperations()
		if len(ops) == 0 && r.GetNextPageToken() != "" {
			h.t.Fatalf("page %d is empty but names a next page", pages)
		}
		if l := int(req.GetLimit()); l > 0 && len(ops) > l {
			h.t.Errorf("page %d holds %d operations, limit %d", pages, len(ops), l)
		}
		if size := proto.Size(&pb.ListOperationsResponse{Operations: ops}); maxBytes > 0 && len(ops) > 1 && size > maxBytes {
			h.t.Errorf("page %d is %d bytes, more than %d", pages, size, maxBytes)
		}
		for _, st := range ops {
			ids = append(ids, st.GetId())
		}
		if r.GetNextPageToken() == "" {
			return ids
		}
		req.PageToken = r.GetNextPageToken()
	}
}

// A listing too large for one reply comes in pages: each holds what fits
// in the reply's budget (at least one operation) and at most limit
// operations; following the tokens lists every operation once, in order,
// also when operations are submitted between pages. A token that is not
// one is refused.
func TestListComesInPages(t *testing.T) {
	h := startRevived(t)
	submit := func() string {
		done := make(chan string, 1)
		h.sys.Submit(&SubmitOperation{Spec: revivedOp("", 1).GetSpec(), Reply: func(r *pb.StartOperationResponse, e *pb.Error) {
			if e != nil {
				t.Errorf("submit: %v", e)
			}
			done <- r.GetOperationId()
		}})
		return await(t, done, "submission")
	}
	var want []string
	for range 25 {
		want = append(want, submit())
		h.clock.advance(time.Millisecond) // distinct submit times, but for the ids' order
	}
	testutil.WaitFor(t, 10*time.Second, "the 25 operations to be listed", func() bool {
		r, _ := h.list(&pb.ListOperationsRequest{}, 0)
		return len(r.GetOperations()) == 25
	})
	all, _ := h.list(&pb.ListOperationsRequest{}, 0)
	if all.GetNextPageToken() != "" {
		t.Errorf("an unbounded page names a next page %q", all.GetNextPageToken())
	}
	one := proto.Size(all.GetOperations()[0])
	for _, c := range []struct {
		name     string
		limit    int32
		maxBytes int
	}{
		{"unbounded", 0, 0},
		{"limit 4", 4, 0},
		{"three statuses' bytes", 0, 3*one + 10},
		{"less than one status", 0, 1},
		{"limit 2 and bytes for five", 2, 5*one + 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(want, h.listAll(&pb.ListOperationsRequest{Limit: c.limit}, c.maxBytes)); diff != "" {
				t.Errorf("listed (-want +got):\n%s", diff)
			}
		})
	}

	// Operations submitted between two pages come after the others (they
	// are submitted later); none is listed twice or skipped.
	first, e := h.list(&pb.ListOperationsRequest{Limit: 10}, 0)
	if e != nil || len(first.GetOperations()) != 10 || first.GetNextPageToken() == "" {
		t.Fatalf("first page: %v, %v", first, e)
	}
	h.clock.advance(time.Millisecond)
	later := submit()
	testutil.WaitFor(t, 10*time.Second, "the new operation to be listed", func() bool {
		r, _ := h.list(&pb.ListOperationsRequest{}, 0)
		return len(r.GetOperations()) == 26
	})
	var got []string
	for _, st := range first.GetOperations() {
		got = append(got, st.GetId())
	}
	got = append(got, h.listAll(&pb.ListOperationsRequest{Limit: 10, PageToken: first.GetNextPageToken()}, 0)...)
	if diff := cmp.Diff(append(slices.Clone(want), later), got); diff != "" {
		t.Errorf("listed across a submission (-want +got):\n%s", diff)
	}

	for _, tok := range []string{"x", "12", "/op-1-1", "1x/op-1-1", "012/op-1-1", "12/"} {
		if _, e := h.list(&pb.ListOperationsRequest{PageToken: tok}, 0); e.GetCode() != pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT || e.GetField() != "page_token" {
			t.Errorf("page token %q: %v, want INVALID_ARGUMENT on page_token", tok, e)
		}
	}
}

func TestPageTokenRoundTrip(t *testing.T) {
	for _, k := range []pageKey{{submit: 1767225600000000000, id: "op-3-17"}, {submit: -5, id: "a/b"}, {submit: 0, id: "x"}} {
		got, ok := parsePageToken(k.String())
		if !ok || got != k {
			t.Errorf("parsePageToken(%q) = %v, %v; want %v", k.String(), got, ok, k)
		}
	}
}
