package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// TestHeartbeatWithABadFinishedStateIsRefused: a finished job whose state
// is not one a job finishes in (unspecified, running, a number no state
// has) is refused as INVALID_ARGUMENT naming the field, and changes
// nothing: the job still runs, its operation counts no finish.
func TestHeartbeatWithABadFinishedStateIsRefused(t *testing.T) {
	_, nc := servertest.Start(t, treesYAML, nil)
	cl := client.New(nc, 10*time.Second)
	ctx := context.Background()
	subj, _ := subjects.NodeHeartbeat("n")
	var seq uint64
	beat := func(running []string, finished ...*pb.FinishedJob) (*pb.HeartbeatResponse, error) {
		seq++
		hb := &pb.Heartbeat{NodeId: "n", Incarnation: "x", Sequence: seq, ResourceLimits: &pb.Resources{Cpu: 1, UserSlots: 1},
			FinishedJobs: finished}
		for _, id := range running {
			hb.RunningJobs = append(hb.RunningJobs, &pb.RunningJob{JobId: id})
		}
		resp := &pb.HeartbeatResponse{}
		return resp, cl.Call(ctx, subj, hb, resp)
	}
	if _, err := beat(nil); err != nil {
		t.Fatal(err)
	}
	op, err := cl.Submit(ctx, simulated("light", 1, 1, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var job string
	testutil.WaitFor(t, 10*time.Second, "the job to start on the node", func() bool {
		resp, err := beat(nil)
		if err != nil {
			t.Fatal(err)
		}
		if s := resp.GetJobsToStart(); len(s) == 1 {
			job = s[0].GetJobId()
		}
		return job != ""
	})
	testutil.WaitFor(t, 10*time.Second, "the operation to count the job running", func() bool {
		st, err := cl.Get(ctx, op)
		return err == nil && st.GetJobs().GetRunning() == 1
	})
	for _, state := range []pb.JobState{pb.JobState_JOB_STATE_UNSPECIFIED, pb.JobState_JOB_STATE_RUNNING, pb.JobState(42)} {
		resp, err := beat(nil, &pb.FinishedJob{JobId: job, OperationId: op, State: state})
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) || apiErr.Code() != pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT || apiErr.Err.GetField() != "finished_jobs[0].state" {
			t.Errorf("finished job in state %v: response %v, error %v; want INVALID_ARGUMENT on finished_jobs[0].state", state, resp, err)
		}
		// The node still runs the job, and says so.
		if _, err := beat([]string{job}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := cl.Get(ctx, op)
	if err != nil {
		t.Fatal(err)
	}
	if j := st.GetJobs(); j.GetRunning() != 1 || j.GetAborted() != 0 || j.GetFailed() != 0 || j.GetCompleted() != 0 {
		t.Errorf("after refused heartbeats the operation counts %v; want its one job running", j)
	}
}
