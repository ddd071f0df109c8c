package server_test

import (
	"context"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// bucket opens the key-value bucket name over nc.
func bucket(t *testing.T, nc *nats.Conn, name string) jetstream.KeyValue {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// storedStatus is operation id's status as the operations bucket holds
// it; nil when it holds none.
func storedStatus(t *testing.T, nc *nats.Conn, id string) *pb.OperationStatus {
	t.Helper()
	ctx := context.Background()
	kv := bucket(t, nc, subjects.OperationsBucket)
	key, err := subjects.OperationKey(id)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctx, key)
	if err != nil {
		return nil
	}
	st := &pb.OperationStatus{}
	if err := proto.Unmarshal(e.Value(), st); err != nil {
		t.Fatal(err)
	}
	return st
}

// storedCompleted is how many completed jobs the operations bucket holds
// for operation id.
func storedCompleted(t *testing.T, nc *nats.Conn, id string) int32 {
	t.Helper()
	var n int32
	for _, r := range storedStatus(t, nc, id).GetCompletedJobs() {
		n += r.GetCount()
	}
	return n
}

// restartable starts a scheduler that start starts again on the same store
// and port (heartbeats every 50 ms, a revival window of 1 s, completed jobs
// written every progress; then more changes the configuration).
func restartable(t *testing.T, progress time.Duration, more ...func(*server.Config)) (start func() (*server.Server, *nats.Conn), srv *server.Server, nc *nats.Conn) {
	t.Helper()
	dir := t.TempDir()
	port := -1
	start = func() (*server.Server, *nats.Conn) {
		return servertest.Start(t, treesYAML, func(c *server.Config) {
			c.DataDir, c.Port = dir, port
			c.Actors.HeartbeatPeriod = 50 * time.Millisecond
			c.Actors.JobRevivalTimeout = time.Second
			c.Actors.ProgressPersistPeriod = progress
			for _, f := range more {
				f(c)
			}
		})
	}
	srv, nc = start()
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if port, err = strconv.Atoi(u.Port()); err != nil {
		t.Fatal(err)
	}
	return start, srv, nc
}

// TestRestartRunsNoJobTwice: across a scheduler restart every job runs
// once. Jobs completed before it are stored with their operation and not
// run again; jobs that completed while the scheduler was down are learned
// from the agent; a job that runs through the restart is adopted, not
// aborted.
func TestRestartRunsNoJobTwice(t *testing.T) {
	start, srv, nc := restartable(t, 100*time.Millisecond)

	// One agent with three cores, on a connection that keeps reconnecting.
	agent := servertest.StartAgent(t, srv.URL(), "node-0", scheduler.Resources{scheduler.CPU: 3, scheduler.UserSlots: 3})

	cl := client.New(nc, 5*time.Second)
	long, err := cl.Submit(context.Background(), simulated("light", 1, 1, 3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	short, err := cl.Submit(context.Background(), simulated("light", 6, 1, 300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "two short jobs completed and stored", func() bool {
		return storedCompleted(t, nc, short) >= 2
	})
	completedBefore := agent.Stats().JobsCompleted
	srv.Close()
	// Jobs end while no scheduler listens; the agent keeps them.
	testutil.WaitFor(t, 10*time.Second, "a job to complete while the scheduler is down", func() bool {
		return agent.Stats().JobsCompleted > completedBefore
	})

	_, nc = start()
	cl = client.New(nc, 5*time.Second)
	for _, id := range []string{long, short} {
		var st *pb.OperationStatus
		testutil.WaitFor(t, 20*time.Second, "operation "+id+" to complete after the restart", func() bool {
			st, err = cl.Get(context.Background(), id)
			return err == nil && st.GetState() == pb.OperationState_OPERATION_STATE_COMPLETED
		})
		if j := st.GetJobs(); j.GetCompleted() != j.GetTotal() || j.GetFailed() != 0 || j.GetAborted() != 0 {
			t.Errorf("operation %s jobs %v, want every one completed, none failed or aborted", id, j)
		}
	}
	s := agent.Stats()
	if s.JobsStarted != 7 || s.JobsAborted != 0 {
		t.Errorf("the agent started %d jobs and aborted %d; want each of the 7 jobs started once and none aborted", s.JobsStarted, s.JobsAborted)
	}
}
