package actors

import (
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// An update that does not change an operation's pool leaves it where it
// runs. An operation submitted without a pool runs in its user's
// (ephemeral) pool, which its spec does not name: an update of its weight
// alone moved it to the tree's root ("pool anonymous → <Root>").
func TestUpdateWithoutPoolKeepsTheOperationsPool(t *testing.T) {
	h := startHarness(t, nil)
	h.beat("n1", nil, nil) // a node, so that the job fits somewhere
	submitted := make(chan string, 1)
	h.sys.Submit(&SubmitOperation{Spec: revivedOp("", 1).GetSpec(), Reply: func(r *pb.StartOperationResponse, e *pb.Error) {
		if e != nil {
			t.Errorf("submit: %v", e)
		}
		submitted <- r.GetOperationId()
	}})
	op := await(t, submitted, "submission")
	if got := h.status(op).GetTrees()[0].GetPool(); got != DefaultUser {
		t.Fatalf("submitted into pool %q, want %q", got, DefaultUser)
	}
	type answer struct {
		r *pb.UpdateOperationResponse
		e *pb.Error
	}
	answers := make(chan answer, 1)
	h.sys.Update(&UpdateOperation{ID: op, Req: &pb.UpdateOperationRequest{Weight: proto.Float64(2)},
		Reply: func(r *pb.UpdateOperationResponse, e *pb.Error) { answers <- answer{r, e} }})
	a := await(t, answers, "update answer")
	if a.e != nil {
		t.Fatalf("update: %v", a.e)
	}
	if got := a.r.GetStatus().GetTrees()[0].GetPool(); got != DefaultUser {
		t.Fatalf("after a weight update the operation runs in pool %q; want %q", got, DefaultUser)
	}
}
