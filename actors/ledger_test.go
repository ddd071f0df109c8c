package actors

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/placement"
)

// The fair-share update's work outside the ledger's mutex (the lookups
// and comparisons of ResolveFairShares, the merge of the usage copy)
// touches nothing the scheduling passes write, which the race detector
// checks, and once the passes stop the snapshot is exactly the
// placement's operations.
func TestLedgerUpdatesBesideSchedulingPasses(t *testing.T) {
	cfg := DefaultConfig()
	l := newLedger("t", &cfg, 0, nil)
	if err := l.setTree(scheduler.DefaultTreeConfig(), []scheduler.PoolConfig{{Name: "a"}, {Name: "b"}}); err != nil {
		t.Fatal(err)
	}
	job := scheduler.Resources{scheduler.UserSlots: 1, scheduler.CPU: 1}
	var ids []string
	for i := range 40 {
		id := fmt.Sprintf("op%02d", i)
		ids = append(ids, id)
		spec := placement.OperationSpec{ID: scheduler.OperationID(id), Pool: scheduler.PoolID([]string{"a", "b"}[i%2]), Order: uint64(i), Weight: 1,
			Tasks: []placement.TaskSpec{{Name: "t", JobCount: 100, JobResources: job}}}
		if err := l.addOperation(spec, &pb.OperationSpec{Tasks: []*pb.TaskSpec{{Name: "t"}}}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	free := scheduler.Resources{scheduler.UserSlots: 8, scheduler.CPU: 8}
	l.setNode(scheduler.Node{ID: "n", Resources: free})

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		// A node's heartbeats: each ends the jobs the previous one started
		// (requeued) and starts new ones.
		defer wg.Done()
		var done []finishing
		for round := uint64(1); ; round++ {
			select {
			case <-stop:
				return
			default:
			}
			res := l.pass(&passRequest{round: round, node: "n", done: done, free: free})
			done = done[:0]
			for _, s := range res.started {
				done = append(done, finishing{ref: s.ref, requeue: true})
			}
		}
	}()
	var usage placement.OperationsCopy
	for update := range 100 {
		if ops, _, _ := l.snapshot(&usage); len(ops) != len(ids) {
			t.Fatalf("update %d: snapshot of %d operations, want %d", update, len(ops), len(ids))
		}
		// Fair shares that change for some operations from one update to
		// the next, and stay for the others.
		res := &scheduler.Result{Total: scheduler.Resources{scheduler.UserSlots: 8, scheduler.CPU: 8},
			Elements: []scheduler.ElementResult{{Kind: scheduler.KindRoot, Name: scheduler.RootID, FairShare: scheduler.DetailedShare{Total: scheduler.Share{1, 1}}}}}
		for _, pool := range []string{"a", "b"} {
			res.Elements = append(res.Elements, scheduler.ElementResult{Kind: scheduler.KindPool, Name: pool, FairShare: scheduler.DetailedShare{Total: scheduler.Share{0.5, 0.5}}})
		}
		for i, id := range ids {
			v := float64(1+(i*update)%7) / 100
			res.Elements = append(res.Elements, scheduler.ElementResult{Kind: scheduler.KindOperation, Name: id, FairShare: scheduler.DetailedShare{Total: scheduler.Share{v, v}}})
		}
		l.setResult(res)
	}
	close(stop)
	wg.Wait()

	ops, _, _ := l.snapshot(&usage)
	l.mu.Lock()
	want := l.p.Operations()
	l.mu.Unlock()
	if d := cmp.Diff(want, ops, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("snapshot (-placement +copy):\n%s", d)
	}
}
