package nodeagent_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
)

func TestHeartbeatsCarryTheFullState(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	sched := newFakeScheduler(t, nc, "node-1", func(s *fakeScheduler) { s.epoch = 7 })
	sched.start(simJob("op1.map.0.0", time.Hour), simJob("op1.map.1.0", time.Hour))
	a := startAgent(t, nc, testConfig(t, "node-1"))

	hb := sched.waitBeat(t, 0, "a heartbeat with both jobs running", func(hb *pb.Heartbeat) bool { return len(hb.GetRunningJobs()) == 2 })
	want := &pb.Heartbeat{
		NodeId:         "node-1",
		Incarnation:    "inc-node-1",
		Sequence:       hb.GetSequence(),
		ResourceLimits: &pb.Resources{UserSlots: 8, Cpu: 16, Memory: 64 << 30},
		ResourceUsage:  &pb.Resources{UserSlots: 2, Cpu: 4},
		Tags:           []string{"rack-a", "ssd"},
		RunningJobs: []*pb.RunningJob{
			{JobId: "op1.map.0.0", OperationId: "op1", Resources: &pb.Resources{UserSlots: 1, Cpu: 2}},
			{JobId: "op1.map.1.0", OperationId: "op1", Resources: &pb.Resources{UserSlots: 1, Cpu: 2}},
		},
		LeaderEpoch: 7,
	}
	if diff := cmp.Diff(want, hb, protocmp.Transform(), protocmp.IgnoreFields(&pb.RunningJob{}, "start_time")); diff != "" {
		t.Errorf("heartbeat (-want +got):\n%s", diff)
	}
	for _, r := range hb.GetRunningJobs() {
		if !r.GetStartTime().IsValid() || r.GetStartTime().AsTime().IsZero() {
			t.Errorf("job %s has no start time", r.GetJobId())
		}
	}

	n := sched.count()
	sched.waitBeat(t, n, "three more heartbeats", func(*pb.Heartbeat) bool { return sched.count() >= n+3 })
	beats := sched.beatsSince(0)
	for i, b := range beats {
		if b.GetSequence() != uint64(i+1) {
			t.Fatalf("heartbeat %d has sequence %d, want %d", i, b.GetSequence(), i+1)
		}
	}
	st := a.Stats()
	if st.HeartbeatsSent < uint64(len(beats)) || st.HeartbeatsOK == 0 || st.RunningJobs != 2 || st.LeaderEpoch != 7 {
		t.Errorf("stats %+v after %d heartbeats", st, len(beats))
	}
}

func TestHeartbeatPeriodFromTheResponseIsAdopted(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	sched := newFakeScheduler(t, nc, "n")
	sched.push(&pb.HeartbeatResponse{HeartbeatPeriod: durationpb.New(10 * time.Millisecond)})
	cfg := testConfig(t, "n")
	cfg.HeartbeatPeriod = time.Hour // only the immediate first heartbeat would go out
	startAgent(t, nc, cfg)
	sched.waitBeat(t, 0, "heartbeats at the scheduler's period", func(*pb.Heartbeat) bool { return sched.count() >= 3 })
}

// A response's period below nodeagent.MinSchedulerHeartbeatPeriod is raised to it.
func TestTooShortHeartbeatPeriodIsRaised(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	sched := newFakeScheduler(t, nc, "n")
	sched.push(&pb.HeartbeatResponse{HeartbeatPeriod: durationpb.New(time.Nanosecond)})
	cfg := testConfig(t, "n")
	cfg.HeartbeatPeriod = time.Hour
	a := startAgent(t, nc, cfg)
	testutil.WaitFor(t, 5*time.Second, "the least heartbeat period", func() bool {
		return a.Stats().HeartbeatPeriod == nodeagent.MinSchedulerHeartbeatPeriod
	})
}

func TestFailedHeartbeatsAreCountedAndRetried(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	cfg := testConfig(t, "n")
	cfg.HeartbeatTimeout = 100 * time.Millisecond
	a := startAgent(t, nc, cfg)
	if st := waitStats(t, a, "heartbeats failing with no responders", func(s nodeagent.Stats) bool { return s.HeartbeatsFailed >= 2 }); st.HeartbeatsRefused != 0 || st.HeartbeatsUnanswered < 2 {
		t.Errorf("no scheduler: %d refused, %d unanswered; want 0 refused, the failures unanswered", st.HeartbeatsRefused, st.HeartbeatsUnanswered)
	}

	// A scheduler that answers with a micro error: the body is a pb.Error
	// whose code field must not be read as a leader epoch.
	sched := newFakeScheduler(t, nc, "n", func(s *fakeScheduler) { s.replyFn = replyWithMicroError })
	before := a.Stats()
	sched.waitBeat(t, 0, "error replies", func(*pb.Heartbeat) bool { return sched.count() >= 3 })
	st := waitStats(t, a, "error replies counted", func(s nodeagent.Stats) bool { return s.HeartbeatsRefused >= before.HeartbeatsRefused+2 })
	if st.LeaderEpoch != 0 || st.HeartbeatsOK != 0 {
		t.Fatalf("an error reply was applied as a response: %+v", st)
	}
	if st.HeartbeatsFailed-before.HeartbeatsFailed < st.HeartbeatsRefused-before.HeartbeatsRefused {
		t.Errorf("refusals %d → %d not counted as failures %d → %d", before.HeartbeatsRefused, st.HeartbeatsRefused, before.HeartbeatsFailed, st.HeartbeatsFailed)
	}

	// The scheduler recovers: responses are applied again.
	sched.set(func(s *fakeScheduler) { s.replyFn, s.epoch = nil, 3 })
	waitStats(t, a, "heartbeats succeeding", func(s nodeagent.Stats) bool { return s.HeartbeatsOK >= 1 && s.LeaderEpoch == 3 })
}

// A response after its heartbeat timed out is not applied (the next
// heartbeat tells the scheduler what runs); only its epoch is kept.
func TestHeartbeatTimeoutDropsTheLateResponse(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	held := make(chan *nats.Msg, 16)
	newFakeScheduler(t, nc, "n", func(s *fakeScheduler) {
		s.replyFn = func(s *fakeScheduler, m *nats.Msg) bool {
			if s.count() == 1 {
				held <- m // answer the first heartbeat only after it timed out
				return true
			}
			return false
		}
	})
	cfg := testConfig(t, "n")
	cfg.HeartbeatTimeout = 50 * time.Millisecond
	a := startAgent(t, nc, cfg)
	m := <-held
	waitStats(t, a, "the first heartbeat to time out", func(s nodeagent.Stats) bool { return s.HeartbeatsUnanswered >= 1 })
	resp, _ := proto.Marshal(&pb.HeartbeatResponse{LeaderEpoch: 1, JobsToStart: []*pb.JobSpec{simJob("late", time.Hour)}})
	if err := m.Respond(resp); err != nil {
		t.Fatal(err)
	}
	st := waitStats(t, a, "the late response dropped", func(s nodeagent.Stats) bool { return s.LateResponses == 1 })
	if st.JobsStarted != 0 {
		t.Fatalf("a late response's commands were applied: %+v", st)
	}
	// Its epoch, higher than any seen, is adopted: it proves a newer leader.
	if st.LeaderEpoch != 1 {
		t.Errorf("epoch %d after a late response of epoch 1; want it adopted", st.LeaderEpoch)
	}
}

// A heartbeat in flight when the connection reconnects (its NATS server
// restarted, or the connection moved to another of the cluster) is given
// up at once and the next one sent, instead of the node going unheard for
// the heartbeat timeout: here an hour, as is the period.
func TestAReconnectGivesUpTheHeartbeatInFlight(t *testing.T) {
	srv := testutil.StartNATS(t)
	held := make(chan *nats.Msg, 1)
	newFakeScheduler(t, testutil.Connect(t, srv), "n", func(s *fakeScheduler) {
		s.replyFn = func(s *fakeScheduler, m *nats.Msg) bool {
			if s.count() == 1 {
				held <- m // the first heartbeat is never answered
				return true
			}
			return false
		}
	})
	nc := testutil.Connect(t, srv, nats.ReconnectWait(10*time.Millisecond))
	cfg := testConfig(t, "n")
	cfg.HeartbeatPeriod, cfg.HeartbeatTimeout = time.Hour, time.Hour
	a := startAgent(t, nc, cfg)
	<-held
	if err := nc.ForceReconnect(); err != nil {
		t.Fatal(err)
	}
	st := waitStats(t, a, "the next heartbeat answered after the reconnect", func(s nodeagent.Stats) bool { return s.HeartbeatsOK == 1 })
	if st.HeartbeatsSent != 2 || st.HeartbeatsUnanswered != 1 || st.HeartbeatsFailed != 1 {
		t.Errorf("after the reconnect: %d sent, %d failed (%d unanswered); want 2 sent, the first given up as unanswered", st.HeartbeatsSent, st.HeartbeatsFailed, st.HeartbeatsUnanswered)
	}
}

// replyWithMicroError answers like a micro service refusing the request:
// error headers and a pb.Error body.
func replyWithMicroError(_ *fakeScheduler, m *nats.Msg) bool {
	body, _ := proto.Marshal(&pb.Error{Code: pb.ErrorCode_ERROR_CODE_UNAVAILABLE, Message: "starting up"})
	reply := nats.NewMsg(m.Reply)
	reply.Data = body
	reply.Header.Set(micro.ErrorHeader, "starting up")
	reply.Header.Set(micro.ErrorCodeHeader, "503")
	_ = m.RespondMsg(reply)
	return true
}

// TestAnOldLeadersAnswerDoesNotHideTheLeaders: the heartbeat subject has
// no queue group, so an old leader still subscribed (paused, or stepping
// down) answers each heartbeat too, first. Its UNAVAILABLE refusal or its
// response of an older epoch is passed over while the leader's answer
// comes: no heartbeat fails. Without one, the refusal counts after a
// period, and heartbeats go on.
func TestAnOldLeadersAnswerDoesNotHideTheLeaders(t *testing.T) {
	answer := func(m *nats.Msg, epoch uint64) {
		data, _ := proto.Marshal(&pb.HeartbeatResponse{LeaderEpoch: epoch})
		_ = m.Respond(data)
	}
	for _, tc := range []struct {
		name string
		old  func(m *nats.Msg) // the old leader's answer, published first
	}{
		{"refusal", func(m *nats.Msg) { replyWithMicroError(nil, m) }},
		{"older epoch", func(m *nats.Msg) { answer(m, 3) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testutil.StartNATS(t)
			nc := testutil.Connect(t, srv)
			var leaderAnswers atomic.Bool
			leaderAnswers.Store(true)
			newFakeScheduler(t, nc, "n", func(s *fakeScheduler) {
				s.replyFn = func(_ *fakeScheduler, m *nats.Msg) bool {
					tc.old(m)
					if leaderAnswers.Load() {
						answer(m, 7) // after the old one's: one connection keeps the order
					}
					return true
				}
			})
			cfg := testConfig(t, "n")
			cfg.HeartbeatTimeout = time.Hour // none may wait it out
			a := startAgent(t, nc, cfg)
			// (The very first heartbeat may take the old leader's epoch 3,
			// before the agent knows of 7.)
			onLeader := waitStats(t, a, "the leader's epoch", func(s nodeagent.Stats) bool { return s.LeaderEpoch == 7 })
			st := waitStats(t, a, "20 heartbeats answered by the leader", func(s nodeagent.Stats) bool { return s.HeartbeatsOK >= onLeader.HeartbeatsOK+20 })
			if failed := st.HeartbeatsFailed - onLeader.HeartbeatsFailed; failed != 0 {
				t.Errorf("%d heartbeats failed although the leader answered each (after the old leader's answer): %+v", failed, st)
			}

			// The old leader alone: each heartbeat fails a period after its
			// answer, refused (or unanswered by a current leader), and the
			// next goes out; none waits out the hour's timeout.
			leaderAnswers.Store(false)
			alone := waitStats(t, a, "heartbeats answered by the old leader alone", func(s nodeagent.Stats) bool { return s.HeartbeatsFailed >= st.HeartbeatsFailed+3 })
			refused, failed := alone.HeartbeatsRefused-st.HeartbeatsRefused, alone.HeartbeatsFailed-st.HeartbeatsFailed
			if want := map[bool]uint64{true: failed, false: 0}[tc.name == "refusal"]; refused != want || alone.LeaderEpoch != 7 {
				t.Errorf("%d of %d failures refused, epoch %d; want %d refused, epoch 7", refused, failed, alone.LeaderEpoch, want)
			}
		})
	}
}
