package nodeagent_test

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
)

func TestInterrupt(t *testing.T) {
	// Each script marks itself ready once its traps are set, so the signal
	// never races the trap.
	const loop = `touch "$READY"; while true; do sleep 0.05; done`
	cases := map[string]struct {
		script  string // "" is a simulated job
		sig     string // the job spec's interruption signal
		in      []*pb.JobInterrupt
		want    result
		wantErr string
		// wantSig is the signal OnJobInterrupt is told of ("": simulated).
		wantSig string
	}{
		"a job that exits on SIGTERM completes interrupted": {
			script:  `trap "exit 0" TERM; ` + loop,
			in:      []*pb.JobInterrupt{{Timeout: durationpb.New(time.Hour), Reason: "preempted"}},
			want:    result{State: pb.JobState_JOB_STATE_COMPLETED, Interrupted: true},
			wantSig: "SIGTERM",
		},
		"any exit status after the interrupt completes": {
			script:  `trap "exit 7" TERM; ` + loop,
			in:      []*pb.JobInterrupt{{Timeout: durationpb.New(time.Hour)}},
			want:    result{State: pb.JobState_JOB_STATE_COMPLETED, ExitCode: 7, Interrupted: true},
			wantSig: "SIGTERM",
		},
		"a job that ignores SIGTERM is killed after the timeout": {
			script:  `trap "" TERM; ` + loop,
			in:      []*pb.JobInterrupt{{Timeout: durationpb.New(100 * time.Millisecond), Reason: "preempted"}},
			want:    result{State: pb.JobState_JOB_STATE_ABORTED, ExitCode: 128 + 9, Interrupted: true},
			wantErr: "interruption timeout: preempted",
			wantSig: "SIGTERM",
		},
		"a second interrupt does not restart the timer": {
			script: `trap "" TERM; ` + loop,
			in: []*pb.JobInterrupt{
				{Timeout: durationpb.New(100 * time.Millisecond), Reason: "first"},
				{Timeout: durationpb.New(time.Hour), Reason: "second"},
			},
			want:    result{State: pb.JobState_JOB_STATE_ABORTED, ExitCode: 128 + 9, Interrupted: true},
			wantErr: "interruption timeout: first",
			wantSig: "SIGTERM",
		},
		"the interrupt's signal is delivered": {
			script:  `trap "" TERM; trap "exit 0" USR1; ` + loop,
			in:      []*pb.JobInterrupt{{Signal: "SIGUSR1", Timeout: durationpb.New(time.Hour)}},
			want:    result{State: pb.JobState_JOB_STATE_COMPLETED, Interrupted: true},
			wantSig: "SIGUSR1",
		},
		"the job's signal is the fallback": {
			script:  `trap "" TERM; trap "exit 0" USR2; ` + loop,
			sig:     "USR2",
			in:      []*pb.JobInterrupt{{Timeout: durationpb.New(time.Hour)}},
			want:    result{State: pb.JobState_JOB_STATE_COMPLETED, Interrupted: true},
			wantSig: "SIGUSR2",
		},
		"a simulated job completes at once": {
			in:   []*pb.JobInterrupt{{Timeout: durationpb.New(time.Hour)}},
			want: result{State: pb.JobState_JOB_STATE_COMPLETED, Interrupted: true},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := testutil.StartNATS(t)
			nc := testutil.Connect(t, srv)
			sched := newFakeScheduler(t, nc, "n")
			ready := filepath.Join(t.TempDir(), "ready")
			spec := simJob("j", time.Hour)
			if c.script != "" {
				spec = shJob("j", c.script, map[string]string{"READY": ready})
			}
			spec.InterruptionSignal = c.sig
			sched.start(spec)
			cfg := testConfig(t, "n")
			var told []nodeagent.JobInterrupt // under the agent's lock, read once the job finished
			var mu sync.Mutex
			cfg.OnJobInterrupt = func(in nodeagent.JobInterrupt) { mu.Lock(); told = append(told, in); mu.Unlock() }
			a := startAgent(t, nc, cfg)
			sched.waitRunning(t, "j")
			if c.script != "" {
				waitFile(t, ready)
			}
			for _, in := range c.in {
				in.JobId = "j"
			}
			sched.push(&pb.HeartbeatResponse{JobsToInterrupt: c.in})
			if len(c.in) > 1 { // the repeat comes in a later response
				sched.push(&pb.HeartbeatResponse{JobsToInterrupt: c.in[1:]})
			}
			f := sched.waitFinished(t, "j")
			got := result{State: f.GetState(), ExitCode: f.GetExitCode(), Interrupted: f.GetInterrupted()}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s\nerror %q", diff, f.GetError())
			}
			if f.GetError() != c.wantErr {
				t.Errorf("error %q, want %q", f.GetError(), c.wantErr)
			}
			// Interrupted once, whatever the repeats.
			mu.Lock()
			defer mu.Unlock()
			if len(told) != 1 || told[0].ID != "j" || told[0].Signal != c.wantSig || told[0].Reason != c.in[0].GetReason() {
				t.Errorf("OnJobInterrupt told %+v, want once, of j, %q, reason %q", told, c.wantSig, c.in[0].GetReason())
			}
			if st := a.Stats(); st.JobsInterrupted != 1 {
				t.Errorf("%d jobs interrupted, want 1", st.JobsInterrupted)
			}
		})
	}
}

func TestInterruptingJobIsReportedSo(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	sched := newFakeScheduler(t, nc, "n")
	ready := filepath.Join(t.TempDir(), "ready")
	sched.start(shJob("j", `trap "" TERM; touch "$READY"; while true; do sleep 0.05; done`, map[string]string{"READY": ready}))
	startAgent(t, nc, testConfig(t, "n"))
	waitFile(t, ready)
	sched.push(&pb.HeartbeatResponse{JobsToInterrupt: []*pb.JobInterrupt{{JobId: "j", Timeout: durationpb.New(time.Hour)}}})
	sched.waitBeat(t, 0, "the job reported interrupting", func(hb *pb.Heartbeat) bool {
		r := runningJob(hb, "j")
		return r != nil && r.GetInterrupting()
	})
	sched.push(&pb.HeartbeatResponse{JobsToAbort: []*pb.JobAbort{{JobId: "j", Reason: "operation aborted"}}})
	f := sched.waitFinished(t, "j")
	if f.GetState() != pb.JobState_JOB_STATE_ABORTED || f.GetError() != "operation aborted" || !f.GetInterrupted() {
		t.Fatalf("finished %v", f)
	}
}
