package server_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// TestRestartEndsTheRevivalOnceTheRosterReported: the leader keeps the
// nodes it hears from in the scheduler bucket; a scheduler that restarts
// on that store holds its revived operations only until those nodes have
// reported their jobs, not for its whole --job-revival-timeout (an hour
// here: the operation could not complete within the test otherwise), and
// still runs every job once.
func TestRestartEndsTheRevivalOnceTheRosterReported(t *testing.T) {
	start, srv, nc := restartable(t, 100*time.Millisecond, func(c *server.Config) { c.Actors.JobRevivalTimeout = time.Hour })
	var agents []*nodeagent.Agent
	for _, node := range []string{"node-0", "node-1"} {
		agents = append(agents, servertest.StartAgent(t, srv.URL(), node, scheduler.Resources{scheduler.CPU: 1, scheduler.UserSlots: 1}))
	}
	cl := client.New(nc, 5*time.Second)
	id, err := cl.Submit(context.Background(), simulated("light", 4, 1, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "a job running on each node", func() bool {
		return agents[0].Stats().RunningJobs == 1 && agents[1].Stats().RunningJobs == 1
	})
	kv := bucket(t, nc, subjects.SchedulerBucket)
	lister, err := kv.ListKeysFiltered(context.Background(), subjects.NodeKeys)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"node.node-0", "node.node-1"}) {
		t.Fatalf("the roster's keys are %v, want both nodes'", keys)
	}

	srv.Close()
	_, nc = start()
	cl = client.New(nc, 5*time.Second)
	var st *pb.OperationStatus
	testutil.WaitFor(t, 30*time.Second, "the operation to complete after the restart", func() bool {
		st, err = cl.Get(context.Background(), id)
		return err == nil && st.GetState() == pb.OperationState_OPERATION_STATE_COMPLETED
	})
	if j := st.GetJobs(); j.GetCompleted() != 4 || j.GetFailed() != 0 || j.GetAborted() != 0 {
		t.Errorf("operation jobs %v, want 4 completed, none failed or aborted", j)
	}
	started, aborted := 0, 0
	for _, a := range agents {
		s := a.Stats()
		started, aborted = started+int(s.JobsStarted), aborted+int(s.JobsAborted)
	}
	if started != 4 || aborted != 0 {
		t.Errorf("the agents started %d jobs and aborted %d; want each of the 4 started once, none aborted", started, aborted)
	}
}
