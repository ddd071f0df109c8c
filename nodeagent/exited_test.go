package nodeagent_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// A job whose process has exited is finished by how it exited, even when
// an abort, an interrupt or its interruption timeout comes while the agent
// still waits for its output to close (here a detached grandchild holds
// it open for a while).
func TestExitedJobKeepsItsResult(t *testing.T) {
	cases := map[string]struct {
		script string
		resp   func(id string) *pb.HeartbeatResponse
		want   result
	}{
		"an abort after a clean exit": {
			script: "exit 0",
			resp: func(id string) *pb.HeartbeatResponse {
				return &pb.HeartbeatResponse{JobsToAbort: []*pb.JobAbort{{JobId: id, Reason: "preempted"}}}
			},
			want: result{State: pb.JobState_JOB_STATE_COMPLETED},
		},
		"an interrupt after a failed exit": {
			script: "exit 3",
			resp: func(id string) *pb.HeartbeatResponse {
				return &pb.HeartbeatResponse{JobsToInterrupt: []*pb.JobInterrupt{{JobId: id, Timeout: durationpb.New(time.Millisecond)}}}
			},
			want: result{State: pb.JobState_JOB_STATE_FAILED, ExitCode: 3},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := testutil.StartNATS(t)
			nc := testutil.Connect(t, srv)
			sched := newFakeScheduler(t, nc, "n")
			pidFile := filepath.Join(t.TempDir(), "pid")
			// The grandchild leaves the job's process group (setsid), so
			// the agent's kill of the group spares it and the output
			// stays open for the agent's grace period.
			sched.start(shJob("j", `setsid sleep 4 & echo $$ > "$PID.tmp" && mv "$PID.tmp" "$PID"; `+c.script,
				map[string]string{"PID": pidFile}))
			startAgent(t, nc, testConfig(t, "n"))
			waitFile(t, pidFile)
			raw, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
			if err != nil {
				t.Fatalf("pid file %q: %v", raw, err)
			}
			// Gone (not a zombie) means the agent has reaped it.
			testutil.WaitFor(t, wait, "the job's process reaped", func() bool {
				return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
			})
			sched.push(c.resp("j"))
			f := sched.waitFinished(t, "j")
			got := result{State: f.GetState(), ExitCode: f.GetExitCode(), Interrupted: f.GetInterrupted()}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s\nerror %q", diff, f.GetError())
			}
		})
	}
}
