package actors

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
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

// An update given up on because a tree did not answer within
// RequestTimeout is undone in that tree too: a tree that was only slow
// applied it after the updater was told it failed, and ran the operation
// with parameters its status and stored spec do not have.
func TestUpdateGivenUpIsUndoneInTheLateTree(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg := DefaultConfig()
	cfg.Now, cfg.RequestTimeout = clock.Now, 100*time.Millisecond
	sys, events := startGated(t, cfg, false)
	submitted := make(chan string, 1)
	sys.Submit(&SubmitOperation{Spec: revivedOp("", 1).GetSpec(), Reply: func(r *pb.StartOperationResponse, e *pb.Error) {
		if e != nil {
			t.Errorf("submit: %v", e)
		}
		submitted <- r.GetOperationId()
	}})
	op := await(t, submitted, "submission")

	// The tree is held in its next fair-share event.
	events.armed.Store(true)
	clock.advance(time.Minute)
	await(t, events.entered, "the tree's next fair-share event")
	answers := make(chan *pb.Error, 1)
	sys.Update(&UpdateOperation{ID: op, Req: &pb.UpdateOperationRequest{Weight: proto.Float64(7)},
		Reply: func(_ *pb.UpdateOperationResponse, e *pb.Error) { answers <- e }})
	if e := await(t, answers, "update answer"); e.GetCode() != pb.ErrorCode_ERROR_CODE_UNAVAILABLE {
		t.Fatalf("update answer %v; want UNAVAILABLE (the tree does not answer)", e)
	}
	snap := openAndIntrospect(t, sys, events, Scope{Operation: scheduler.OperationID(op)})
	if len(snap.Operations) != 1 {
		t.Fatalf("the tree has %d operations, want 1", len(snap.Operations))
	}
	if w := snap.Operations[0].Weight; w != nil {
		t.Fatalf("the tree runs the operation with weight %v from an update that failed; want its spec's (none)", *w)
	}
}
