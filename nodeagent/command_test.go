package nodeagent_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
)

// result is what the command tests compare of a finished job.
type result struct {
	State       pb.JobState
	ExitCode    int32
	Interrupted bool
}

func TestCommandJobs(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	sched := newFakeScheduler(t, nc, "n")
	dir := t.TempDir()
	cases := map[string]struct {
		spec      *pb.JobSpec
		want      result
		wantErr   string   // in FinishedJob.error
		wantLog   []string // each in the log tail
		wantTail  string   // the log tail's suffix
		maxLogLen int
	}{
		"non-zero exit fails with both streams in the log": {
			spec:    shJob("exit3", "echo out; echo err >&2; exit 3", nil),
			want:    result{State: pb.JobState_JOB_STATE_FAILED, ExitCode: 3},
			wantErr: "exit status 3",
			wantLog: []string{"out\n", "err\n"},
		},
		"zero exit completes": {
			spec: shJob("ok", "exit 0", nil),
			want: result{State: pb.JobState_JOB_STATE_COMPLETED},
		},
		"env is added and the job runs in its working dir": {
			spec: func() *pb.JobSpec {
				s := shJob("env", `echo "$FOO $SHARETREE_JOB_ID $SHARETREE_OPERATION_ID"; pwd`, map[string]string{"FOO": "bar"})
				s.GetCommand().WorkingDir = dir
				return s
			}(),
			want:    result{State: pb.JobState_JOB_STATE_COMPLETED},
			wantLog: []string{"bar env op1\n", dir + "\n"},
		},
		"the default working dir is a fresh temporary dir under WorkDir": {
			spec:    shJob("tmpdir", `pwd; touch x`, nil),
			want:    result{State: pb.JobState_JOB_STATE_COMPLETED},
			wantLog: []string{"sharetree-job-tmpdir-"},
		},
		"the log keeps only its tail": {
			spec:      shJob("chatty", `i=0; while [ $i -lt 3000 ]; do echo "line $i"; i=$((i+1)); done`, nil),
			want:      result{State: pb.JobState_JOB_STATE_COMPLETED},
			wantTail:  "line 2998\nline 2999\n",
			maxLogLen: 1024,
		},
		"a missing program fails to start": {
			spec:    cmdJob("missing", nil, "sharetree-no-such-program"),
			want:    result{State: pb.JobState_JOB_STATE_FAILED},
			wantErr: "executable file not found",
		},
		"a missing working dir fails to start": {
			spec: func() *pb.JobSpec {
				s := shJob("nodir", "true", nil)
				s.GetCommand().WorkingDir = filepath.Join(dir, "absent")
				return s
			}(),
			want:    result{State: pb.JobState_JOB_STATE_FAILED},
			wantErr: "absent",
		},
		"an empty argv fails": {
			spec:    cmdJob("noargv", nil),
			want:    result{State: pb.JobState_JOB_STATE_FAILED},
			wantErr: "bad job spec",
		},
		"a spec with no way to run fails": {
			spec:    &pb.JobSpec{JobId: "norun", OperationId: "op1"},
			want:    result{State: pb.JobState_JOB_STATE_FAILED},
			wantErr: "neither a command nor a simulated duration",
		},
		"bad resources fail": {
			spec:    &pb.JobSpec{JobId: "badres", OperationId: "op1", Resources: &pb.Resources{Cpu: -1}, Run: simJob("x", 0).Run},
			want:    result{State: pb.JobState_JOB_STATE_FAILED},
			wantErr: "resources.cpu",
		},
	}
	var specs []*pb.JobSpec
	for _, c := range cases {
		specs = append(specs, c.spec)
	}
	sched.start(specs...)
	cfg := testConfig(t, "n")
	cfg.JobLogLimit = 1024
	a := startAgent(t, nc, cfg)
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			f := sched.waitFinished(t, c.spec.GetJobId())
			got := result{State: f.GetState(), ExitCode: f.GetExitCode(), Interrupted: f.GetInterrupted()}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s\nerror %q\nlog %q", diff, f.GetError(), f.GetLogTail())
			}
			if !strings.Contains(f.GetError(), c.wantErr) || (c.wantErr == "" && f.GetError() != "") {
				t.Errorf("error %q, want it to contain %q", f.GetError(), c.wantErr)
			}
			for _, w := range c.wantLog {
				if !strings.Contains(f.GetLogTail(), w) {
					t.Errorf("log tail %q lacks %q", f.GetLogTail(), w)
				}
			}
			if !strings.HasSuffix(f.GetLogTail(), c.wantTail) {
				t.Errorf("log tail ends %q, want suffix %q", f.GetLogTail()[max(0, len(f.GetLogTail())-40):], c.wantTail)
			}
			if c.maxLogLen > 0 && len(f.GetLogTail()) > c.maxLogLen {
				t.Errorf("log tail is %d bytes, want at most %d", len(f.GetLogTail()), c.maxLogLen)
			}
			if !f.GetStartTime().IsValid() || f.GetFinishTime().AsTime().Before(f.GetStartTime().AsTime()) {
				t.Errorf("start %v, finish %v", f.GetStartTime(), f.GetFinishTime())
			}
		})
	}
	st := a.Stats()
	if st.JobsStarted != uint64(len(cases)) || st.JobsCompleted != 4 || st.JobsFailed != 6 {
		t.Errorf("stats %+v, want %d started, 4 completed, 6 failed", st, len(cases))
	}
	entries, err := filepath.Glob(filepath.Join(cfg.WorkDir, "*"))
	if err != nil || len(entries) != 0 {
		t.Errorf("job temp dirs left in WorkDir: %v %v", entries, err)
	}
}

func TestSimulatedJobIsReportedUntilAcknowledged(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	sched := newFakeScheduler(t, nc, "n")
	sched.start(simJob("sim", 10*time.Millisecond))
	a := startAgent(t, nc, testConfig(t, "n"))

	f := sched.waitFinished(t, "sim")
	if f.GetState() != pb.JobState_JOB_STATE_COMPLETED || f.GetInterrupted() || f.GetOperationId() != "op1" {
		t.Fatalf("finished %v", f)
	}
	n := sched.count()
	sched.waitBeat(t, n, "the job reported again while unacknowledged", func(hb *pb.Heartbeat) bool {
		return finishedJob(hb, "sim") != nil && hb.GetSequence() > uint64(n)+1
	})

	sched.setAckAll(true)
	waitStats(t, a, "the acknowledged job forgotten", func(s nodeagent.Stats) bool { return s.UnackedFinishedJobs == 0 })
	n = sched.count()
	hb := sched.waitBeat(t, n, "a heartbeat after the ack", func(*pb.Heartbeat) bool { return true })
	if len(hb.GetFinishedJobs()) != 0 || len(hb.GetRunningJobs()) != 0 {
		t.Fatalf("heartbeat after the ack still has jobs: %v", hb)
	}
}
