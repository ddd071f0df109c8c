package actors

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// Reliability test 23: a request to an actor that has stopped is answered
// by its dead letter at once, not when Config.RequestTimeout runs out:
// with the timeout at ten minutes, a submission to a tree whose actor
// stopped is refused UNAVAILABLE ("dead letter") within await's 10 s.
func TestARequestToAStoppedActorIsAnsweredByItsDeadLetter(t *testing.T) {
	h := startHarnessConfig(t, func(c *Config) { c.RequestTimeout = 10 * time.Minute }, nil)
	tree := h.sys.dir.Load().trees[0]
	if err := h.sys.as.Root.StopFuture(tree.pid).Wait(); err != nil {
		t.Fatal(err)
	}
	answer := make(chan *pb.Error, 1)
	h.sys.Submit(&SubmitOperation{Spec: revivedOp("", 1).GetSpec(), Reply: func(_ *pb.StartOperationResponse, e *pb.Error) { answer <- e }})
	e := await(t, answer, "answer to a submission to a stopped tree")
	if e.GetCode() != pb.ErrorCode_ERROR_CODE_UNAVAILABLE || !strings.Contains(e.GetMessage(), "dead letter") {
		t.Fatalf("a submission to a stopped tree: %v, want UNAVAILABLE naming the dead letter", e)
	}
}

// Reliability test 23: ten thousand requests — gets of an operation that
// exists and of one that does not, listings, and 4,000 introspections of
// the tree (each a RequestFuture, from 4,000 goroutines) — are each
// answered once and
// leave no goroutine behind (the count comes back to within a few of what
// it was; the package's TestMain runs goleak over the whole run too).
func TestTenThousandRequestsLeaveNoGoroutines(t *testing.T) {
	h := startHarness(t, nil)
	op := h.submit(1)
	base := runtime.NumGoroutine()
	const n = 10000
	var answered sync.WaitGroup
	var mu sync.Mutex
	replies := map[int]int{}
	for i := range n {
		answered.Add(1)
		once := func() {
			mu.Lock()
			replies[i]++
			mu.Unlock()
			answered.Done()
		}
		switch i % 5 {
		case 0:
			h.sys.Get(&GetOperation{ID: op, Reply: func(st *pb.OperationStatus, e *pb.Error) {
				if e != nil || st.GetId() != op {
					t.Errorf("get %s: %v, %v", op, st.GetId(), e)
				}
				once()
			}})
		case 1:
			h.sys.Get(&GetOperation{ID: "op-nope", Reply: func(_ *pb.OperationStatus, e *pb.Error) {
				if e.GetCode() != pb.ErrorCode_ERROR_CODE_NOT_FOUND {
					t.Errorf("get op-nope: %v, want NOT_FOUND", e)
				}
				once()
			}})
		case 3, 4:
			// A future to the tree actor, from a goroutine of its own.
			go func() {
				snap, err := h.sys.Introspect("physical", Scope{Operation: scheduler.OperationID(op)})
				if err != nil || len(snap.Operations) != 1 {
					t.Errorf("introspect: %v", err)
				}
				once()
			}()
		default:
			h.sys.List(&ListOperations{Request: &pb.ListOperationsRequest{}, Reply: func(r *pb.ListOperationsResponse, e *pb.Error) {
				if e != nil || len(r.GetOperations()) != 1 {
					t.Errorf("list: %d operations, %v", len(r.GetOperations()), e)
				}
				once()
			}})
		}
	}
	done := make(chan struct{})
	go func() { answered.Wait(); close(done) }()
	await(t, done, "answers to 10,000 requests")
	for i, k := range replies {
		if k != 1 {
			t.Fatalf("request %d answered %d times", i, k)
		}
	}
	if len(replies) != n {
		t.Fatalf("%d of %d requests answered", len(replies), n)
	}
	testutil.WaitFor(t, 10*time.Second, "the goroutines to come back to their count before the requests", func() bool {
		return runtime.NumGoroutine() <= base+5
	})
}
