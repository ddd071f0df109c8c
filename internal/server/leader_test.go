package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// sharedNATSConfig is a scheduler joining the NATS server at url as name,
// with a short lease (2s) and a standby that retries every 50ms.
func sharedNATSConfig(t *testing.T, url, name string) server.Config {
	t.Helper()
	trees, err := scenario.ParseTrees("trees.yaml", []byte(treesYAML))
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.DefaultConfig()
	cfg.NATSURL, cfg.Trees, cfg.HTTPAddr = url, trees, ""
	cfg.Leader.Name, cfg.Leader.TTL, cfg.Leader.RetryPeriod = name, 2*time.Second, 50*time.Millisecond
	cfg.Actors.HeartbeatPeriod = 50 * time.Millisecond
	cfg.Actors.JobRevivalTimeout = time.Second
	cfg.Actors.ProgressPersistPeriod = 100 * time.Millisecond
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return cfg
}

// startStandby starts a scheduler in the background: Start returns only
// once it holds the lease. The server is closed when the test ends.
func startStandby(t *testing.T, cfg server.Config) <-chan *server.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan *server.Server, 1)
	var started atomic.Pointer[server.Server]
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv, err := server.Start(ctx, cfg)
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("standby %s: %v", cfg.Leader.Name, err)
			}
			return
		}
		started.Store(srv)
		out <- srv
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if srv := started.Load(); srv != nil {
			srv.Close()
		}
	})
	return out
}

// leaseWrites waits until the leader lease has been written n more times.
func leaseWrites(t *testing.T, js jetstream.JetStream, n int) {
	t.Helper()
	kv, err := js.KeyValue(context.Background(), subjects.LeaderBucket)
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	seen := -1
	testutil.WaitFor(t, 30*time.Second, "the leader's lease renewals", func() bool {
		e, err := kv.Get(context.Background(), subjects.LeaseKey)
		if err == nil && e.Revision() != last {
			last = e.Revision()
			seen++
		}
		return seen >= n
	})
}

// TestStandbyTakesOverWhenTheLeaderDies (reliability test 3): two
// schedulers share a NATS server. The second waits while the first leads;
// when the first dies without releasing its lease, the second takes over
// once the lease runs out, with a higher epoch, and the operation the first
// had started completes, each of its jobs run once and none aborted (the
// jobs running through the takeover are adopted).
func TestStandbyTakesOverWhenTheLeaderDies(t *testing.T) {
	ns := testutil.StartNATS(t)
	nc := testutil.Connect(t, ns)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	a, err := server.Start(context.Background(), sharedNATSConfig(t, ns.ClientURL(), "a"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	agent := servertest.StartAgent(t, ns.ClientURL(), "node-0", scheduler.Resources{scheduler.CPU: 2, scheduler.UserSlots: 2})
	cl := client.New(nc, 5*time.Second)
	id, err := cl.Submit(context.Background(), simulated("light", 8, 1, 1500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	bcfg := sharedNATSConfig(t, ns.ClientURL(), "b")
	bcfg.HTTPAddr = freeAddr(t)
	standby := startStandby(t, bcfg)
	leaseWrites(t, js, 4) // a renews past its TTL twice over
	select {
	case <-standby:
		t.Fatal("the standby started while the leader held its lease")
	default:
	}
	// The standby answers /healthz (503, its role) and /metrics meanwhile.
	code, h := getHealth(t, bcfg.HTTPAddr)
	if code != http.StatusServiceUnavailable || h.Role != "standby" || h.Leading || h.Name != "b" {
		t.Errorf("the standby's /healthz: %d %+v; want 503, role standby, not leading, name b", code, h)
	}
	if resp, err := http.Get("http://" + bcfg.HTTPAddr + "/metrics"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the standby's /metrics: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	testutil.WaitFor(t, 10*time.Second, "a job to start under the first leader", func() bool { return agent.Stats().JobsStarted > 0 })

	crashed := time.Now()
	a.Crash()
	if done := agent.Stats().JobsCompleted; done >= 8 {
		t.Fatalf("every job completed under the first leader (%d); the test needs some to run through the takeover", done)
	}
	var b *server.Server
	select {
	case b = <-standby:
	case <-time.After(30 * time.Second):
		t.Fatal("the standby did not take over")
	}
	t.Logf("the standby led %s after the leader's crash (lease TTL 2s)", time.Since(crashed).Round(time.Millisecond))
	if b.Epoch() <= a.Epoch() {
		t.Fatalf("the new leader's epoch %d is not above the old one's %d", b.Epoch(), a.Epoch())
	}
	var st *pb.OperationStatus
	testutil.WaitFor(t, 30*time.Second, "the operation to complete under the new leader", func() bool {
		st, err = cl.Get(context.Background(), id)
		return err == nil && st.GetState() == pb.OperationState_OPERATION_STATE_COMPLETED
	})
	if j := st.GetJobs(); j.GetCompleted() != 8 || j.GetFailed() != 0 || j.GetAborted() != 0 {
		t.Errorf("operation jobs %v, want 8 completed, none failed or aborted", j)
	}
	if code, h := getHealth(t, bcfg.HTTPAddr); code != http.StatusOK || h.Role != "leader" || !h.Leading || h.Epoch != b.Epoch() {
		t.Errorf("the new leader's /healthz: %d %+v; want 200, role leader, leading, epoch %d", code, h, b.Epoch())
	}
	if s := agent.Stats(); s.JobsStarted != 8 || s.JobsAborted != 0 || s.LeaderEpoch != b.Epoch() {
		t.Errorf("agent: %d jobs started, %d aborted, epoch %d; want 8 started once each, none aborted, epoch %d",
			s.JobsStarted, s.JobsAborted, s.LeaderEpoch, b.Epoch())
	}
}

// TestOldLeaderIsFenced (reliability test 4's writes): once a new leader
// has taken over, every write of the old one fails with ErrFenced (its
// operation statuses, its trees' states, its journal batches) and changes
// nothing, and it answers no request.
func TestOldLeaderIsFenced(t *testing.T) {
	ns := testutil.StartNATS(t)
	nc := testutil.Connect(t, ns)
	a, err := server.Start(context.Background(), sharedNATSConfig(t, ns.ClientURL(), "a"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	cl := client.New(nc, 5*time.Second)
	id, err := cl.Submit(context.Background(), simulated("light", 1, 1, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	before := storedStatus(t, nc, id)
	op := &pb.OperationStatus{Id: id, State: pb.OperationState_OPERATION_STATE_FAILED}
	tree := &pb.TreeState{Tree: "physical"}
	// Before the takeover, the same writes go through.
	if opErr, treeErr, jErr := a.FencedWrites(context.Background(), before, tree); opErr != nil || treeErr != nil || jErr != nil {
		t.Fatalf("the leader's writes: %v, %v, %v", opErr, treeErr, jErr)
	}

	// The process is paused: its lease is not renewed, and past the renew
	// deadline it stops acting as the leader, before the lease runs out and
	// the standby takes over.
	resume := a.PauseLease()
	testutil.WaitFor(t, 10*time.Second, "the paused leader to stop acting as one", func() bool { return !a.Leading() })
	b := <-startStandby(t, sharedNATSConfig(t, ns.ClientURL(), "b"))
	if b == nil {
		t.Fatal("the standby did not start")
	}
	resume()
	select {
	case <-a.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("the resumed old leader did not step down")
	}
	opErr, treeErr, jErr := a.FencedWrites(context.Background(), op, tree)
	for what, err := range map[string]error{"operation status": opErr, "tree state": treeErr, "journal batch": jErr} {
		if !errors.Is(err, server.ErrFenced) {
			t.Errorf("the old leader's %s write: %v, want ErrFenced", what, err)
		}
	}
	if n := a.FencedWriteCount(); n < 3 { // (its actors may have tried to write too)
		t.Errorf("the old leader counted %d fenced writes, want at least these 3", n)
	}
	if st := storedStatus(t, nc, id); st.GetState() != before.GetState() {
		t.Errorf("the stored operation is %v after the old leader's write, want %v", st.GetState(), before.GetState())
	}
	// The old leader's services stopped: every request reaches the new one.
	testutil.WaitFor(t, 10*time.Second, "the old leader's services to stop", func() bool {
		return !a.Serving()
	})
	for range 20 {
		if _, err := cl.Get(context.Background(), id); err != nil {
			t.Fatalf("get during the takeover: %v", err)
		}
	}
}

// freeAddr is a loopback address with a port nobody listened on a moment
// ago: a standby's HTTP listener, known before its Start returns.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// getHealth is the /healthz answer at addr.
func getHealth(t *testing.T, addr string) (int, server.Health) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h server.Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, h
}
