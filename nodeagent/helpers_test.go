package nodeagent_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// wait is the generous bound of every poll; tests never assert durations.
const wait = 20 * time.Second

// testLogger is quiet unless SHARETREE_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("SHARETREE_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func testConfig(t *testing.T, node string) nodeagent.Config {
	return nodeagent.Config{
		NodeID:           node,
		Resources:        scheduler.Resources{8, 16, 0, 64 << 30, 0},
		Tags:             []string{"rack-a", "ssd"},
		HeartbeatPeriod:  20 * time.Millisecond,
		HeartbeatTimeout: 5 * time.Second,
		WorkDir:          t.TempDir(),
		Incarnation:      "inc-" + node,
		Logger:           testLogger(),
	}
}

// startAgent runs an agent until the test ends (and checks Run's result).
func startAgent(t *testing.T, nc *nats.Conn, cfg nodeagent.Config) *nodeagent.Agent {
	t.Helper()
	a, err := nodeagent.New(cfg, nc)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(wait):
			t.Errorf("Run did not return after cancel")
		}
	})
	return a
}

// fakeScheduler plays the scheduler: it answers each heartbeat with the next
// queued response (or an empty one of its epoch), acking finished jobs when
// ackAll is set, and records every heartbeat.
type fakeScheduler struct {
	mu      sync.Mutex
	beats   []*pb.Heartbeat
	queue   []*pb.HeartbeatResponse
	epoch   uint64
	ackAll  bool
	replyFn func(s *fakeScheduler, m *nats.Msg) bool // answers instead, when it returns true
}

// opts set its behaviour before it subscribes.
func newFakeScheduler(t *testing.T, nc *nats.Conn, node string, opts ...func(*fakeScheduler)) *fakeScheduler {
	t.Helper()
	subj, err := subjects.NodeHeartbeat(node)
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeScheduler{}
	for _, o := range opts {
		o(s)
	}
	sub, err := nc.Subscribe(subj, func(m *nats.Msg) {
		hb := &pb.Heartbeat{}
		if err := proto.Unmarshal(m.Data, hb); err != nil {
			t.Errorf("undecodable heartbeat: %v", err)
			return
		}
		s.mu.Lock()
		s.beats = append(s.beats, hb)
		fn := s.replyFn
		var resp *pb.HeartbeatResponse
		if len(s.queue) > 0 {
			resp, s.queue = s.queue[0], s.queue[1:]
		} else {
			resp = &pb.HeartbeatResponse{LeaderEpoch: s.epoch}
		}
		if s.ackAll {
			for _, f := range hb.GetFinishedJobs() {
				resp.AcknowledgedFinishedJobs = append(resp.AcknowledgedFinishedJobs, f.GetJobId())
			}
		}
		s.mu.Unlock()
		if fn != nil && fn(s, m) {
			return
		}
		data, err := proto.Marshal(resp)
		if err != nil {
			t.Errorf("marshal response: %v", err)
			return
		}
		if err := m.Respond(data); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			t.Logf("respond: %v", err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return s
}

// push queues a response (with the scheduler's epoch unless it has one).
func (s *fakeScheduler) push(r *pb.HeartbeatResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.LeaderEpoch == 0 {
		r.LeaderEpoch = s.epoch
	}
	s.queue = append(s.queue, r)
}

func (s *fakeScheduler) start(specs ...*pb.JobSpec) {
	s.push(&pb.HeartbeatResponse{JobsToStart: specs})
}

func (s *fakeScheduler) setAckAll(v bool) {
	s.mu.Lock()
	s.ackAll = v
	s.mu.Unlock()
}

func (s *fakeScheduler) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.beats)
}

func (s *fakeScheduler) beatsSince(n int) []*pb.Heartbeat {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*pb.Heartbeat(nil), s.beats[min(n, len(s.beats)):]...)
}

// waitBeat waits for a heartbeat (received after the first `after`) that
// satisfies cond and returns it.
func (s *fakeScheduler) waitBeat(t *testing.T, after int, what string, cond func(*pb.Heartbeat) bool) *pb.Heartbeat {
	t.Helper()
	var found *pb.Heartbeat
	testutil.WaitFor(t, wait, what, func() bool {
		for _, hb := range s.beatsSince(after) {
			if cond(hb) {
				found = hb
				return true
			}
		}
		return false
	})
	return found
}

// waitFinished waits for a heartbeat reporting the job as finished.
func (s *fakeScheduler) waitFinished(t *testing.T, id string) *pb.FinishedJob {
	t.Helper()
	hb := s.waitBeat(t, 0, "job "+id+" reported finished", func(hb *pb.Heartbeat) bool { return finishedJob(hb, id) != nil })
	return finishedJob(hb, id)
}

// waitRunning waits for a heartbeat reporting the job as running.
func (s *fakeScheduler) waitRunning(t *testing.T, id string) {
	t.Helper()
	s.waitBeat(t, 0, "job "+id+" reported running", func(hb *pb.Heartbeat) bool { return runningJob(hb, id) != nil })
}

func finishedJob(hb *pb.Heartbeat, id string) *pb.FinishedJob {
	for _, f := range hb.GetFinishedJobs() {
		if f.GetJobId() == id {
			return f
		}
	}
	return nil
}

func runningJob(hb *pb.Heartbeat, id string) *pb.RunningJob {
	for _, r := range hb.GetRunningJobs() {
		if r.GetJobId() == id {
			return r
		}
	}
	return nil
}

func simJob(id string, d time.Duration) *pb.JobSpec {
	return &pb.JobSpec{JobId: id, OperationId: "op1", Resources: &pb.Resources{UserSlots: 1, Cpu: 2},
		Run: &pb.JobSpec_SimulatedDuration{SimulatedDuration: durationpb.New(d)}}
}

func cmdJob(id string, env map[string]string, argv ...string) *pb.JobSpec {
	return &pb.JobSpec{JobId: id, OperationId: "op1", Resources: &pb.Resources{UserSlots: 1, Cpu: 1},
		Run: &pb.JobSpec_Command{Command: &pb.Command{Argv: argv, Env: env}}}
}

func shJob(id, script string, env map[string]string) *pb.JobSpec {
	return cmdJob(id, env, "sh", "-c", script)
}

// waitStats polls the agent's stats until cond holds.
func waitStats(t *testing.T, a *nodeagent.Agent, what string, cond func(nodeagent.Stats) bool) nodeagent.Stats {
	t.Helper()
	var st nodeagent.Stats
	testutil.WaitFor(t, wait, what, func() bool { st = a.Stats(); return cond(st) })
	return st
}

// waitFile waits until the job has created path (its "ready" mark).
func waitFile(t *testing.T, path string) {
	t.Helper()
	testutil.WaitFor(t, wait, path+" to exist", func() bool { _, err := os.Stat(path); return err == nil })
}

// set changes the scheduler's behaviour under its lock.
func (s *fakeScheduler) set(f func(s *fakeScheduler)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}
