package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

func TestAgentBadFlagsExitTwo(t *testing.T) {
	cases := map[string]struct {
		args    []string
		wantErr []string
	}{
		"missing node id":   {[]string{"agent", "--resources", "cpu=8"}, []string{"--node-id is required"}},
		"bad node id":       {[]string{"agent", "--node-id", "a.b", "--resources", "cpu=8"}, []string{"--node-id", `"a.b"`}},
		"missing resources": {[]string{"agent", "--node-id", "n1"}, []string{"--resources is required"}},
		"unknown resource": {[]string{"agent", "--node-id", "n1", "--resources", "cpu=8,disk=3"},
			[]string{"--resources", `"disk=3"`}},
		"bad amount":     {[]string{"agent", "--node-id", "n1", "--resources", "cpu=lots"}, []string{"--resources", `"cpu=lots"`}},
		"zero resources": {[]string{"agent", "--node-id", "n1", "--resources", "cpu=0"}, []string{"--resources", "positive"}},
		"http addr without a port": {[]string{"agent", "--node-id", "n1", "--resources", "cpu=8", "--http-addr", "localhost"},
			[]string{"--http-addr", `"localhost"`, "host:port"}},
		"zero period": {[]string{"agent", "--node-id", "n1", "--resources", "cpu=8", "--heartbeat-period", "0s"},
			[]string{"--heartbeat-period"}},
		"bad period": {[]string{"agent", "--node-id", "n1", "--resources", "cpu=8", "--heartbeat-period", "often"},
			[]string{"heartbeat-period"}},
		"bad log level": {[]string{"agent", "--node-id", "n1", "--resources", "cpu=8", "--log-level", "loud"},
			[]string{"--log-level", `"loud"`}},
		"duplicate tag": {[]string{"agent", "--node-id", "n1", "--resources", "cpu=8", "--tags", "a,a"}, []string{`--tags: "a" appears twice`}},
		"positional":    {[]string{"agent", "extra"}, []string{`unexpected argument "extra"`}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(t, c.args...)
			if code != 2 || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and nothing on stdout", code, out, errOut)
			}
			for _, w := range c.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
}

func TestAgentCommandHeartbeatsUntilCancelled(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	subj, err := subjects.NodeHeartbeat("node-7")
	if err != nil {
		t.Fatal(err)
	}
	beats := make(chan *pb.Heartbeat, 64)
	sub, err := nc.Subscribe(subj, func(m *nats.Msg) {
		hb := &pb.Heartbeat{}
		if proto.Unmarshal(m.Data, hb) == nil {
			select {
			case beats <- hb:
			default:
			}
		}
		data, _ := proto.Marshal(&pb.HeartbeatResponse{LeaderEpoch: 1})
		_ = m.Respond(data)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	f := agentFlags{natsURL: srv.ClientURL(), nodeID: "node-7", resources: "cpu=8,memory=16Gi,user_slots=8",
		tags: "gpu-less, rack-b", period: 20 * time.Millisecond, workDir: t.TempDir(), logLevel: "info", httpAddr: "127.0.0.1:0"}
	cfg, level, err := f.config()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr testutil.LockedBuffer
	done := make(chan error, 1)
	go func() { done <- runAgent(ctx, f.natsURL, f.httpAddr, cfg, &stderr, level) }()

	var hb *pb.Heartbeat
	select {
	case hb = <-beats:
	case <-time.After(20 * time.Second):
		t.Fatal("no heartbeat from the agent")
	}
	want := &pb.Heartbeat{NodeId: "node-7", Incarnation: hb.GetIncarnation(), Sequence: 1,
		ResourceLimits: &pb.Resources{UserSlots: 8, Cpu: 8, Memory: 16 << 30}, ResourceUsage: &pb.Resources{},
		Tags: []string{"gpu-less", "rack-b"}}
	if diff := cmp.Diff(want, hb, protocmp.Transform()); diff != "" {
		t.Errorf("first heartbeat (-want +got):\n%s", diff)
	}
	// Its HTTP listener (--http-addr): healthy while heartbeats are
	// answered, and the node's metrics.
	var addr string
	testutil.WaitFor(t, 10*time.Second, "the agent's http listener logged", func() bool {
		m := regexp.MustCompile(`msg="http listening" addr=(\S+)`).FindStringSubmatch(stderr.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	})
	testutil.WaitFor(t, 10*time.Second, "the agent's /healthz 200 and its metrics", func() bool {
		code, _ := httpGet(t, "http://"+addr+"/healthz")
		_, metrics := httpGet(t, "http://"+addr+"/metrics")
		return code == http.StatusOK && strings.Contains(metrics, `sharetree_agent_leader_epoch{node="node-7"} 1`)
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("runAgent: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("runAgent did not return after cancel")
	}
	if !strings.Contains(stderr.String(), "node agent started") {
		t.Errorf("stderr lacks the start log: %q", stderr.String())
	}
}

// A tag no node_tag_filter can name (a space, an operator) would keep the
// node out of every tree with a filter: --tags refuses it, naming the tag.
func TestAgentTagsMustBeFilterTags(t *testing.T) {
	for _, tc := range []struct{ tags, bad string }{
		{"gpu ssd", `"gpu ssd"`},
		{"ssd,gpu&spot", `"gpu&spot"`},
		{"rack(1)", `"rack(1)"`},
	} {
		f := agentFlags{nodeID: "n1", resources: "cpu=8", tags: tc.tags, period: time.Second, logLevel: "info"}
		_, _, err := f.config()
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--tags") || !strings.Contains(err.Error(), tc.bad) {
			t.Errorf("--tags %q: error %v; want a usage error naming --tags and %s", tc.tags, err, tc.bad)
		}
	}
	f := agentFlags{nodeID: "n1", resources: "cpu=8", tags: "gpu, rack-1,zone:a/b.c", period: time.Second, logLevel: "info"}
	cfg, _, err := f.config()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"gpu", "rack-1", "zone:a/b.c"}, cfg.Tags); d != "" {
		t.Errorf("tags (-want +got):\n%s", d)
	}
}

// httpGet returns a GET's status and body (0 and "" when it fails).
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
