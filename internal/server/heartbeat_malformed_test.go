package server_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// TestMalformedHeartbeatsChangeNothing (reliability test 14): a node runs
// two jobs, then its heartbeat subject gets truncated protobuf, another
// message type, 200,000 nested groups, 1.5 MiB of garbage, negative, NaN
// and infinite resources, no incarnation, a finished job in a running
// state and an old sequence. Each is refused with a typed error naming
// the field (the payload, when it does not decode), and none changes the
// node: every one that decodes carries sequence 1000, yet the node's
// next heartbeat, numbered from where it was, is accepted and reconciles
// its two jobs without an abort or a start. A payload over the server's
// max_payload never reaches the scheduler. The scheduler keeps serving.
func TestMalformedHeartbeatsChangeNothing(t *testing.T) {
	srv, nc := servertest.Start(t, treesYAML, func(c *server.Config) { c.HTTPAddr = "" })
	cl := client.New(nc, 5*time.Second)
	ctx := context.Background()
	subj, _ := subjects.NodeHeartbeat("hand-1")
	heartbeatOf := func(seq uint64, running []string) *pb.Heartbeat {
		hb := &pb.Heartbeat{NodeId: "hand-1", Incarnation: "i1", Sequence: seq, ResourceLimits: &pb.Resources{Cpu: 4, UserSlots: 4}}
		for _, id := range running {
			hb.RunningJobs = append(hb.RunningJobs, &pb.RunningJob{JobId: id})
		}
		return hb
	}
	seq := uint64(0)
	beat := func(running []string) *pb.HeartbeatResponse {
		t.Helper()
		seq++
		resp := &pb.HeartbeatResponse{}
		if err := cl.Call(ctx, subj, heartbeatOf(seq, running), resp); err != nil {
			t.Fatalf("heartbeat %d: %v", seq, err)
		}
		return resp
	}

	beat(nil)
	op, err := cl.Submit(ctx, simulated("light", 2, 1, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var running []string
	testutil.WaitFor(t, 10*time.Second, "two jobs started on hand-1", func() bool {
		for _, s := range beat(running).GetJobsToStart() {
			running = append(running, s.GetJobId())
		}
		return len(running) == 2
	})

	encode := func(hb *pb.Heartbeat) []byte {
		b, err := proto.Marshal(hb)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// bad returns a heartbeat numbered 1000 reporting the two jobs, changed
	// by change.
	bad := func(change func(*pb.Heartbeat)) []byte {
		hb := heartbeatOf(1000, running)
		change(hb)
		return encode(hb)
	}
	whole := bad(func(*pb.Heartbeat) {})
	truncated := whole[:len(whole)-3]
	if proto.Unmarshal(truncated, &pb.Heartbeat{}) == nil {
		t.Fatal("the truncated heartbeat decodes; cut it elsewhere")
	}
	other, err := proto.Marshal(&pb.StartOperationRequest{Spec: simulated("light", 1, 1, time.Second), RequestId: "x"})
	if err != nil {
		t.Fatal(err)
	}
	var nested []byte
	for range 200000 {
		nested = protowire.AppendTag(nested, 99, protowire.StartGroupType)
	}
	for range 200000 {
		nested = protowire.AppendTag(nested, 99, protowire.EndGroupType)
	}
	nested = append(bad(func(*pb.Heartbeat) {}), nested...)
	large := bytes.Repeat([]byte{0xff}, 1536<<10)

	cases := []struct {
		name    string
		payload []byte
		code    pb.ErrorCode
		field   string
	}{
		{"truncated protobuf", truncated, pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "payload"},
		{"another message type", other, pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "payload"},
		{"200,000 nested groups", nested, pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "payload"},
		{"1.5 MiB of garbage", large, pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "payload"},
		{"negative cpu", bad(func(hb *pb.Heartbeat) { hb.ResourceLimits.Cpu = -4 }), pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "resource_limits"},
		{"NaN cpu", bad(func(hb *pb.Heartbeat) { hb.ResourceLimits.Cpu = math.NaN() }), pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "resource_limits"},
		{"infinite memory", bad(func(hb *pb.Heartbeat) { hb.ResourceLimits.Memory = math.Inf(1) }), pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "resource_limits"},
		{"no incarnation", bad(func(hb *pb.Heartbeat) { hb.Incarnation = "" }), pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "incarnation"},
		{"finished job still running", bad(func(hb *pb.Heartbeat) {
			hb.FinishedJobs = []*pb.FinishedJob{{JobId: running[0], State: pb.JobState_JOB_STATE_RUNNING}}
		}), pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "finished_jobs[0].state"},
		{"another node's id", bad(func(hb *pb.Heartbeat) { hb.NodeId = "hand-2" }), pb.ErrorCode_ERROR_CODE_NODE_MISMATCH, "node_id"},
		{"an old sequence", bad(func(hb *pb.Heartbeat) { hb.Sequence = 1 }), pb.ErrorCode_ERROR_CODE_STALE_HEARTBEAT, "sequence"},
	}
	for _, c := range cases {
		var apiErr *client.APIError
		err := cl.CallRaw(ctx, subj, c.payload, &pb.HeartbeatResponse{})
		if !errors.As(err, &apiErr) || apiErr.Code() != c.code || apiErr.Err.GetField() != c.field || apiErr.Err.GetMessage() == "" {
			t.Errorf("%s: %v; want %s on %s, with a reason", c.name, err, c.code, c.field)
		}
	}

	// Over the server's max_payload: NATS refuses it; nothing is sent.
	if _, err := nc.Request(subj, make([]byte, nc.MaxPayload()+1), time.Second); !errors.Is(err, nats.ErrMaxPayload) {
		t.Errorf("a heartbeat over max_payload (%d bytes): %v, want %v", nc.MaxPayload()+1, err, nats.ErrMaxPayload)
	}

	// The node is where it was: its next heartbeat, numbered from there, is
	// accepted, and the two jobs run on.
	r := beat(running)
	if len(r.GetJobsToAbort()) != 0 || len(r.GetJobsToStart()) != 0 {
		t.Errorf("the heartbeat after the malformed ones: aborts %v, starts %v; want none", r.GetJobsToAbort(), r.GetJobsToStart())
	}
	st, err := cl.Get(ctx, op)
	if err != nil {
		t.Fatal(err)
	}
	if j := st.GetJobs(); j.GetRunning() != 2 || j.GetFailed() != 0 || j.GetAborted() != 0 {
		t.Errorf("the operation's jobs after the malformed heartbeats: %v, want 2 running", j)
	}
	select {
	case err := <-srv.Fatal():
		t.Fatalf("the scheduler stopped: %v", err)
	default:
	}
}
