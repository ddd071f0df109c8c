package server_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// TestNATSServerRestartsUnderLoad (reliability test 5): a scheduler with
// three replicas of everything on a three-server NATS cluster, four
// agents, and a client submitting an operation every 100 ms; every 5 s one
// of the NATS servers, chosen by a seeded generator, is shut down and
// started again on its store (the scheduler's own among them). Over the
// run (SHARETREE_NATS_RESTARTS_DURATION, default 20 s; the row asks
// 3 min): no acknowledged operation is lost — each completes, its final
// status stored —, each job runs once, none is aborted, the scheduler
// keeps leading, and once the churn stops every stream's replicas on the
// restarted servers catch up. The longest time any agent went without an
// answered heartbeat is logged, not asserted.
func TestNATSServerRestartsUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts the servers of a three-server NATS cluster")
	}
	duration := envDuration(t, "SHARETREE_NATS_RESTARTS_DURATION", 20*time.Second)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	cluster := testutil.StartNATSCluster(t, 3)
	url := cluster.URLs()
	cfg := sharedNATSConfig(t, url, "a")
	cfg.Replicas, cfg.Leader.TTL = 3, 10*time.Second
	srv, err := server.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	epoch := srv.Epoch()

	agents := make([]*nodeagent.Agent, 4)
	for i := range agents {
		agents[i] = servertest.StartAgent(t, url, "node-"+string(rune('a'+i)), scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4})
	}
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	cl := client.New(nc, 5*time.Second)
	ctx := context.Background()

	// The longest gap between two answered heartbeats of any agent.
	var gapMu sync.Mutex
	var maxGap time.Duration
	stopWatch := make(chan struct{})
	var watched sync.WaitGroup
	watched.Go(func() {
		last := make([]time.Time, len(agents))
		ok := make([]uint64, len(agents))
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopWatch:
				return
			case now := <-tick.C:
				for i, a := range agents {
					if n := a.Stats().HeartbeatsOK; n != ok[i] || last[i].IsZero() {
						ok[i], last[i] = n, now
					}
					gapMu.Lock()
					maxGap = max(maxGap, now.Sub(last[i]))
					gapMu.Unlock()
				}
			}
		}
	})

	// Submissions every 100 ms until the churn ends.
	var acked []string
	refused := 0
	stopSubmitting := make(chan struct{})
	var submitted sync.WaitGroup
	submitted.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopSubmitting:
				return
			case <-tick.C:
				if id, err := cl.Submit(ctx, simulated("light", 2, 1, 300*time.Millisecond)); err == nil {
					acked = append(acked, id)
				} else {
					refused++
				}
			}
		}
	})

	restarts := 0
	churn := time.NewTicker(5 * time.Second)
	deadline := time.After(duration)
loop:
	for {
		select {
		case <-churn.C:
			cluster.Restart(rng.IntN(3))
			restarts++
		case <-deadline:
			break loop
		}
	}
	churn.Stop()
	close(stopSubmitting)
	submitted.Wait()
	if len(acked) == 0 {
		t.Fatal("no submission was acknowledged")
	}

	// Every acknowledged operation completes, its final status stored.
	for _, id := range acked {
		testutil.WaitFor(t, 2*time.Minute, "operation "+id+" to complete and be stored", func() bool {
			st, err := cl.Get(ctx, id)
			return err == nil && st.GetState() == pb.OperationState_OPERATION_STATE_COMPLETED &&
				storedStatus(t, nc, id).GetState() == pb.OperationState_OPERATION_STATE_COMPLETED
		})
	}
	close(stopWatch)
	watched.Wait()
	list, err := cl.List(ctx, &pb.ListOperationsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var completed int64
	ackedSet := map[string]bool{}
	for _, id := range acked {
		ackedSet[id] = true
	}
	others := map[string]int{} // the states of the operations no submission was acknowledged
	for _, op := range list {
		if !ackedSet[op.GetId()] {
			others[op.GetState().String()]++
		}
		if op.GetState() == pb.OperationState_OPERATION_STATE_RUNNING || op.GetState() == pb.OperationState_OPERATION_STATE_PENDING {
			testutil.WaitFor(t, time.Minute, "operation "+op.GetId()+" (not acknowledged, stored) to end", func() bool {
				st, err := cl.Get(ctx, op.GetId())
				if err == nil {
					op = st
				}
				return err == nil && st.GetState() != pb.OperationState_OPERATION_STATE_RUNNING && st.GetState() != pb.OperationState_OPERATION_STATE_PENDING
			})
		}
		completed += op.GetJobs().GetCompleted()
	}
	st := agentFleet(agents).sum()
	if st.JobsCompleted != uint64(completed) || st.DuplicateStarts != 0 || st.JobsAborted != 0 || st.JobsOverCapacity != 0 {
		t.Errorf("the agents started %d jobs (%d duplicates, %d beyond capacity), completed %d, aborted %d; the operations completed %d: want each job run once, within capacity, none aborted",
			st.JobsStarted, st.DuplicateStarts, st.JobsOverCapacity, st.JobsCompleted, st.JobsAborted, completed)
	}
	if !srv.Leading() || srv.Epoch() != epoch {
		t.Errorf("the scheduler leads %v at epoch %d (was %d): want it leading throughout", srv.Leading(), srv.Epoch(), epoch)
	}

	// The restarted servers catch up: every stream's replicas current.
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{subjects.KVStream(subjects.OperationsBucket), subjects.KVStream(subjects.SchedulerBucket),
		subjects.KVStream(subjects.LeaderBucket), subjects.CompletionsStream} {
		testutil.WaitFor(t, time.Minute, "stream "+name+"'s replicas to catch up", func() bool {
			s, err := js.Stream(ctx, name)
			if err != nil {
				return false
			}
			info, err := s.Info(ctx)
			if err != nil || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
				return false
			}
			for _, r := range info.Cluster.Replicas {
				if !r.Current || r.Offline || r.Lag != 0 {
					return false
				}
			}
			return true
		})
	}
	gapMu.Lock()
	defer gapMu.Unlock()
	t.Logf("%s: %d NATS server restarts; %d operations acknowledged (%d submissions refused), %d listed (the others: %v), %d jobs each run once; longest time an agent went without an answered heartbeat %s",
		duration, restarts, len(acked), refused, len(list), others, completed, maxGap.Round(10*time.Millisecond))
}
