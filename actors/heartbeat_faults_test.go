package actors

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// send delivers one heartbeat and returns its answer, error or not.
func send(t *testing.T, sys *System, hb *pb.Heartbeat) (*pb.HeartbeatResponse, *pb.Error) {
	t.Helper()
	answers := make(chan hbAnswer, 1)
	sys.Heartbeat(&NodeHeartbeat{Heartbeat: proto.Clone(hb).(*pb.Heartbeat), Reply: func(r *pb.HeartbeatResponse, e *pb.Error) { answers <- hbAnswer{r, e} }})
	a := await(t, answers, "heartbeat answer")
	return a.resp, a.err
}

// onlineNodes lists the nodes a tree's ledger counts (the online ones).
func onlineNodes(l *Ledger) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for id := range l.nodes {
		out = append(out, string(id))
	}
	slices.Sort(out)
	return out
}

// checkNow sends node's actor a liveness check (as the monitor would at
// its next tick): it queues before the heartbeat that follows it, whose
// answer shows it ran.
func (h *adoptHarness) checkNow(node string) {
	h.t.Helper()
	h.sys.router.mu.Lock()
	n := h.sys.router.nodes[node]
	h.sys.router.mu.Unlock()
	if n == nil {
		h.t.Fatalf("no node actor for %s", node)
	}
	h.sys.as.Root.Send(n.pid, &nodeCheck{})
}

// submit submits a fresh operation of jobs one-cpu jobs and returns its id.
func (h *adoptHarness) submit(jobs int32) string {
	h.t.Helper()
	submitted := make(chan string, 1)
	h.sys.Submit(&SubmitOperation{Spec: revivedOp("", jobs).GetSpec(), Reply: func(r *pb.StartOperationResponse, e *pb.Error) {
		if e != nil {
			h.t.Errorf("submit: %v", e)
		}
		submitted <- r.GetOperationId()
	}})
	return await(h.t, submitted, "submission")
}

// Reliability tests 6 and 7: a node partitioned away for less than the
// offline timeout changes nothing; one partitioned for longer, but less
// than the lost timeout, goes offline — out of its tree's resources, no
// job aborted — and when it comes back it is reconciled without an abort
// and gets new jobs again.
func TestPartitionsShorterThanTheLostTimeoutAbortNothing(t *testing.T) {
	h := startHarnessConfig(t, func(c *Config) { c.NodeOfflineTimeout, c.NodeLostTimeout = 2*time.Second, 6*time.Second }, nil)
	ledger := h.sys.dir.Load().trees[0].ledger
	a, running := h.submitStarted(4)
	if diff := cmp.Diff([]string{"n1"}, onlineNodes(ledger)); diff != "" {
		t.Fatalf("online nodes (-want +got):\n%s", diff)
	}

	// Short: 1.5 s of silence.
	h.clock.advance(1500 * time.Millisecond)
	h.checkNow("n1")
	r := h.beat("n1", running, nil)
	if len(r.GetJobsToAbort()) != 0 || len(r.GetJobsToStart()) != 0 {
		t.Errorf("after a short partition: aborts %v, starts %v; want none", r.GetJobsToAbort(), startIDs(r))
	}
	if diff := cmp.Diff([]string{"n1"}, onlineNodes(ledger)); diff != "" {
		t.Errorf("online nodes after a short partition (-want +got):\n%s", diff)
	}
	if off, lost := h.sys.NodeTransitions(); off != 0 || lost != 0 {
		t.Errorf("after a short partition: %d nodes taken offline, %d lost; want none", off, lost)
	}
	h.waitJobs(a, 4, 0)

	// Medium: 3 s of silence, past the offline timeout.
	h.clock.advance(3 * time.Second)
	h.checkNow("n1")
	testutil.WaitFor(t, 10*time.Second, "n1 taken offline", func() bool { return len(onlineNodes(ledger)) == 0 })
	if off, lost := h.sys.NodeTransitions(); off != 1 || lost != 0 {
		t.Errorf("after a medium partition: %d nodes taken offline, %d lost; want 1 and 0", off, lost)
	}
	b := h.submit(2)
	if st := h.status(a); st.GetJobs().GetRunning() != 4 || st.GetJobs().GetFailed() != 0 || st.GetJobs().GetAborted() != 0 {
		t.Errorf("while n1 is offline, %s's jobs are %v; want 4 running, none failed or aborted", a, st.GetJobs())
	}
	if len(h.signals.aborted()) != 0 {
		t.Errorf("abort signals while n1 is offline: %v", h.signals.aborted())
	}

	// Healed: the first heartbeat reconciles without an abort, and the
	// node takes new jobs again (b's, within a few heartbeats: b waits for
	// a fair-share update that knows it).
	r = h.beat("n1", running, nil)
	if len(r.GetJobsToAbort()) != 0 {
		t.Errorf("the first heartbeat after the partition aborts %v", r.GetJobsToAbort())
	}
	if diff := cmp.Diff([]string{"n1"}, onlineNodes(ledger)); diff != "" {
		t.Errorf("online nodes after the partition (-want +got):\n%s", diff)
	}
	running = append(running, startIDs(r)...)
	testutil.WaitFor(t, 10*time.Second, b+"'s jobs started on n1", func() bool {
		h.clock.advance(10 * time.Millisecond)
		r := h.beat("n1", running, nil)
		if len(r.GetJobsToAbort()) != 0 {
			t.Fatalf("a heartbeat after the partition aborts %v", r.GetJobsToAbort())
		}
		running = append(running, startIDs(r)...)
		return len(running) == 6
	})
	h.waitJobs(a, 4, 0)
	h.waitJobs(b, 2, 0)
	if st := h.status(a); st.GetJobs().GetFailed() != 0 || st.GetJobs().GetAborted() != 0 {
		t.Errorf("%s's jobs after the partitions: %v, want none failed or aborted", a, st.GetJobs())
	}
}

// Reliability test 8: a node partitioned away for longer than the lost
// timeout is declared lost. Its jobs end (failed, with a job event naming
// the loss), go back to pending without counting as failures, and start
// again on another node with a new attempt. When the node comes back still
// running them, its first heartbeat's reply aborts every one of them, and
// nothing of them is started or kept on it (I1: each job runs on n2 only).
func TestALostNodeIsToldToAbortItsJobsInItsFirstReply(t *testing.T) {
	events := &recordedEvents{}
	h := startHarnessConfig(t, func(c *Config) { c.NodeOfflineTimeout, c.NodeLostTimeout = 2*time.Second, 6*time.Second },
		func(d *Deps) { d.Events = events })
	a, old := h.submitStarted(4) // on n1
	slices.Sort(old)
	h.beat("n2", nil, nil)

	// 7 s of n1's silence; n2 heartbeats every 2 s meanwhile.
	for range 3 {
		h.clock.advance(2 * time.Second)
		h.beat("n2", nil, nil)
	}
	h.clock.advance(time.Second)
	h.checkNow("n1")
	testutil.WaitFor(t, 10*time.Second, "n1 declared lost", func() bool {
		_, lost := h.sys.NodeTransitions()
		return lost == 1 && h.sys.NodeCount() == 1
	})
	var moved []string
	testutil.WaitFor(t, 10*time.Second, "the lost jobs started again on n2", func() bool {
		h.clock.advance(10 * time.Millisecond)
		moved = append(moved, startIDs(h.beat("n2", moved, nil))...)
		return len(moved) == 4
	})
	if slices.ContainsFunc(moved, func(id string) bool { return slices.Contains(old, id) }) {
		t.Fatalf("the jobs started on n2 %v reuse the lost ones' ids %v: want new attempts", moved, old)
	}
	h.waitJobs(a, 4, 0)
	if st := h.status(a); st.GetJobs().GetFailed() != 0 {
		t.Errorf("%s's jobs %v: a job lost with its node counted as failed", a, st.GetJobs())
	}
	for _, id := range old {
		if reason := events.jobEnd("physical", id, pb.JobState_JOB_STATE_FAILED); !strings.Contains(reason, "node n1 lost: silent for 7s") {
			t.Errorf("job %s's end event: reason %q, want the loss of n1 named", id, reason)
		}
	}

	// n1 comes back, still running the old attempts. (Until the lost
	// session's actor has stopped, a heartbeat is refused UNAVAILABLE.)
	var r *pb.HeartbeatResponse
	testutil.WaitFor(t, 10*time.Second, "n1's first heartbeat back answered", func() bool {
		h.seq["n1"]++
		hb := &pb.Heartbeat{NodeId: "n1", Incarnation: "i1", Sequence: h.seq["n1"], ResourceLimits: &pb.Resources{Cpu: 8}}
		for _, id := range old {
			hb.RunningJobs = append(hb.RunningJobs, &pb.RunningJob{JobId: id})
		}
		var e *pb.Error
		r, e = send(t, h.sys, hb)
		if e != nil && (e.GetCode() != pb.ErrorCode_ERROR_CODE_UNAVAILABLE || !strings.Contains(e.GetMessage(), "declared lost a moment ago")) {
			t.Fatalf("n1's heartbeat back: %v", e)
		}
		return e == nil
	})
	got := aborts(r)
	if diff := cmp.Diff(old, slices.Sorted(maps.Keys(got))); diff != "" || len(r.GetJobsToStart()) != 0 {
		t.Errorf("n1's first heartbeat back: aborts (-want +got):\n%s; starts %v", diff, startIDs(r))
	}
	t.Logf("n1's first heartbeat back aborts %v", got)
	// Once it stops them, nothing is left to abort and its slots are free.
	r = h.beat("n1", nil, nil)
	if len(r.GetJobsToAbort()) != 0 {
		t.Errorf("n1's second heartbeat back aborts %v", r.GetJobsToAbort())
	}
	h.beat("n2", moved, nil)
	h.waitJobs(a, 4, 0)
}

// beatAs sends a heartbeat of node n1 (8 cpu) as incarnation inc with
// sequence seq, reporting running jobs.
func (h *adoptHarness) beatAs(inc string, seq uint64, running []string) (*pb.HeartbeatResponse, *pb.Error) {
	h.t.Helper()
	hb := &pb.Heartbeat{NodeId: "n1", Incarnation: inc, Sequence: seq, ResourceLimits: &pb.Resources{Cpu: 8}}
	for _, id := range running {
		hb.RunningJobs = append(hb.RunningJobs, &pb.RunningJob{JobId: id})
	}
	return send(h.t, h.sys, hb)
}

// Reliability test 13: an agent that restarts with a new incarnation
// (reporting none of the jobs its previous run had) loses those jobs
// exactly once: they are aborted as lost and run again. A heartbeat of the old
// incarnation that arrives late — sent before the agent died — is stale:
// it neither takes the node back to the old incarnation nor loses the new
// one's jobs.
func TestANewIncarnationLosesTheOldJobsOnce(t *testing.T) {
	h := startHarness(t, nil)
	a, old := h.submitStarted(4) // incarnation i1

	r, e := h.beatAs("i2", 1, nil)
	if e != nil {
		t.Fatalf("the new incarnation's first heartbeat: %v", e)
	}
	retries := startIDs(r)
	testutil.WaitFor(t, 10*time.Second, "the old incarnation's jobs aborted as lost", func() bool { return h.status(a).GetJobs().GetAborted() == 4 })
	for seq := uint64(2); len(retries) < 4 && seq < 100; seq++ {
		h.clock.advance(10 * time.Millisecond)
		r, e := h.beatAs("i2", seq, retries)
		if e != nil {
			t.Fatalf("heartbeat %d of i2: %v", seq, e)
		}
		retries = append(retries, startIDs(r)...)
	}
	if len(retries) != 4 || slices.ContainsFunc(retries, func(id string) bool { return slices.Contains(old, id) }) {
		t.Fatalf("retries %v of the lost jobs %v: want four new attempts", retries, old)
	}

	// A late heartbeat of i1, with a higher sequence, reporting its jobs.
	if _, e := h.beatAs("i1", 1000, old); e.GetCode() != pb.ErrorCode_ERROR_CODE_STALE_HEARTBEAT || !strings.Contains(e.GetMessage(), "incarnation i1, which i2 replaced") {
		t.Fatalf("a late heartbeat of the replaced incarnation: %v, want STALE_HEARTBEAT", e)
	}
	r, e = h.beatAs("i2", 100, retries)
	if e != nil || len(r.GetJobsToAbort()) != 0 || len(r.GetJobsToStart()) != 0 {
		t.Fatalf("i2 after the late heartbeat: %v, aborts %v, starts %v; want it unchanged", e, r.GetJobsToAbort(), startIDs(r))
	}
	h.waitJobs(a, 4, 0)
	if st := h.status(a); st.GetJobs().GetAborted() != 4 || st.GetJobs().GetFailed() != 0 {
		t.Errorf("%s's jobs %v: want the four of i1 aborted once, none failed", a, st.GetJobs())
	}
}

// Reliability test 12 on a running scheduler (TestRestartAdoptsTheNodesJobs
// covers it after a restart): n1 reports an id that is no job, a job of its
// operation that does not exist (beyond its range), and leaves out a job it
// was started; n2 reports a job that runs on n1. The unknown ones are
// aborted in the same reply, each with its reason; the wrong-node one is
// aborted on n2 and keeps running on n1; the missing one vanished: it ends
// failed ("vanished: not reported by the node") in a job event, counts as
// lost (aborted, not failed) and runs again as a new attempt.
func TestReconciliationOfARunningNode(t *testing.T) {
	events := &recordedEvents{}
	h := startHarness(t, func(d *Deps) { d.Events = events })
	a, jobs := h.submitStarted(4) // on n1
	slices.Sort(jobs)
	h.beat("n2", nil, nil)

	parts := strings.Split(jobs[1], ".") // op.task.index.attempt.epoch
	parts[2] = "9"
	beyond, bogus := strings.Join(parts, "."), "not-a-job"
	r := h.beat("n1", append(slices.Clone(jobs[1:]), beyond, bogus), nil)
	running := append(slices.Clone(jobs[1:]), startIDs(r)...) // the vanished job may start again at once
	got := aborts(r)
	if len(got) != 2 || !strings.Contains(got[bogus], "not a job id") || !strings.Contains(got[beyond], "runs elsewhere or is done") {
		t.Errorf("n1's reply aborts %v; want %s (not a job id) and %s (runs elsewhere or is done)", got, bogus, beyond)
	}
	// (The node is answered before the job events are published.)
	testutil.WaitFor(t, 10*time.Second, "the missing job "+jobs[0]+"'s end event, as vanished", func() bool {
		return events.jobEnd("physical", jobs[0], pb.JobState_JOB_STATE_FAILED) == "vanished: not reported by the node"
	})

	r = h.beat("n2", []string{jobs[1]}, nil)
	if got := aborts(r); len(got) != 1 || !strings.Contains(got[jobs[1]], "runs elsewhere or is done") {
		t.Errorf("n2 reporting n1's job %s: aborts %v, want it aborted as running elsewhere", jobs[1], got)
	}
	testutil.WaitFor(t, 10*time.Second, "the vanished job run again", func() bool {
		h.clock.advance(10 * time.Millisecond)
		r := h.beat("n1", running, nil)
		if len(r.GetJobsToAbort()) != 0 {
			t.Fatalf("n1 told to abort %v: its jobs run there", r.GetJobsToAbort())
		}
		running = append(running, startIDs(r)...)
		return len(running) >= 4
	})
	if len(running) != 4 || slices.Contains(running, jobs[0]) {
		t.Errorf("n1 runs %v after the vanished job %s ran again: want it once, as a new attempt", running, jobs[0])
	}
	h.waitJobs(a, 4, 0)
	if st := h.status(a).GetJobs(); st.GetAborted() != 1 || st.GetFailed() != 0 {
		t.Errorf("%s's jobs %v: want the vanished one counted lost (aborted 1), none failed", a, st)
	}
}

// A heartbeat of a node whose actor's name is still taken (by the session
// of the node declared lost a moment ago, stopping) is answered
// UNAVAILABLE at once instead of never.
func TestAHeartbeatWhileTheLostSessionStopsIsRefused(t *testing.T) {
	h := startHarness(t, nil)
	// Another actor holds the name, as the stopping session does.
	if _, err := h.sys.as.Root.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "node:n9"); err != nil {
		t.Fatal(err)
	}
	_, e := send(t, h.sys, &pb.Heartbeat{NodeId: "n9", Incarnation: "i1", Sequence: 1, ResourceLimits: &pb.Resources{Cpu: 8}})
	if e.GetCode() != pb.ErrorCode_ERROR_CODE_UNAVAILABLE || !strings.Contains(e.GetMessage(), "node n9 was declared lost a moment ago") {
		t.Fatalf("heartbeat while the name is taken: %v, want UNAVAILABLE naming the node", e)
	}
	if h.sys.NodeCount() != 0 {
		t.Errorf("%d node sessions, want none", h.sys.NodeCount())
	}
}

// fakeAgent plays a node agent by hand: a job runs for three accepted
// heartbeats, then is reported completed until acknowledged.
type fakeAgent struct {
	seq       uint64
	running   map[string]int // job id → accepted heartbeats left
	finished  []string
	ran       []string // every job started, in start order
	twice     []string // starts of jobs it already had
	aborted   []string
	maxJobs   int // the most jobs it ran at once
	accepted  []*pb.HeartbeatResponse
	refusals  int
	badErrors []string
}

func (a *fakeAgent) build() *pb.Heartbeat {
	a.seq++
	hb := &pb.Heartbeat{NodeId: "n1", Incarnation: "i1", Sequence: a.seq, ResourceLimits: &pb.Resources{Cpu: 8}}
	for _, id := range slices.Sorted(maps.Keys(a.running)) {
		hb.RunningJobs = append(hb.RunningJobs, &pb.RunningJob{JobId: id})
	}
	for _, id := range a.finished {
		hb.FinishedJobs = append(hb.FinishedJobs, &pb.FinishedJob{JobId: id, State: pb.JobState_JOB_STATE_COMPLETED})
	}
	return hb
}

// apply takes an accepted heartbeat's response: jobs run a beat, the
// acknowledged finishes are dropped, new jobs start.
func (a *fakeAgent) apply(r *pb.HeartbeatResponse) {
	a.accepted = append(a.accepted, r)
	acked := r.GetAcknowledgedFinishedJobs()
	a.finished = slices.DeleteFunc(a.finished, func(id string) bool { return slices.Contains(acked, id) })
	for _, ab := range r.GetJobsToAbort() {
		if _, ok := a.running[ab.GetJobId()]; ok {
			delete(a.running, ab.GetJobId())
			a.aborted = append(a.aborted, ab.GetJobId())
		}
	}
	for id, left := range a.running {
		if left <= 1 {
			delete(a.running, id)
			a.finished = append(a.finished, id)
		} else {
			a.running[id] = left - 1
		}
	}
	slices.Sort(a.finished)
	for _, s := range r.GetJobsToStart() {
		id := s.GetJobId()
		if _, ok := a.running[id]; ok || slices.Contains(a.ran, id) {
			a.twice = append(a.twice, id)
			continue
		}
		a.running[id] = 3
		a.ran = append(a.ran, id)
	}
	a.maxJobs = max(a.maxJobs, len(a.running))
}

// runFakeAgent submits an operation of 20 one-cpu jobs and heartbeats for
// them until it completes. With faults, every heartbeat is delivered
// twice, and one of the last ten sent is delivered again after a random
// one of them (the generator's seed fixed): every copy after the first is
// stale.
func runFakeAgent(t *testing.T, faults bool) (*fakeAgent, *pb.OperationStatus) {
	h := startHarness(t, nil)
	op := h.submit(20)
	a := &fakeAgent{running: map[string]int{}}
	rng := rand.New(rand.NewPCG(1, 2))
	var window []*pb.Heartbeat
	deliver := func(hb *pb.Heartbeat) {
		r, e := send(t, h.sys, hb)
		switch {
		case e == nil:
			a.apply(r)
		case e.GetCode() == pb.ErrorCode_ERROR_CODE_STALE_HEARTBEAT:
			a.refusals++
		default:
			a.badErrors = append(a.badErrors, e.String())
		}
	}
	for range 2000 {
		if st := h.status(op); st.GetState() == pb.OperationState_OPERATION_STATE_COMPLETED && len(a.finished) == 0 {
			return a, st
		}
		h.clock.advance(10 * time.Millisecond)
		hb := a.build()
		deliver(hb)
		if !faults {
			continue
		}
		deliver(hb)
		window = append(window, hb)
		if len(window) > 10 {
			window = window[1:]
		}
		if rng.IntN(3) == 0 {
			deliver(window[rng.IntN(len(window))])
		}
	}
	t.Fatalf("operation %s did not complete within 2000 heartbeats: %v", op, h.status(op))
	return nil, nil
}

// Reliability test 10: heartbeats delivered twice and late (within the
// last ten) leave the scheduler exactly where the same heartbeats
// delivered once leave it: every copy is refused STALE_HEARTBEAT and
// changes nothing, so the operation completes with the same jobs, none
// started twice, none aborted, never more than the node's 8 cpu running.
func TestDuplicatedAndLateHeartbeatsChangeNothing(t *testing.T) {
	ref, refStatus := runFakeAgent(t, false)
	got, gotStatus := runFakeAgent(t, true)
	if ref.refusals != 0 || got.refusals == 0 {
		t.Errorf("stale refusals: %d in the reference run, %d with duplicates; want 0 and some", ref.refusals, got.refusals)
	}
	for _, run := range []struct {
		name string
		a    *fakeAgent
	}{{"reference", ref}, {"faulty", got}} {
		name, a := run.name, run.a
		if len(a.badErrors) != 0 || len(a.twice) != 0 || len(a.aborted) != 0 || a.maxJobs > 8 {
			t.Errorf("%s run: errors %v, started twice %v, aborted %v, at most %d running; want none, none, none, at most 8",
				name, a.badErrors, a.twice, a.aborted, a.maxJobs)
		}
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(ref.ran)), slices.Sorted(slices.Values(got.ran))); diff != "" {
		t.Errorf("jobs run (-reference +with duplicates):\n%s", diff)
	}
	if diff := cmp.Diff(refStatus.GetJobs(), gotStatus.GetJobs(), cmp.Comparer(proto.Equal)); diff != "" {
		t.Errorf("final job counts (-reference +with duplicates):\n%s", diff)
	}
	if c := gotStatus.GetJobs(); c.GetCompleted() != 20 || c.GetFailed() != 0 || c.GetAborted() != 0 {
		t.Errorf("final job counts %v, want 20 completed", c)
	}
	t.Logf("%d heartbeats accepted in the reference run, %d accepted and %d refused as stale with duplicates",
		len(ref.accepted), len(got.accepted), got.refusals)
}
