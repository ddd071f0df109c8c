package nodeagent_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/subjects"
)

func publishSignal(t *testing.T, nc *nats.Conn, node string, data []byte) {
	t.Helper()
	subj, err := subjects.NodeSignal(node)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish(subj, data); err != nil {
		t.Fatal(err)
	}
}

func marshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAbort(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	sched := newFakeScheduler(t, nc, "n", func(s *fakeScheduler) { s.epoch = 2 })
	sched.start(shJob("proc", "sleep 60", nil), simJob("sim", time.Hour), simJob("sim2", time.Hour))
	a := startAgent(t, nc, testConfig(t, "n"))
	sched.waitBeat(t, 0, "three jobs running", func(hb *pb.Heartbeat) bool { return len(hb.GetRunningJobs()) == 3 })

	publishSignal(t, nc, "n", marshal(t, &pb.JobSignal{LeaderEpoch: 2, Signal: &pb.JobSignal_Abort{Abort: &pb.JobAbort{JobId: "proc", Reason: "preempted by op2"}}}))
	publishSignal(t, nc, "n", marshal(t, &pb.JobSignal{LeaderEpoch: 2, Signal: &pb.JobSignal_Abort{Abort: &pb.JobAbort{JobId: "sim"}}}))
	sched.push(&pb.HeartbeatResponse{JobsToAbort: []*pb.JobAbort{{JobId: "sim2", Reason: "operation aborted"}, {JobId: "unknown"}}})

	for id, wantErr := range map[string]string{"proc": "preempted by op2", "sim": "aborted by the scheduler", "sim2": "operation aborted"} {
		f := sched.waitFinished(t, id)
		if f.GetState() != pb.JobState_JOB_STATE_ABORTED || f.GetError() != wantErr || f.GetInterrupted() {
			t.Errorf("%s finished %v, want ABORTED %q", id, f, wantErr)
		}
	}
	st := a.Stats()
	if st.SignalsApplied != 2 || st.JobsAborted != 3 || st.RunningJobs != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestCommandsFromAnOlderLeaderEpochAreIgnored(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	sched := newFakeScheduler(t, nc, "n", func(s *fakeScheduler) { s.epoch = 5 })
	sched.start(simJob("keep", time.Hour))
	a := startAgent(t, nc, testConfig(t, "n"))
	sched.waitBeat(t, 0, "epoch 5 seen", func(hb *pb.Heartbeat) bool { return hb.GetLeaderEpoch() == 5 && runningJob(hb, "keep") != nil })

	// A deposed leader (epoch 3) answers a heartbeat and sends a signal.
	sched.push(&pb.HeartbeatResponse{LeaderEpoch: 3, JobsToStart: []*pb.JobSpec{simJob("stale", time.Hour)},
		JobsToAbort: []*pb.JobAbort{{JobId: "keep"}}, HeartbeatPeriod: durationpb.New(time.Hour)})
	publishSignal(t, nc, "n", marshal(t, &pb.JobSignal{LeaderEpoch: 4, Signal: &pb.JobSignal_Abort{Abort: &pb.JobAbort{JobId: "keep"}}}))
	st := waitStats(t, a, "the stale response and signal counted", func(s nodeagent.Stats) bool {
		return s.StaleResponses == 1 && s.StaleSignals == 1
	})
	if st.JobsStarted != 1 || st.RunningJobs != 1 || st.JobsAborted != 0 || st.LeaderEpoch != 5 || st.SignalsApplied != 0 {
		t.Fatalf("a stale command was applied: %+v", st)
	}
	n := sched.count()
	hb := sched.waitBeat(t, n, "a later heartbeat", func(*pb.Heartbeat) bool { return true })
	if hb.GetLeaderEpoch() != 5 || runningJob(hb, "keep") == nil || runningJob(hb, "stale") != nil {
		t.Fatalf("heartbeat after stale commands: %v", hb)
	}

	// A newer leader (epoch 6) is obeyed, and raises the epoch reported.
	publishSignal(t, nc, "n", marshal(t, &pb.JobSignal{LeaderEpoch: 6, Signal: &pb.JobSignal_Abort{Abort: &pb.JobAbort{JobId: "keep"}}}))
	sched.waitFinished(t, "keep")
	sched.waitBeat(t, 0, "epoch 6 reported", func(hb *pb.Heartbeat) bool { return hb.GetLeaderEpoch() == 6 })
}

func TestDuplicateStartsStartOnce(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	sched := newFakeScheduler(t, nc, "n")
	spec := simJob("j", 50*time.Millisecond)
	sched.start(spec, spec)
	sched.start(spec)
	a := startAgent(t, nc, testConfig(t, "n"))
	sched.waitFinished(t, "j")
	st := waitStats(t, a, "both duplicates ignored", func(s nodeagent.Stats) bool { return s.DuplicateStarts == 2 })
	if st.JobsStarted != 1 || st.JobsCompleted != 1 {
		t.Fatalf("stats %+v, want one start and one completion", st)
	}
	// Re-sending the start of a finished (unacknowledged) job does not rerun it.
	sched.start(spec)
	st = waitStats(t, a, "the start of a finished job ignored", func(s nodeagent.Stats) bool { return s.DuplicateStarts == 3 })
	if st.JobsStarted != 1 || st.RunningJobs != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestMalformedSignalsAreCountedAndDropped(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	sched := newFakeScheduler(t, nc, "n")
	sched.start(simJob("j", time.Hour))
	a := startAgent(t, nc, testConfig(t, "n"))
	sched.waitRunning(t, "j")
	publishSignal(t, nc, "n", []byte{0xff, 0xff, 0xff})
	publishSignal(t, nc, "n", marshal(t, &pb.JobSignal{LeaderEpoch: 9}))
	publishSignal(t, nc, "n", marshal(t, &pb.JobSignal{Signal: &pb.JobSignal_Interrupt{Interrupt: &pb.JobInterrupt{}}}))
	st := waitStats(t, a, "three malformed signals", func(s nodeagent.Stats) bool { return s.MalformedSignals == 3 })
	if st.LeaderEpoch != 0 || st.RunningJobs != 1 {
		t.Fatalf("a malformed signal changed the agent: %+v", st)
	}
	ok := st.HeartbeatsOK
	waitStats(t, a, "heartbeats going on", func(s nodeagent.Stats) bool { return s.HeartbeatsOK > ok+2 })
}
