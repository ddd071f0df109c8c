package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/failpoint"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// crashRunsEnv sets how many runs TestCrashAtEachFailpoint makes per
// point (default 1; reliability test 2 asks for 100:
// SHARETREE_CRASH_RUNS=100 go test ./cmd/sharetree -run CrashAtEachFailpoint).
const crashRunsEnv = "SHARETREE_CRASH_RUNS"

// TestCrashAtEachFailpoint (reliability test 2) kills the scheduler at
// each step of a job's life — after the decision to start it and before
// the node is told, after the node is told, before its completion is
// written to the journal, after it is written and before the node is
// told — and starts it again on the same store. Every operation that was
// acknowledged completes; every job runs exactly once (the node starts
// as many jobs as the operations completed, none twice, none aborted: a
// job started before the crash is adopted, a completion reported before
// it is counted once); and the point did fire, by SIGKILL.
func TestCrashAtEachFailpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills scheduler processes")
	}
	runs := 1
	if v := os.Getenv(crashRunsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive integer", crashRunsEnv, v)
		}
		runs = n
	}
	for _, point := range failpoint.Points {
		t.Run(point, func(t *testing.T) {
			for k := range runs {
				// The hit to fire at varies from run to run: 2, 3, 4, 2, ...
				crashAt(t, point, 2+k%3)
			}
		})
	}
}

func crashAt(t *testing.T, point string, hit int) {
	t.Helper()
	dir, port := t.TempDir(), freePort(t)
	trees := writeFile(t, "trees.yaml", "version: 1\ntrees:\n  - name: physical\n    config: {fair_share_update_period: 50ms}\n    pools:\n      - {name: a}\n")
	first := startChildSchedulerEnv(t, dir, port, trees, []string{fmt.Sprintf("%s=%s@%d", failpoint.EnvVar, point, hit)})
	agent := servertest.StartAgent(t, first.url, "node-0", scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4})

	nc, err := nats.Connect(first.url, nats.MaxReconnects(0))
	if err != nil {
		t.Fatal(err)
	}
	cl := client.New(nc, 2*time.Second)
	// 16 jobs of 2 s on 4 slots: four waves, so that each point is hit at
	// least four times (a start reply and a journal write per wave).
	var acked []string
	for range 4 {
		id, err := cl.Submit(context.Background(), &pb.OperationSpec{Pool: "a", Tasks: []*pb.TaskSpec{{
			Name: "main", JobCount: 4, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
			// Long enough to run through the restart: the new scheduler
			// must adopt what the node runs.
			Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(2 * time.Second)},
		}}})
		if err != nil {
			break // the scheduler is gone
		}
		acked = append(acked, id)
	}
	nc.Close()
	select {
	case <-first.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("failpoint %s@%d did not fire within 30s:\n%s", point, hit, first.stderr())
	}
	if ws, ok := first.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the scheduler ended with %v, want killed by its failpoint:\n%s", first.cmd.ProcessState, first.stderr())
	}
	if len(acked) == 0 {
		t.Fatalf("no submission was acknowledged before %s@%d fired", point, hit)
	}

	second := startChildScheduler(t, dir, port, trees)
	nc2, err := nats.Connect(second.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc2.Close()
	cl2 := client.New(nc2, 5*time.Second)
	var ops []*pb.OperationStatus
	done := testutil.Poll(60*time.Second, func() bool {
		if ops, err = cl2.List(context.Background(), &pb.ListOperationsRequest{}); err != nil {
			return false
		}
		states := map[string]pb.OperationState{}
		for _, op := range ops {
			states[op.GetId()] = op.GetState()
		}
		for _, op := range ops {
			if op.GetState() != pb.OperationState_OPERATION_STATE_COMPLETED {
				return false
			}
		}
		for _, id := range acked {
			if states[id] != pb.OperationState_OPERATION_STATE_COMPLETED {
				return false
			}
		}
		return true
	})
	if !done {
		t.Fatalf("after %s@%d and a restart, the operations did not all complete within 60s: %v (acknowledged %v)\n%s", point, hit, ops, acked, second.stderr())
	}
	completed := 0
	for _, op := range ops {
		if c := op.GetJobs(); c.GetCompleted() != 4 || c.GetFailed() != 0 {
			t.Errorf("operation %s: jobs %v, want 4 completed, none failed", op.GetId(), c)
		}
		completed += int(op.GetJobs().GetCompleted())
	}
	testutil.WaitFor(t, 10*time.Second, "the node to have every finished job acknowledged", func() bool { return agent.Stats().UnackedFinishedJobs == 0 })
	st := agent.Stats()
	if st.JobsStarted != uint64(completed) || st.DuplicateStarts != 0 || st.JobsAborted != 0 || st.JobsCompleted != uint64(completed) {
		t.Errorf("%s@%d: the node started %d jobs (%d duplicates), completed %d and aborted %d; the operations completed %d: want each job run exactly once",
			point, hit, st.JobsStarted, st.DuplicateStarts, st.JobsCompleted, st.JobsAborted, completed)
	}
	if st.JobsOverCapacity != 0 {
		t.Errorf("%s@%d: %d jobs started beyond the node's capacity (I2)", point, hit, st.JobsOverCapacity)
	}
	t.Logf("%s@%d: %d acknowledged, %d operations, %d jobs each run once (epoch %d → %d)", point, hit, len(acked), len(ops), completed, first.epoch, second.epoch)
}

// TestAnActorPanicStopsTheProcess (reliability test 22, end to end): a
// panic inside a node actor — the failpoint starts-before-reply armed to
// panic, in the heartbeat pass that decided to start jobs — stops
// `sharetree server` with exit status 1 and an error naming the actor, the
// message and the panic, instead of leaving a half-dead scheduler. Started
// again on its store, the scheduler revives the operation, and the node
// (which was never told to start the first wave) runs each job once.
func TestAnActorPanicStopsTheProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts scheduler processes")
	}
	dir, port := t.TempDir(), freePort(t)
	trees := writeFile(t, "trees.yaml", "version: 1\ntrees:\n  - name: physical\n    config: {fair_share_update_period: 50ms}\n    pools:\n      - {name: a}\n")
	first := startChildSchedulerEnv(t, dir, port, trees, []string{failpoint.EnvVar + "=" + failpoint.StartsBeforeReply + "=" + failpoint.ActionPanic})
	agent := servertest.StartAgent(t, first.url, "node-0", scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4})
	nc, err := nats.Connect(first.url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cl := client.New(nc, 5*time.Second)
	id, err := cl.Submit(context.Background(), &pb.OperationSpec{Pool: "a", Tasks: []*pb.TaskSpec{{
		Name: "main", JobCount: 4, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
		Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(200 * time.Millisecond)},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-first.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("the panicking failpoint did not stop the scheduler within 30s:\n%s", first.stderr())
	}
	if code := first.cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("the scheduler exited with %v, want status 1", first.cmd.ProcessState)
	}
	for _, want := range []string{"scheduler stopped: actors: actor panic: node:node-0 panicked handling", "failpoint starts-before-reply"} {
		if !strings.Contains(first.stderr(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, first.stderr())
		}
	}
	if st := agent.Stats(); st.JobsStarted != 0 {
		t.Errorf("the node started %d jobs before the panic, want none (the reply was never sent)", st.JobsStarted)
	}

	second := startChildScheduler(t, dir, port, trees)
	testutil.WaitFor(t, 60*time.Second, "the revived operation to complete", func() bool {
		st, err := cl.Get(context.Background(), id)
		return err == nil && st.GetState() == pb.OperationState_OPERATION_STATE_COMPLETED
	})
	st, err := cl.Get(context.Background(), id)
	if err != nil || st.GetJobs().GetCompleted() != 4 || st.GetJobs().GetFailed() != 0 {
		t.Errorf("operation %s after the restart: %v, %v; want 4 completed, none failed", id, st.GetJobs(), err)
	}
	if a := agent.Stats(); a.JobsStarted != 4 || a.DuplicateStarts != 0 || a.JobsAborted != 0 {
		t.Errorf("the node started %d jobs (%d duplicates) and aborted %d: want the 4 run once", a.JobsStarted, a.DuplicateStarts, a.JobsAborted)
	}
	t.Logf("epoch %d → %d; the first scheduler ended: %s", first.epoch, second.epoch, lastLine(first.stderr(), "scheduler stopped"))
}

// lastLine is the last line of s containing sub ("" for none).
func lastLine(s, sub string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], sub) {
			return lines[i]
		}
	}
	return ""
}
