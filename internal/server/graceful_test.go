package server_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sharetree/sharetree/deploy/examples/graceful-service/client"
	"github.com/sharetree/sharetree/deploy/examples/graceful-service/registry"
	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

const gracefulTrees = `
version: 1
trees:
  - name: physical
    config: {fair_share_update_period: 50ms, allocation_graceful_preemption_timeout: 30s}
    pools:
      - {name: shared}
`

// The seed's ClickHouse scenario: a service clique under graceful
// preemption scales down for a heavy operation in the same pool without
// failing a request, and back up when it ends.
func TestGracefulServiceScalesDownAndUpWithoutFailedRequests(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "graceful-service")
	if out, err := exec.Command("go", "build", "-o", bin, "../../deploy/examples/graceful-service").CombinedOutput(); err != nil {
		t.Fatalf("build the example service: %v\n%s", err, out)
	}
	reg := t.TempDir()
	c := startClusterWith(t, gracefulTrees, 2, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4}, nil)
	ctx := context.Background()
	clique := c.submit(t, &pb.OperationSpec{
		Pool: "shared", PreemptionMode: pb.PreemptionMode_PREEMPTION_MODE_GRACEFUL, InterruptionSignal: "SIGINT",
		Tasks: []*pb.TaskSpec{{Name: "instance", JobCount: 8, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
			Run: &pb.TaskSpec_Command{Command: &pb.Command{Argv: []string{bin, "--registry-dir", reg, "--work", "20ms"}}}}},
	})
	instances := func() int {
		l, err := registry.List(reg)
		if err != nil {
			return -1
		}
		return len(l)
	}
	testutil.WaitFor(t, 30*time.Second, "eight instances to register", func() bool { return instances() == 8 })

	// Steady load through the registry-aware client for the whole test.
	cl := client.New(reg, client.Options{})
	lctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for lctx.Err() == nil {
				_, _ = cl.Get(lctx, "/work?ms=20")
			}
		})
	}
	defer func() { stop(); wg.Wait() }()
	testutil.WaitFor(t, 10*time.Second, "requests to complete", func() bool { return cl.Stats().Completed > 50 })

	// A heavy operation in the same pool: the clique's fair share halves,
	// four instances are interrupted, drain and exit, the heavy jobs start.
	heavy := c.submit(t, simulated("shared", 8, 1, 3*time.Second))
	testutil.WaitFor(t, 30*time.Second, "the clique to scale down to four instances and the heavy jobs to run", func() bool {
		st, err := c.client.Get(ctx, heavy)
		return err == nil && st.GetJobs().GetRunning() >= 4 && instances() == 4
	})
	st, err := c.client.Get(ctx, clique)
	if err != nil || st.GetJobs().GetInterrupted() < 4 || st.GetJobs().GetFailed() != 0 || st.GetJobs().GetAborted() != 0 {
		t.Errorf("clique after the scale-down: jobs %v, %v; want >= 4 interrupted, none failed or aborted", st.GetJobs(), err)
	}
	// The heavy operation ends: the clique scales back up.
	c.waitState(t, heavy, pb.OperationState_OPERATION_STATE_COMPLETED, 60*time.Second)
	testutil.WaitFor(t, 30*time.Second, "the clique to scale back up to eight instances", func() bool { return instances() == 8 })
	before := cl.Stats().Completed
	testutil.WaitFor(t, 10*time.Second, "requests to go on", func() bool { return cl.Stats().Completed > before+50 })
	stop()
	wg.Wait()
	if s := cl.Stats(); s.Failed != 0 {
		t.Errorf("client: %d requests failed (completed %d, retried %d), want none", s.Failed, s.Completed, s.Retried)
	}
	// Every interrupted instance drained and exited 0 (an instance whose
	// drain fails exits non-zero).
	jf, _ := subjects.EventsFilter("physical", subjects.EventJob)
	var drained int
	for _, ev := range c.events(t, jf) {
		for _, j := range ev.GetJobs().GetJobs() {
			if j.GetOperationId() != clique || j.GetState() == pb.JobState_JOB_STATE_RUNNING {
				continue
			}
			if j.GetState() != pb.JobState_JOB_STATE_COMPLETED || j.GetExitCode() != 0 || j.GetCause() != pb.JobEndCause_JOB_END_CAUSE_GRACEFUL_PREEMPTION {
				t.Errorf("instance %s ended %s, exit code %d, cause %s (%q); want completed, 0, graceful preemption",
					j.GetJobId(), j.GetState(), j.GetExitCode(), j.GetCause(), j.GetReason())
			}
			drained++
		}
	}
	if drained < 4 {
		t.Errorf("%d instances ended, want >= 4", drained)
	}
	if _, err := c.client.Abort(ctx, clique, "test over"); err != nil {
		t.Fatal(err)
	}
	c.waitState(t, clique, pb.OperationState_OPERATION_STATE_ABORTED, 10*time.Second)
}
