package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	"github.com/sharetree/sharetree/internal/treeconf"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

const reviveTrees = `
version: 1
trees:
  - name: physical
    pools:
      - {name: a, max_operation_count: 3, max_running_operation_count: 3}
      - {name: b}
`

// editStoredConfig changes the stored pool-tree configuration in dir while
// no scheduler runs, as an operator could with another process.
func editStoredConfig(t *testing.T, dir string, edit func(*treeconf.Admin)) {
	t.Helper()
	withStoreOffline(t, dir, func(js jetstream.JetStream) {
		store, err := treeconf.OpenStore(context.Background(), js, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		edit(treeconf.NewAdmin(store, nil, nil))
	})
}

// listed is every operation the scheduler lists, by id.
func listed(t *testing.T, nc *nats.Conn) map[string]*pb.OperationStatus {
	t.Helper()
	ops, err := client.New(nc, 5*time.Second).List(context.Background(), &pb.ListOperationsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*pb.OperationStatus{}
	for _, op := range ops {
		out[op.GetId()] = op
	}
	return out
}

// TestRevivalKeepsEveryAcknowledgedOperation: operations acknowledged
// before a restart come back even when the configuration changed while the
// scheduler was down. A pool's max_operation_count lowered below its
// operations does not refuse them (as a live lowering would not); an
// operation whose pool is gone fails with the reason, and that failure is
// stored: it is still failed, not dropped, after a second restart.
func TestRevivalKeepsEveryAcknowledgedOperation(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	start := func() (*server.Server, *nats.Conn) {
		return servertest.Start(t, reviveTrees, func(c *server.Config) { c.DataDir = dir })
	}
	srv, nc := start()
	cl := client.New(nc, 5*time.Second)
	var inA []string
	for range 3 {
		id, err := cl.Submit(ctx, simulated("a", 1, 1, time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		inA = append(inA, id)
	}
	inB, err := cl.Submit(ctx, simulated("b", 1, 1, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()

	editStoredConfig(t, dir, func(adm *treeconf.Admin) {
		for _, key := range []string{"max_running_operation_count", "max_operation_count"} {
			if _, err := adm.SetPool(ctx, "physical", "a", treeconf.Change{Key: key, Value: "1"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := adm.RemovePool(ctx, "physical", "b", 0); err != nil {
			t.Fatal(err)
		}
	})

	for restart := 1; restart <= 2; restart++ {
		srv, nc := start()
		ops := listed(t, nc)
		for _, id := range inA {
			if st := ops[id]; st == nil || st.GetState() == pb.OperationState_OPERATION_STATE_FAILED {
				t.Errorf("restart %d: operation %s in pool a = %v, want it revived over the lowered max_operation_count", restart, id, st)
			}
		}
		st := ops[inB]
		if st.GetState() != pb.OperationState_OPERATION_STATE_FAILED {
			t.Fatalf("restart %d: operation %s of the removed pool b = %v, want failed", restart, inB, st)
		}
		if msg := st.GetError().GetMessage(); !strings.Contains(msg, "not revived") || !strings.Contains(msg, `"b"`) {
			t.Errorf("restart %d: failure %q, want it to say the operation was not revived and name pool b", restart, msg)
		}
		if st.GetFinishTime() == nil {
			t.Errorf("restart %d: failed operation has no finish time", restart)
		}
		if restart == 1 {
			// The failure is stored: the second start finds it failed in
			// the bucket, not unfinished (it would fail it again).
			testutil.WaitFor(t, 10*time.Second, "the failure to be stored", func() bool {
				return storedStatus(t, nc, inB).GetState() == pb.OperationState_OPERATION_STATE_FAILED
			})
		}
		srv.Close()
	}
}
