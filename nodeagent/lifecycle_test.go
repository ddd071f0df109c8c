package nodeagent_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sharetree/sharetree/internal/natsembed"
	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
)

func TestFinishedJobsSurviveANATSRestart(t *testing.T) {
	cfg := natsembed.Default(t.TempDir())
	srv, err := natsembed.Start(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	cfg.Port = srv.Addr().(*net.TCPAddr).Port
	reconnect := []nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(20 * time.Millisecond)}
	schedConn := testutil.Connect(t, srv, reconnect...)
	agentConn := testutil.Connect(t, srv, reconnect...)
	sched := newFakeScheduler(t, schedConn, "n")
	sched.start(simJob("j", 200*time.Millisecond))
	a := startAgent(t, agentConn, testConfig(t, "n"))
	sched.waitRunning(t, "j")

	srv.Stop()
	st := waitStats(t, a, "the job to finish and heartbeats to fail while NATS is down", func(s nodeagent.Stats) bool {
		return s.JobsCompleted == 1 && s.HeartbeatsFailed >= 2
	})
	n := sched.count()
	srv2, err := natsembed.Start(cfg, nil)
	if err != nil {
		t.Fatalf("restart on port %d: %v", cfg.Port, err)
	}
	t.Cleanup(srv2.Stop)
	hb := sched.waitBeat(t, n, "the finished job reported after the restart", func(hb *pb.Heartbeat) bool { return finishedJob(hb, "j") != nil })
	if hb.GetSequence() <= st.Sequence {
		t.Errorf("heartbeat after the restart has sequence %d, want > %d", hb.GetSequence(), st.Sequence)
	}
	if f := finishedJob(hb, "j"); f.GetState() != pb.JobState_JOB_STATE_COMPLETED {
		t.Errorf("finished %v", f)
	}
	sched.setAckAll(true)
	waitStats(t, a, "the job acknowledged", func(s nodeagent.Stats) bool { return s.UnackedFinishedJobs == 0 })
}

func TestRunKillsJobsWhenItStops(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	sched := newFakeScheduler(t, nc, "n")
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The child sleeps in the background: the whole group must die.
	sched.start(shJob("j", `sleep 60 & echo $! > "$PIDFILE.tmp"; mv "$PIDFILE.tmp" "$PIDFILE"; wait`, map[string]string{"PIDFILE": pidFile}),
		simJob("sim", time.Hour))
	a, err := nodeagent.New(testConfig(t, "n"), nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	waitFile(t, pidFile)
	sched.waitRunning(t, "sim")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("Run did not return")
	}
	testutil.WaitFor(t, wait, "the background child to die", func() bool {
		return errors.Is(syscall.Kill(child, 0), syscall.ESRCH) || isZombie(child)
	})
	st := a.Stats()
	if st.RunningJobs != 0 || st.JobsAborted != 2 {
		t.Errorf("stats after Run returned: %+v", st)
	}
	if err := a.Run(context.Background()); !errors.Is(err, nodeagent.ErrAlreadyRunning) {
		t.Errorf("second Run: %v, want ErrAlreadyRunning", err)
	}
}

// isZombie reports whether pid has exited but is not reaped yet (its parent,
// the job's shell, was killed too, so init reaps it eventually).
func isZombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
