package server_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// FuzzHeartbeat sends arbitrary bytes on a node's heartbeat subject of a
// running scheduler (one for the whole run, so that the node's state
// carries from input to input, as it would from heartbeat to heartbeat).
// Each gets a response or a typed refusal with a reason (never INTERNAL),
// and after each the scheduler still answers another node's heartbeat and
// has not stopped. Run it longer with
// go test ./internal/server -run '^$' -fuzz FuzzHeartbeat -fuzztime 5m.
func FuzzHeartbeat(f *testing.F) {
	srv, nc := servertest.Start(f, treesYAML, func(c *server.Config) { c.HTTPAddr = "" })
	cl := client.New(nc, 5*time.Second)
	subj, _ := subjects.NodeHeartbeat("fz")
	ctl, _ := subjects.NodeHeartbeat("ctl")
	seed := func(hb *pb.Heartbeat) {
		b, err := proto.Marshal(hb)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	limits := &pb.Resources{Cpu: 4, UserSlots: 4}
	seed(&pb.Heartbeat{NodeId: "fz", Incarnation: "i1", Sequence: 1, ResourceLimits: limits})
	seed(&pb.Heartbeat{NodeId: "fz", Incarnation: "i1", Sequence: 2, ResourceLimits: limits,
		RunningJobs:  []*pb.RunningJob{{JobId: "op-1-1.0.0.0.1"}, {JobId: "ghost"}},
		FinishedJobs: []*pb.FinishedJob{{JobId: "op-1-1.0.1.0.1", State: pb.JobState_JOB_STATE_COMPLETED}, {JobId: "x", State: pb.JobState_JOB_STATE_FAILED, Error: "boom"}}})
	seed(&pb.Heartbeat{NodeId: "fz", Incarnation: "i2", Sequence: 1, ResourceLimits: &pb.Resources{Cpu: math.NaN()}})
	seed(&pb.Heartbeat{NodeId: "fz", Incarnation: "i2", Sequence: 3, ResourceLimits: &pb.Resources{Memory: -1}, Tags: []string{"b", "a", "a"}})
	seed(&pb.Heartbeat{NodeId: "other", Incarnation: "i1", Sequence: 9})
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff})

	var ctlSeq uint64
	f.Fuzz(func(t *testing.T, payload []byte) {
		ctx := context.Background()
		var apiErr *client.APIError
		switch err := cl.CallRaw(ctx, subj, payload, &pb.HeartbeatResponse{}); {
		case err == nil:
		case errors.As(err, &apiErr):
			if c := apiErr.Code(); c == pb.ErrorCode_ERROR_CODE_UNSPECIFIED || c == pb.ErrorCode_ERROR_CODE_INTERNAL || apiErr.Err.GetMessage() == "" {
				t.Fatalf("heartbeat %x refused %v without a typed reason", payload, apiErr.Err)
			}
		default:
			t.Fatalf("heartbeat %x: %v", payload, err)
		}
		ctlSeq++
		if err := cl.Call(ctx, ctl, &pb.Heartbeat{NodeId: "ctl", Incarnation: "c", Sequence: ctlSeq, ResourceLimits: limits}, &pb.HeartbeatResponse{}); err != nil {
			t.Fatalf("after heartbeat %x, another node's heartbeat: %v", payload, err)
		}
		select {
		case err := <-srv.Fatal():
			t.Fatalf("after heartbeat %x the scheduler stopped: %v", payload, err)
		default:
		}
	})
}
