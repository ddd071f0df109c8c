package actors

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// adoptHarness is a scheduler restarted with revived operations, on a
// settable clock, with heartbeats sent by hand.
type adoptHarness struct {
	t       *testing.T
	clock   *fakeClock
	sys     *System
	seq     map[string]uint64
	signals *recordedSignals
}

// recordedSignals keeps the job signals sent.
type recordedSignals struct {
	mu   sync.Mutex
	sent []*pb.JobSignal
}

func (r *recordedSignals) Signal(_ string, s *pb.JobSignal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, s)
}

// aborted lists the ids of the jobs whose abort was signalled.
func (r *recordedSignals) aborted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.sent {
		if a := s.GetAbort(); a != nil {
			out = append(out, a.GetJobId())
		}
	}
	slices.Sort(out)
	return out
}

func startRevived(t *testing.T, revived ...*pb.OperationStatus) *adoptHarness {
	t.Helper()
	return startHarness(t, nil, revived...)
}

// startHarness is startRevived with deps changed by with (nil: none).
func startHarness(t *testing.T, with func(*Deps), revived ...*pb.OperationStatus) *adoptHarness {
	t.Helper()
	return startHarnessConfig(t, nil, with, revived...)
}

// startHarnessConfig is startHarness with the configuration changed by
// config (nil: none).
func startHarnessConfig(t *testing.T, config func(*Config), with func(*Deps), revived ...*pb.OperationStatus) *adoptHarness {
	t.Helper()
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg := DefaultConfig()
	cfg.Now, cfg.JobRevivalTimeout = clock.Now, 10*time.Second
	if config != nil {
		config(&cfg)
	}
	tree := TreeSpec{Name: "physical", Config: scheduler.DefaultTreeConfig()}
	signals := &recordedSignals{}
	deps := Deps{Events: nopEvents{}, Signals: signals, Store: memStore{}, Epoch: 2}
	if with != nil {
		with(&deps)
	}
	sys, err := Start(cfg, deps, []TreeSpec{tree}, "physical", revived)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sys.Stop)
	return &adoptHarness{t: t, clock: clock, sys: sys, seq: map[string]uint64{}, signals: signals}
}

// beat sends one heartbeat of node (8 cpu) reporting running and finished
// jobs (finished: id → state) and returns the answer.
func (h *adoptHarness) beat(node string, running []string, finished map[string]pb.JobState) *pb.HeartbeatResponse {
	h.t.Helper()
	h.seq[node]++
	hb := &pb.Heartbeat{NodeId: node, Incarnation: "i1", Sequence: h.seq[node], ResourceLimits: &pb.Resources{Cpu: 8}}
	for _, id := range running {
		hb.RunningJobs = append(hb.RunningJobs, &pb.RunningJob{JobId: id})
	}
	ids := make([]string, 0, len(finished))
	for id := range finished {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		hb.FinishedJobs = append(hb.FinishedJobs, &pb.FinishedJob{JobId: id, State: finished[id]})
	}
	return heartbeat(h.t, h.sys, hb)
}

func (h *adoptHarness) status(id string) *pb.OperationStatus {
	h.t.Helper()
	got := make(chan *pb.OperationStatus, 1)
	h.sys.Get(&GetOperation{ID: id, Reply: func(st *pb.OperationStatus, _ *pb.Error) { got <- st }})
	return await(h.t, got, "status")
}

// waitJobs waits for an operation's running and completed job counts.
func (h *adoptHarness) waitJobs(id string, running, completed int64) {
	h.t.Helper()
	testutil.WaitFor(h.t, 10*time.Second, "the job counts of "+id, func() bool {
		j := h.status(id).GetJobs()
		return j.GetRunning() == running && j.GetCompleted() == completed
	})
}

// submitStarted submits an operation of jobs one-cpu jobs and beats node
// n1 until all of them started; it returns the operation's id and the
// started jobs' ids.
func (h *adoptHarness) submitStarted(jobs int32) (string, []string) {
	h.t.Helper()
	op := h.submit(jobs)
	var started []string
	testutil.WaitFor(h.t, 10*time.Second, "the jobs to start", func() bool {
		started = append(started, startIDs(h.beat("n1", started, nil))...)
		return len(started) == int(jobs)
	})
	return op, started
}

func startIDs(r *pb.HeartbeatResponse) []string {
	var out []string
	for _, s := range r.GetJobsToStart() {
		out = append(out, s.GetJobId())
	}
	return out
}

func aborts(r *pb.HeartbeatResponse) map[string]string {
	out := map[string]string{}
	for _, a := range r.GetJobsToAbort() {
		out[a.GetJobId()] = a.GetReason()
	}
	return out
}

func revivedOp(id string, jobs int32) *pb.OperationStatus {
	return &pb.OperationStatus{
		Id: id, State: pb.OperationState_OPERATION_STATE_RUNNING,
		SubmitTime: timestamppb.New(time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)),
		Spec: &pb.OperationSpec{Tasks: []*pb.TaskSpec{{
			Name: "t", JobCount: jobs, JobResources: &pb.Resources{Cpu: 1},
			Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(time.Hour)},
		}}},
	}
}

// After a restart the node actors adopt the jobs the nodes still run
// and credit those that completed meanwhile; until JobRevivalTimeout the
// revived operation starts nothing (a fresh one does), and jobs of
// operations not scheduled are left running; after it the jobs nobody
// reported start, such jobs are aborted, and a retry of an adopted job
// takes the next attempt.
func TestRestartAdoptsTheNodesJobs(t *testing.T) {
	h := startRevived(t, revivedOp("op-1-1", 5))
	ledger := h.sys.dir.Load().trees[0].ledger
	testutil.WaitFor(t, 10*time.Second, "the revived operation to be scheduled", func() bool { return ledger.hasOperation("op-1-1") })

	// Jobs the scheduler of epoch 1 started, one with an id of before
	// epochs were part of ids (op-1-1.0.2.3); this one's epoch is 2.
	running := []string{"op-1-1.0.1.2.1", "op-1-1.0.2.3", "ghost-9.0.0.0", "not-a-job"}
	finished := map[string]pb.JobState{
		"op-1-1.0.0.0.1": pb.JobState_JOB_STATE_COMPLETED, // completed while no scheduler listened
		"ghost-9.0.1.0":  pb.JobState_JOB_STATE_COMPLETED, // not scheduled (yet): not acknowledged
	}
	r := h.beat("n1", running, finished)
	if diff := cmp.Diff([]string{"op-1-1.0.0.0.1"}, r.GetAcknowledgedFinishedJobs()); diff != "" {
		t.Errorf("acknowledged during the revival (-want +got):\n%s", diff)
	}
	if got := aborts(r); len(got) != 1 || got["not-a-job"] == "" {
		t.Errorf("aborted during the revival %v, want only not-a-job", got)
	}
	h.waitJobs("op-1-1", 2, 1)

	// A fresh operation starts during the revival; the revived one does not.
	fresh := make(chan string, 1)
	h.sys.Submit(&SubmitOperation{Spec: revivedOp("", 1).GetSpec(), Reply: func(r *pb.StartOperationResponse, e *pb.Error) {
		if e != nil {
			t.Errorf("submit: %v", e)
		}
		fresh <- r.GetOperationId()
	}})
	freshID := await(t, fresh, "submission")
	var freshStarted bool
	for i := 0; !freshStarted && i < 100; i++ {
		h.clock.advance(10 * time.Millisecond)
		for _, id := range startIDs(h.beat("n1", running, nil)) {
			if strings.HasPrefix(id, "op-1-1.") {
				t.Fatalf("revived operation's job %s started during the revival", id)
			}
			freshStarted = freshStarted || strings.HasPrefix(id, freshID+".")
			running = append(running, id)
		}
	}
	if !freshStarted {
		t.Fatal("the fresh operation's job did not start during the revival")
	}

	// A job another node reports that runs here already is aborted there.
	if got := aborts(h.beat("n2", []string{"op-1-1.0.1.2.1"}, nil)); !strings.Contains(got["op-1-1.0.1.2.1"], "runs elsewhere or is done") {
		t.Errorf("n2's copy of a job adopted on n1: aborts %v", got)
	}

	// The revival is over: the jobs nobody reported start, the ghost's
	// job is aborted and its finished one acknowledged.
	h.clock.advance(10 * time.Second)
	r = h.beat("n1", running, map[string]pb.JobState{"ghost-9.0.1.0": pb.JobState_JOB_STATE_COMPLETED})
	if diff := cmp.Diff([]string{"op-1-1.0.3.0.2", "op-1-1.0.4.0.2"}, startIDs(r)); diff != "" {
		t.Errorf("started after the revival (-want +got):\n%s", diff)
	}
	if got := aborts(r); !strings.Contains(got["ghost-9.0.0.0"], "not running") {
		t.Errorf("aborts after the revival %v, want ghost-9.0.0.0's", got)
	}
	if diff := cmp.Diff([]string{"ghost-9.0.1.0"}, r.GetAcknowledgedFinishedJobs()); diff != "" {
		t.Errorf("acknowledged after the revival (-want +got):\n%s", diff)
	}
	running = append(slices.DeleteFunc(running, func(id string) bool { return id == "ghost-9.0.0.0" || id == "not-a-job" }), startIDs(r)...)
	h.waitJobs("op-1-1", 4, 1)

	// The adopted attempt 2 (of epoch 1) fails: its retry is attempt 3
	// of epoch 2.
	running = slices.DeleteFunc(running, func(id string) bool { return id == "op-1-1.0.1.2.1" })
	h.clock.advance(10 * time.Millisecond)
	r = h.beat("n1", running, map[string]pb.JobState{"op-1-1.0.1.2.1": pb.JobState_JOB_STATE_FAILED})
	if diff := cmp.Diff([]string{"op-1-1.0.1.3.2"}, startIDs(r)); diff != "" {
		t.Errorf("the retry of the adopted job (-want +got):\n%s", diff)
	}

	// Aborting the operation signals its jobs by the ids the node knows:
	// the retry, and the adopted job whose id has no epoch.
	aborted := make(chan *pb.Error, 1)
	h.sys.Abort(&AbortOperation{ID: "op-1-1", Reply: func(_ *pb.AbortOperationResponse, e *pb.Error) { aborted <- e }})
	if e := await(t, aborted, "abort"); e != nil {
		t.Fatal(e)
	}
	want := []string{"op-1-1.0.1.3.2", "op-1-1.0.2.3", "op-1-1.0.3.0.2", "op-1-1.0.4.0.2"}
	if diff := cmp.Diff(want, h.signals.aborted()); diff != "" {
		t.Errorf("abort signals (-want +got):\n%s", diff)
	}
}
