package server_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

const treesYAML = `
version: 1
trees:
  - name: physical
    config: {fair_share_update_period: 50ms}
    pools:
      - {name: light, weight: 1}
      - {name: heavy, weight: 3}
      - {name: narrow, max_running_operation_count: 1}
`

// cluster is a scheduler with its embedded NATS and in-process agents.
type cluster struct {
	srv    *server.Server
	nc     *nats.Conn
	client *client.Client
	agents []*nodeagent.Agent
}

func startCluster(t *testing.T, nodes int, res scheduler.Resources) *cluster {
	t.Helper()
	return startClusterTagged(t, nodes, res, nil)
}

// startClusterTagged starts agents whose tags tagsOf gives (nil: none).
func startClusterTagged(t *testing.T, nodes int, res scheduler.Resources, tagsOf func(i int) []string) *cluster {
	t.Helper()
	return startClusterWith(t, treesYAML, nodes, res, tagsOf)
}

// startClusterWith runs the trees document given.
func startClusterWith(t *testing.T, treesDoc string, nodes int, res scheduler.Resources, tagsOf func(i int) []string) *cluster {
	t.Helper()
	return startClusterConfigured(t, treesDoc, nodes, res, tagsOf, nil)
}

// startClusterConfigured is startClusterWith with configure applied to
// the server's configuration last (when not nil).
func startClusterConfigured(t *testing.T, treesDoc string, nodes int, res scheduler.Resources, tagsOf func(i int) []string, configure func(*server.Config)) *cluster {
	t.Helper()
	ctx := context.Background()
	srv, nc := servertest.Start(t, treesDoc, func(cfg *server.Config) {
		cfg.Actors.HeartbeatPeriod = 50 * time.Millisecond
		cfg.Actors.FairShareEventPeriod = 100 * time.Millisecond
		if configure != nil {
			configure(cfg)
		}
	})
	c := &cluster{srv: srv, nc: nc, client: client.New(nc, 5*time.Second)}
	actx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for i := range nodes {
		acfg := nodeagent.DefaultConfig(fmt.Sprintf("node-%d", i), res)
		acfg.HeartbeatPeriod = 50 * time.Millisecond
		acfg.WorkDir = t.TempDir()
		if tagsOf != nil {
			acfg.Tags = tagsOf(i)
		}
		a, err := nodeagent.New(acfg, nc)
		if err != nil {
			t.Fatal(err)
		}
		c.agents = append(c.agents, a)
		wg.Add(1)
		go func() { defer wg.Done(); _ = a.Run(actx) }()
	}
	testutil.WaitFor(t, 10*time.Second, "every node to register", func() bool {
		var cpu float64
		for _, tree := range srv.System().Trees() {
			if r := srv.System().Result(tree); r != nil {
				cpu += r.Total[scheduler.CPU]
			}
		}
		return cpu == float64(nodes)*res[scheduler.CPU]
	})
	return c
}

func simulated(pool string, jobs int32, cpu float64, d time.Duration) *pb.OperationSpec {
	return &pb.OperationSpec{Pool: pool, Tasks: []*pb.TaskSpec{{
		Name: "main", JobCount: jobs, JobResources: &pb.Resources{Cpu: cpu, UserSlots: 1},
		Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(d)},
	}}}
}

func (c *cluster) submit(t *testing.T, spec *pb.OperationSpec) string {
	t.Helper()
	id, err := c.client.Submit(context.Background(), spec)
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	return id
}

func (c *cluster) waitState(t *testing.T, id string, want pb.OperationState, timeout time.Duration) *pb.OperationStatus {
	t.Helper()
	var st *pb.OperationStatus
	testutil.WaitFor(t, timeout, fmt.Sprintf("operation %s to be %s", id, want), func() bool {
		var err error
		st, err = c.client.Get(context.Background(), id)
		return err == nil && st.GetState() == want
	})
	return st
}

// events reads every event of the stream matching filter, once every
// event the scheduler has accepted so far is stored (the sink publishes
// asynchronously).
func (c *cluster) events(t *testing.T, filter string) []*pb.Event {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, "the scheduler's events to be stored", c.srv.EventsSettled)
	return c.readEvents(t, filter)
}

// eventsWhen reads the events matching filter until done accepts them (the
// scheduler may publish events some time after the state a test waited
// for, a batch of job ends, say), and returns those it accepted.
func (c *cluster) eventsWhen(t *testing.T, filter, what string, done func([]*pb.Event) bool) []*pb.Event {
	t.Helper()
	var evs []*pb.Event
	testutil.WaitFor(t, 20*time.Second, what, func() bool {
		evs = c.readEvents(t, filter)
		return done(evs)
	})
	return evs
}

// readEvents reads every event of the stream matching filter.
func (c *cluster) readEvents(t *testing.T, filter string) []*pb.Event {
	t.Helper()
	ctx := context.Background()
	js, err := jetstream.New(c.nc)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := js.OrderedConsumer(ctx, subjects.EventsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
	if err != nil {
		t.Fatal(err)
	}
	var out []*pb.Event
	for {
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.NumPending == 0 {
			return out
		}
		msg, err := cons.Next(jetstream.FetchMaxWait(2 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		ev := &pb.Event{}
		if err := proto.Unmarshal(msg.Data(), ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
}

func TestUsageConvergesToFairShareAndJobsRunOnce(t *testing.T) {
	c := startCluster(t, 4, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4, scheduler.Memory: 4 << 30})
	light := c.submit(t, simulated("light", 400, 1, 150*time.Millisecond))
	heavy := c.submit(t, simulated("heavy", 400, 1, 150*time.Millisecond))

	// Saturated, the engine gives light 1/4 and heavy 3/4 of the 16 cpus;
	// live usage (read from the latest update) must track it.
	testutil.WaitFor(t, 20*time.Second, "usage to converge to fair share", func() bool {
		r := c.srv.System().Result("physical")
		if r == nil {
			return false
		}
		ok := true
		for _, name := range []string{"light", "heavy"} {
			e, found := r.Element(name)
			if !found || math.Abs(e.UsageShare[scheduler.CPU]-e.FairShare.Total[scheduler.CPU]) > 0.13 || e.FairShare.Total[scheduler.CPU] == 0 {
				ok = false
			}
		}
		h, _ := r.Element("heavy")
		return ok && math.Abs(h.FairShare.Total[scheduler.CPU]-0.75) < 0.01
	})

	for _, id := range []string{light, heavy} {
		st := c.waitState(t, id, pb.OperationState_OPERATION_STATE_COMPLETED, 60*time.Second)
		if got := st.GetJobs().GetCompleted(); got != 400 {
			t.Errorf("%s: %d jobs completed, want 400", id, got)
		}
	}
	// Every job of both operations completed exactly once, according to
	// the event stream.
	filter, _ := subjects.EventsFilter("physical", subjects.EventJob)
	var done map[string]int
	c.eventsWhen(t, filter, "job events of 800 distinct completed jobs", func(evs []*pb.Event) bool {
		done = map[string]int{}
		for _, ev := range evs {
			for _, j := range ev.GetJobs().GetJobs() {
				if j.GetState() == pb.JobState_JOB_STATE_COMPLETED {
					op, task, idx := splitJob(t, j.GetJobId())
					done[fmt.Sprintf("%s/%s/%s", op, task, idx)]++
				}
			}
		}
		return len(done) >= 800
	})
	if len(done) != 800 {
		t.Errorf("%d distinct jobs completed, want 800", len(done))
	}
	for k, n := range done {
		if n != 1 {
			t.Errorf("job %s completed %d times", k, n)
		}
	}
	// The operation events hold each transition.
	filter, _ = subjects.EventsFilter("physical", subjects.EventOperation)
	var transitions []string
	for _, ev := range c.events(t, filter) {
		if o := ev.GetOperation(); o.GetOperationId() == heavy {
			transitions = append(transitions, o.GetTo().String())
		}
	}
	want := []string{"OPERATION_STATE_RUNNING", "OPERATION_STATE_COMPLETED"}
	if fmt.Sprint(transitions) != fmt.Sprint(want) {
		t.Errorf("transitions of %s = %v, want %v", heavy, transitions, want)
	}
}

// splitJob returns a job id's operation, task and index
// ("<operation>.<task>.<index>.<attempt>.<epoch>").
func splitJob(t *testing.T, id string) (string, string, string) {
	t.Helper()
	parts := strings.Split(id, ".")
	if len(parts) != 5 {
		t.Fatalf("job id %q is not <operation>.<task>.<index>.<attempt>.<epoch>", id)
	}
	return parts[0], parts[1], parts[2]
}

func TestRunningLimitQueuesAndAbortFreesTheSlot(t *testing.T) {
	c := startCluster(t, 2, scheduler.Resources{scheduler.CPU: 2, scheduler.UserSlots: 2})
	first := c.submit(t, simulated("narrow", 1000, 1, time.Hour))
	second := c.submit(t, simulated("narrow", 1, 1, 10*time.Millisecond))
	c.waitState(t, first, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)
	st := c.waitState(t, second, pb.OperationState_OPERATION_STATE_PENDING, 10*time.Second)
	r := st.GetTrees()[0].GetPendingReason()
	if r.GetPool() != "narrow" || r.GetLimit() != "max_running_operation_count" || r.GetValue() != 1 || r.GetQueuePosition() != 0 {
		t.Errorf("pending reason = %v", r)
	}
	testutil.WaitFor(t, 10*time.Second, "first operation's jobs to run", func() bool {
		s, err := c.client.Get(context.Background(), first)
		return err == nil && s.GetJobs().GetRunning() == 4
	})
	if _, err := c.client.Abort(context.Background(), first, "test"); err != nil {
		t.Fatal(err)
	}
	c.waitState(t, first, pb.OperationState_OPERATION_STATE_ABORTED, 10*time.Second)
	c.waitState(t, second, pb.OperationState_OPERATION_STATE_COMPLETED, 20*time.Second)
	// The aborted operation's jobs were killed on the nodes.
	testutil.WaitFor(t, 10*time.Second, "aborted jobs to leave the nodes", func() bool {
		for _, a := range c.agents {
			if a.Stats().RunningJobs != 0 {
				return false
			}
		}
		return true
	})
	var apiErr *client.APIError
	if _, err := c.client.Abort(context.Background(), first, "again"); !errors.As(err, &apiErr) || apiErr.Code() != pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION {
		t.Errorf("second abort: %v, want FAILED_PRECONDITION", err)
	}
}

func TestFailedJobsAreRetriedThenFailTheOperation(t *testing.T) {
	c := startCluster(t, 1, scheduler.Resources{scheduler.CPU: 2, scheduler.UserSlots: 2})
	spec := &pb.OperationSpec{Pool: "light", MaxFailedJobCount: 2, Tasks: []*pb.TaskSpec{{
		Name: "bad", JobCount: 1, JobResources: &pb.Resources{Cpu: 1},
		Run: &pb.TaskSpec_Command{Command: &pb.Command{Argv: []string{"sh", "-c", "echo boom >&2; exit 3"}}},
	}}}
	id := c.submit(t, spec)
	st := c.waitState(t, id, pb.OperationState_OPERATION_STATE_FAILED, 30*time.Second)
	if st.GetJobs().GetFailed() != 3 {
		t.Errorf("failed jobs = %d, want 3 (max_failed_job_count 2, then one more)", st.GetJobs().GetFailed())
	}
	if msg := st.GetError().GetMessage(); msg == "" {
		t.Errorf("failed operation has no error")
	}
}

func TestBadInputIsRefusedWithTypedErrors(t *testing.T) {
	c := startCluster(t, 1, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4})
	ctx := context.Background()
	garbage := []byte{0xff, 0xff, 0xff}
	hb, _ := subjects.NodeHeartbeat("node-0")
	get, _ := subjects.Op("op-1-1", subjects.OpGet)
	abort, _ := subjects.Op("op-1-1", subjects.OpAbort)
	update, _ := subjects.Op("op-1-1", subjects.OpUpdate)
	for _, subj := range []string{hb, subjects.OpSubmit(), subjects.OpList(), get, abort, update} {
		var apiErr *client.APIError
		err := c.client.CallRaw(ctx, subj, garbage, &pb.Error{})
		if !errors.As(err, &apiErr) || apiErr.Code() != pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT || apiErr.Err.GetField() != "payload" {
			t.Errorf("%s with a garbage payload: %v, want INVALID_ARGUMENT on payload", subj, err)
		}
	}
	// A heartbeat naming another node than its subject.
	var apiErr *client.APIError
	err := c.client.Call(ctx, hb, &pb.Heartbeat{NodeId: "node-7", Incarnation: "x", Sequence: 1}, &pb.HeartbeatResponse{})
	if !errors.As(err, &apiErr) || apiErr.Code() != pb.ErrorCode_ERROR_CODE_NODE_MISMATCH {
		t.Errorf("mismatched heartbeat: %v, want NODE_MISMATCH", err)
	}
	// Specs refused with the field named.
	bad := []struct {
		name  string
		spec  *pb.OperationSpec
		code  pb.ErrorCode
		field string
	}{
		{"no tasks", &pb.OperationSpec{Pool: "light"}, pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "spec.tasks"},
		{"unknown pool", simulated("nope", 1, 1, time.Second), pb.ErrorCode_ERROR_CODE_NOT_FOUND, "spec.pool"},
		{"never fits", simulated("light", 1, 64, time.Second), pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "spec.tasks[0].job_resources"},
		{"zero jobs", simulated("light", 0, 1, time.Second), pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "spec.tasks[0].job_count"},
		{"unknown tree", func() *pb.OperationSpec {
			s := simulated("light", 1, 1, time.Second)
			s.PoolTrees = []string{"gpu"}
			return s
		}(), pb.ErrorCode_ERROR_CODE_NOT_FOUND, "spec.pool_trees[0]"},
		{"bad weight", func() *pb.OperationSpec {
			s := simulated("light", 1, 1, time.Second)
			w := -1.0
			s.Weight = &w
			return s
		}(), pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "spec.weight"},
	}
	for _, tc := range bad {
		_, err := c.client.Submit(ctx, tc.spec)
		if !errors.As(err, &apiErr) || apiErr.Code() != tc.code || apiErr.Err.GetField() != tc.field {
			t.Errorf("%s: %v, want %s on %s", tc.name, err, tc.code, tc.field)
		}
	}
	// Nothing was created.
	ops, err := c.client.List(ctx, &pb.ListOperationsRequest{})
	if err != nil || len(ops) != 0 {
		t.Errorf("after refused input: %d operations, %v; want none", len(ops), err)
	}
	if _, err := c.client.Get(ctx, "op-9-9"); !errors.As(err, &apiErr) || apiErr.Code() != pb.ErrorCode_ERROR_CODE_NOT_FOUND {
		t.Errorf("get of unknown operation: %v, want NOT_FOUND", err)
	}
}

// TestHeartbeatsOfManyNodes: thirty nodes' heartbeats are each answered
// with the period, a mismatched one refused in micro's format.
func TestHeartbeatsOfManyNodes(t *testing.T) {
	var cfg server.Config
	srv, nc := servertest.Start(t, treesYAML, func(c *server.Config) { cfg = *c })
	cl := client.New(nc, 10*time.Second)
	ctx := context.Background()
	limits := &pb.Resources{Cpu: 4, UserSlots: 4}
	for i := range 30 {
		node := fmt.Sprintf("many-%d", i)
		hb, _ := subjects.NodeHeartbeat(node)
		resp := &pb.HeartbeatResponse{}
		if err := cl.Call(ctx, hb, &pb.Heartbeat{NodeId: node, Incarnation: "x", Sequence: 1, ResourceLimits: limits}, resp); err != nil {
			t.Fatalf("heartbeat %d: %v", i, err)
		}
		if resp.GetHeartbeatPeriod().AsDuration() != cfg.Actors.HeartbeatPeriod {
			t.Errorf("heartbeat %d: period %v, want %v", i, resp.GetHeartbeatPeriod().AsDuration(), cfg.Actors.HeartbeatPeriod)
		}
		var apiErr *client.APIError
		err := cl.Call(ctx, hb, &pb.Heartbeat{NodeId: "someone-else", Incarnation: "x", Sequence: 1}, &pb.HeartbeatResponse{})
		if !errors.As(err, &apiErr) || apiErr.Code() != pb.ErrorCode_ERROR_CODE_NODE_MISMATCH || apiErr.Err.GetField() != "node_id" {
			t.Errorf("mismatched heartbeat %d: %v, want NODE_MISMATCH on node_id", i, err)
		}
	}
	testutil.WaitFor(t, 10*time.Second, "30 nodes", func() bool { return srv.System().NodeCount() == 30 })
}

// TestSilentNodeIsLostAndItsJobRunsElsewhere: a node that falls silent goes
// offline, then is lost and forgotten; its job runs again on a node that
// keeps heartbeating, which stays.
func TestSilentNodeIsLostAndItsJobRunsElsewhere(t *testing.T) {
	const period = 20 * time.Millisecond // the agent's heartbeat period
	srv, nc := servertest.Start(t, treesYAML, func(c *server.Config) {
		c.Actors.HeartbeatPeriod = period
		c.Actors.NodeOfflineTimeout, c.Actors.NodeLostTimeout = 200*time.Millisecond, 400*time.Millisecond
	})
	cl := client.New(nc, 10*time.Second)
	ctx := context.Background()
	seqs := map[string]uint64{}
	beat := func(node string, cpu float64, running []string) *pb.HeartbeatResponse {
		t.Helper()
		subj, _ := subjects.NodeHeartbeat(node)
		seqs[node]++
		hb := &pb.Heartbeat{NodeId: node, Incarnation: "x", Sequence: seqs[node], ResourceLimits: &pb.Resources{Cpu: cpu, UserSlots: 1}}
		for _, id := range running {
			hb.RunningJobs = append(hb.RunningJobs, &pb.RunningJob{JobId: id})
		}
		resp := &pb.HeartbeatResponse{}
		if err := cl.Call(ctx, subj, hb, resp); err != nil {
			t.Fatalf("heartbeat of %s: %v", node, err)
		}
		return resp
	}
	// The silent node joins first and gets the only job.
	beat("silent", 1, nil)
	if _, err := cl.Submit(ctx, simulated("light", 1, 1, time.Hour)); err != nil {
		t.Fatal(err)
	}
	var started []*pb.JobSpec
	testutil.WaitFor(t, 10*time.Second, "the silent node starts the job", func() bool {
		started = beat("silent", 1, nil).GetJobsToStart()
		return len(started) == 1
	})
	// The other node keeps heartbeating; the silent node is forgotten and
	// the job starts on the other one.
	var again []*pb.JobSpec
	testutil.WaitFor(t, 10*time.Second, "the job runs again on the other node", func() bool {
		time.Sleep(period) // a heartbeating agent's pace, not a wait for a state
		again = beat("steady", 1, nil).GetJobsToStart()
		return len(again) == 1
	})
	if again[0].GetJobIndex() != started[0].GetJobIndex() || again[0].GetAttempt() <= started[0].GetAttempt() {
		t.Errorf("restarted job %s (attempt %d), want job %s again with a later attempt", again[0].GetJobId(), again[0].GetAttempt(), started[0].GetJobId())
	}
	testutil.WaitFor(t, 10*time.Second, "the silent node forgotten", func() bool {
		beat("steady", 1, []string{again[0].GetJobId()})
		return srv.System().NodeCount() == 1
	})
}
