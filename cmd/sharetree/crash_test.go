package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// childArgsEnv, when set to a JSON array of arguments, makes the test
// binary run them as the sharetree command and exit: the crash test starts
// the scheduler as a process of its own, so that it can kill it.
const childArgsEnv = "SHARETREE_TEST_CHILD_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(childArgsEnv); args != "" {
		var argv []string
		if err := json.Unmarshal([]byte(args), &argv); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", childArgsEnv, err)
			os.Exit(2)
		}
		os.Exit(run(argv, os.Stdout, os.Stderr))
	}
	testutil.VerifyNoLeaks(m)
}

// childScheduler is `sharetree server` running in a child process.
type childScheduler struct {
	cmd     *exec.Cmd
	url     string
	epoch   uint64
	exited  chan struct{}
	serving chan []string // each "serving" line's match, while one is not taken
	mu      sync.Mutex
	log     []string // the last lines of its stderr, for failure messages
}

var servingLine = regexp.MustCompile(`msg=serving nats_url=(\S+) .*epoch=(\d+)`)

// startChildScheduler starts `sharetree server` on dataDir and port, and
// waits until it serves; it is killed when the test ends, if not before.
func startChildScheduler(t *testing.T, dataDir string, port int, treesFile string) *childScheduler {
	t.Helper()
	return startChildSchedulerEnv(t, dataDir, port, treesFile, nil)
}

// startChildSchedulerEnv is startChildScheduler with env added to the
// child's environment.
func startChildSchedulerEnv(t *testing.T, dataDir string, port int, treesFile string, env []string) *childScheduler {
	t.Helper()
	c := launchChildEnv(t, env, "server", "--data-dir", dataDir, "--port", strconv.Itoa(port), "--http-addr", "",
		"--pools", treesFile, "--heartbeat-period", "50ms", "--job-revival-timeout", "1s", "--log-level", "info")
	c.waitServing(t, 30*time.Second)
	return c
}

// launchChild starts the sharetree command with args in a child process,
// without waiting for anything; it is killed when the test ends, if not
// before.
func launchChild(t *testing.T, args ...string) *childScheduler {
	t.Helper()
	return launchChildEnv(t, nil, args...)
}

// launchChildEnv is launchChild with env added to the child's environment.
func launchChildEnv(t *testing.T, env []string, args ...string) *childScheduler {
	t.Helper()
	argv, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	c := &childScheduler{exited: make(chan struct{}), serving: make(chan []string, 1)}
	c.cmd = exec.Command(os.Args[0], "-test.run", "^$")
	c.cmd.Env = append(append(os.Environ(), childArgsEnv+"="+string(argv)), env...)
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.kill(t) })
	go func() {
		defer close(c.exited)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			c.mu.Lock()
			c.log = append(c.log, line)
			if len(c.log) > 200 {
				c.log = c.log[len(c.log)-200:]
			}
			c.mu.Unlock()
			if m := servingLine.FindStringSubmatch(line); m != nil {
				select {
				case c.serving <- m:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = c.cmd.Wait()
	}()
	return c
}

// waitServing waits until the child logs that it serves, and records its
// URL and epoch.
func (c *childScheduler) waitServing(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case m := <-c.serving:
		c.url = m[1]
		var err error
		if c.epoch, err = strconv.ParseUint(m[2], 10, 64); err != nil {
			t.Fatal(err)
		}
	case <-c.exited:
		t.Fatalf("the scheduler exited before serving:\n%s", c.stderr())
	case <-time.After(timeout):
		t.Fatalf("the scheduler did not serve within %s:\n%s", timeout, c.stderr())
	}
}

func (c *childScheduler) stderr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.log, "\n")
}

// kill ends the process with SIGKILL, as a crash or the OOM killer would,
// and waits for it.
func (c *childScheduler) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil && !strings.Contains(err.Error(), "finished") {
		t.Errorf("kill the scheduler: %v", err)
	}
	<-c.exited
}

// freePort is a loopback TCP port nobody listened on a moment ago: the
// restarted scheduler must serve where the agent reconnects.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// TestAcknowledgedOperationsSurviveAKill: operations are submitted from
// several clients while an agent runs their jobs; the scheduler process is
// killed with SIGKILL in the middle, and started again on the same store
// and port. Every operation whose submission was acknowledged is there
// after the restart, under a new leader epoch, and runs to completion:
// the agent reconnects on its own, the jobs it was running for the killed
// scheduler are aborted as unknown, and the revived operations run them
// again.
func TestAcknowledgedOperationsSurviveAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills scheduler processes")
	}
	dir, port := t.TempDir(), freePort(t)
	trees := writeFile(t, "trees.yaml", "version: 1\ntrees:\n  - name: physical\n    config: {fair_share_update_period: 50ms}\n    pools:\n      - {name: a}\n      - {name: b}\n")
	first := startChildScheduler(t, dir, port, trees)

	// The agent, in this process, keeps reconnecting to the port.
	agent := servertest.StartAgent(t, first.url, "node-0", scheduler.Resources{scheduler.CPU: 64, scheduler.UserSlots: 64})

	// Eight clients submit until the kill; acked holds every id answered.
	var (
		mu    sync.Mutex
		acked []string
	)
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	sctx, stopSubmitting := context.WithCancel(context.Background())
	var submitters sync.WaitGroup
	for i := range 8 {
		nc, err := nats.Connect(first.url, nats.MaxReconnects(0))
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		cl := client.New(nc, 5*time.Second)
		submitters.Go(func() {
			for sctx.Err() == nil {
				id, err := cl.Submit(sctx, &pb.OperationSpec{Pool: []string{"a", "b"}[i%2], Tasks: []*pb.TaskSpec{{
					Name: "main", JobCount: 2, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
					Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(300 * time.Millisecond)},
				}}})
				if err == nil {
					mu.Lock()
					acked = append(acked, id)
					mu.Unlock()
				}
			}
		})
	}
	testutil.WaitFor(t, 30*time.Second, "200 acknowledged submissions and jobs running", func() bool {
		return count() >= 200 && agent.Stats().RunningJobs > 0
	})
	first.kill(t) // the submitters are still sending
	stopSubmitting()
	submitters.Wait()
	mu.Lock()
	want := append([]string(nil), acked...)
	mu.Unlock()

	second := startChildScheduler(t, dir, port, trees)
	if second.epoch <= first.epoch {
		t.Errorf("leader epoch after the restart = %d, want above %d", second.epoch, first.epoch)
	}
	nc, err := nats.Connect(second.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cl := client.New(nc, 5*time.Second)
	var (
		listed              map[string]*pb.OperationStatus
		missing, unfinished []string
		twice               string
	)
	done := testutil.Poll(60*time.Second, func() bool {
		ops, err := cl.List(context.Background(), &pb.ListOperationsRequest{})
		if err != nil {
			return false
		}
		listed, missing, unfinished = map[string]*pb.OperationStatus{}, nil, nil
		for _, op := range ops {
			if listed[op.GetId()] != nil {
				twice = op.GetId()
			}
			listed[op.GetId()] = op
		}
		for _, id := range want {
			switch op := listed[id]; {
			case op == nil:
				missing = append(missing, id)
			case op.GetState() != pb.OperationState_OPERATION_STATE_COMPLETED:
				unfinished = append(unfinished, id+" "+op.GetState().String())
			}
		}
		return twice != "" || len(missing) > 0 || len(unfinished) == 0
	})
	switch {
	case twice != "":
		t.Fatalf("operation %s listed twice after the restart", twice)
	case len(missing) > 0:
		t.Fatalf("%d of the %d acknowledged operations are gone after the restart, among them %v\n%s", len(missing), len(want), missing[:min(5, len(missing))], second.stderr())
	case !done:
		t.Fatalf("%d of the %d acknowledged operations did not complete within 60s of the restart, among them %v", len(unfinished), len(want), unfinished[:min(5, len(unfinished))])
	}
	for _, id := range want {
		if c := listed[id].GetJobs(); c.GetCompleted() != 2 || c.GetFailed() != 0 {
			t.Errorf("operation %s jobs %v, want 2 completed and none failed", id, c)
		}
	}
	// The jobs the agent ran through the restart were adopted, not
	// aborted as unknown.
	if got := agent.Stats().JobsAborted; got != 0 {
		t.Errorf("the agent aborted %d jobs; want every job it ran through the restart adopted", got)
	}
	if got := agent.Stats().LeaderEpoch; got != second.epoch {
		t.Errorf("agent's leader epoch = %d, want the restarted scheduler's %d", got, second.epoch)
	}
	t.Logf("%d acknowledged before the kill, %d listed after the restart (epoch %d → %d)", len(want), len(listed), first.epoch, second.epoch)
}
