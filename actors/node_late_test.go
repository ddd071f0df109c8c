package actors

import (
	"context"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

type nopEvents struct{}

func (nopEvents) Publish(string, subjects.EventKind, *pb.Event) {}

type nopSignals struct{}

func (nopSignals) Signal(string, *pb.JobSignal) {}

type memStore struct{}

func (memStore) Put(context.Context, *pb.OperationStatus) error      { return nil }
func (memStore) List(context.Context) ([]*pb.OperationStatus, error) { return nil, nil }

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// await waits for a reply delivered on ch.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s within 10s", what)
	}
	var zero T
	return zero
}

type hbAnswer struct {
	resp *pb.HeartbeatResponse
	err  *pb.Error
}

// heartbeat sends hb and returns the response; an error answer fails the
// test.
func heartbeat(t *testing.T, sys *System, hb *pb.Heartbeat) *pb.HeartbeatResponse {
	t.Helper()
	answers := make(chan hbAnswer, 1)
	sys.Heartbeat(&NodeHeartbeat{Heartbeat: hb, Reply: func(r *pb.HeartbeatResponse, e *pb.Error) { answers <- hbAnswer{r, e} }})
	a := await(t, answers, "heartbeat answer")
	if a.err != nil {
		t.Fatalf("heartbeat %d of %s: %v", hb.GetSequence(), hb.GetNodeId(), a.err)
	}
	return a.resp
}

// A heartbeat the node actor gives up (its placer is stuck) must neither
// lose the jobs it reported finished nor have its late answer taken for the
// next heartbeat's.
func TestHeartbeatGivenUpKeepsFinishedJobsAndIgnoresTheLateAnswer(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg := DefaultConfig()
	cfg.Now, cfg.RequestTimeout = clock.Now, time.Second
	tree := TreeSpec{Name: "physical", Config: scheduler.DefaultTreeConfig()}
	sys, err := Start(cfg, Deps{Events: nopEvents{}, Signals: nopSignals{}, Store: memStore{}, Epoch: 1}, []TreeSpec{tree}, "physical", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Stop()

	submitted := make(chan string, 1)
	sys.Submit(&SubmitOperation{Spec: &pb.OperationSpec{Tasks: []*pb.TaskSpec{{
		Name: "t", JobCount: 4, JobResources: &pb.Resources{Cpu: 1},
		Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(time.Hour)},
	}}}, Reply: func(r *pb.StartOperationResponse, e *pb.Error) {
		if e != nil {
			t.Errorf("submit: %v", e)
		}
		submitted <- r.GetOperationId()
	}})
	opID := await(t, submitted, "submission")

	answers := make(chan hbAnswer, 4)
	beat := func(seq uint64, running []string, finished []string) {
		hb := &pb.Heartbeat{NodeId: "n1", Incarnation: "i1", Sequence: seq, ResourceLimits: &pb.Resources{Cpu: 2}}
		for _, id := range running {
			hb.RunningJobs = append(hb.RunningJobs, &pb.RunningJob{JobId: id})
		}
		for _, id := range finished {
			hb.FinishedJobs = append(hb.FinishedJobs, &pb.FinishedJob{JobId: id, State: pb.JobState_JOB_STATE_COMPLETED})
		}
		sys.Heartbeat(&NodeHeartbeat{Heartbeat: hb, Reply: func(r *pb.HeartbeatResponse, e *pb.Error) { answers <- hbAnswer{r, e} }})
	}
	// The first heartbeat registers the node; jobs start once it is known.
	var started []string
	for seq := uint64(1); len(started) < 2 && seq < 100; seq++ {
		beat(seq, started, nil)
		a := await(t, answers, "heartbeat answer")
		for _, j := range a.resp.GetJobsToStart() {
			started = append(started, j.GetJobId())
		}
		clock.advance(10 * time.Millisecond)
	}
	if len(started) != 2 {
		t.Fatalf("started %v, want 2 jobs on a 2-core node", started)
	}
	seq := uint64(200)

	// The placer gets stuck (its ledger is held) while a heartbeat that
	// reports one job completed waits for it.
	ledger := sys.dir.Load().trees[0].ledger
	ledger.mu.Lock()
	beat(seq, started[1:], started[:1])
	testutil.WaitFor(t, 10*time.Second, "the heartbeat to wait for the placer", func() bool {
		sys.router.mu.Lock()
		defer sys.router.mu.Unlock()
		return sys.router.nodes["n1"].live.inflight.Load() != 0
	})
	clock.advance(2 * time.Second)
	// The next heartbeat finds the first one overdue: it is given up.
	beat(seq+1, started[1:], started[:1])
	if a := await(t, answers, "the given-up heartbeat's answer"); a.err.GetCode() != pb.ErrorCode_ERROR_CODE_UNAVAILABLE {
		t.Fatalf("given-up heartbeat answered %v, %v; want UNAVAILABLE", a.resp, a.err)
	}
	ledger.mu.Unlock()
	a := await(t, answers, "the next heartbeat's answer")
	if a.err != nil {
		t.Fatalf("next heartbeat: %v", a.err)
	}
	// Whatever the late pass started went back to pending: the node is
	// told to start at most its one free core's worth.
	if n := len(a.resp.GetJobsToStart()); n > 1 {
		t.Errorf("the next heartbeat starts %d jobs on one free core (the late answer was taken for it)", n)
	}
	// The completed job reached its operation.
	got := make(chan *pb.OperationStatus, 1)
	testutil.WaitFor(t, 10*time.Second, "the completed job to reach its operation (it was lost with the given-up heartbeat)", func() bool {
		sys.Get(&GetOperation{ID: opID, Reply: func(st *pb.OperationStatus, _ *pb.Error) { got <- st }})
		return await(t, got, "status").GetJobs().GetCompleted() == 1
	})
}
