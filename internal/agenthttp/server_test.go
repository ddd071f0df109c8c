package agenthttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/agenthttp"
	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
)

const trees = `
version: 1
trees:
  - name: physical
    config: {fair_share_update_period: 50ms}
    pools:
      - {name: a}
`

// get fetches path from the listener: its status and body.
func get(t *testing.T, s *agenthttp.Server, path string) (int, []byte) {
	t.Helper()
	resp, err := http.Get("http://" + s.Addr() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// metricValue is the value of name's sample whose labels include want.
func metricValue(t *testing.T, families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	f := families[name]
	if f == nil {
		t.Fatalf("no metric %s", name)
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && got[k] == v
		}
		if match {
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no sample of %s with labels %v", name, want)
	return 0
}

// TestAgentMetricsAndHealth: a real agent runs two jobs for a real
// scheduler; its listener's metrics count them and its heartbeats, and
// /healthz is 200. Once the scheduler (and its embedded NATS server) is
// gone, /healthz turns 503 naming both reasons.
func TestAgentMetricsAndHealth(t *testing.T) {
	srv := servertest.StartServer(t, trees, func(c *server.Config) {
		c.HTTPAddr = ""
		c.Actors.HeartbeatPeriod = 50 * time.Millisecond
	})
	nc, err := nats.Connect(srv.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	cfg := nodeagent.DefaultConfig("n1", scheduler.Resources{scheduler.CPU: 2, scheduler.UserSlots: 2})
	cfg.HeartbeatPeriod, cfg.WorkDir, cfg.HeartbeatTimeout = 50*time.Millisecond, t.TempDir(), 200*time.Millisecond
	agent, _ := servertest.RunAgent(t, nc, cfg)
	h, err := agenthttp.Listen(agenthttp.Config{Addr: "127.0.0.1:0"}, agenthttp.Source{Node: "n1", Stats: agent.Stats, Connected: nc.IsConnected})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})

	cnc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cnc.Close)
	c := client.New(cnc, 5*time.Second)
	id, err := c.Submit(context.Background(), &pb.OperationSpec{Pool: "a", Tasks: []*pb.TaskSpec{{
		Name: "main", JobCount: 2, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
		Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(100 * time.Millisecond)},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, "the operation completed and acknowledged", func() bool {
		st, err := c.Get(context.Background(), id)
		return err == nil && st.GetState() == pb.OperationState_OPERATION_STATE_COMPLETED && agent.Stats().UnackedFinishedJobs == 0
	})

	code, body := get(t, h, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	node := map[string]string{"node": "n1"}
	got := map[string]float64{}
	for _, name := range []string{"jobs_started_total", "jobs_duplicate_starts_total", "jobs_over_capacity_total", "running_jobs",
		"unacked_finished_jobs", "nats_connected", "heartbeat_failures_consecutive", "leader_epoch", "heartbeat_period_seconds"} {
		got[name] = metricValue(t, families, "sharetree_agent_"+name, node)
	}
	for _, state := range []string{"completed", "failed", "aborted"} {
		got["finished "+state] = metricValue(t, families, "sharetree_agent_jobs_finished_total", map[string]string{"node": "n1", "state": state})
	}
	want := map[string]float64{"jobs_started_total": 2, "jobs_duplicate_starts_total": 0, "jobs_over_capacity_total": 0, "running_jobs": 0,
		"unacked_finished_jobs": 0, "nats_connected": 1, "heartbeat_failures_consecutive": 0, "leader_epoch": float64(srv.Epoch()),
		"heartbeat_period_seconds": 0.05, "finished completed": 2, "finished failed": 0, "finished aborted": 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if ok := metricValue(t, families, "sharetree_agent_heartbeats_ok_total", node); ok < 1 || ok > metricValue(t, families, "sharetree_agent_heartbeats_sent_total", node) {
		t.Errorf("%v heartbeats answered: want at least one, and no more than were sent", ok)
	}
	if families["go_goroutines"] == nil || families["process_cpu_seconds_total"] == nil {
		t.Error("no Go runtime or process metrics")
	}

	code, body = get(t, h, "/healthz")
	var hz agenthttp.Health
	if err := json.Unmarshal(body, &hz); err != nil || code != http.StatusOK || !hz.Healthy || !hz.Connected || hz.Node != "n1" || len(hz.Reasons) != 0 {
		t.Fatalf("/healthz: %d %s (%v), want 200 and healthy", code, body, err)
	}

	srv.Close() // the scheduler, and the NATS server it embeds
	testutil.WaitFor(t, 20*time.Second, "/healthz 503 for both reasons", func() bool {
		code, body := get(t, h, "/healthz")
		hz = agenthttp.Health{}
		return code == http.StatusServiceUnavailable && json.Unmarshal(body, &hz) == nil && len(hz.Reasons) == 2
	})
	if hz.Healthy || hz.Connected || !slices.Contains(hz.Reasons, "not connected to NATS") || hz.ConsecutiveFailedHeartbeats < agenthttp.DefaultUnhealthyAfter {
		t.Errorf("/healthz after the scheduler went: %+v", hz)
	}
}

func TestListenRefusesBadConfig(t *testing.T) {
	src := agenthttp.Source{Node: "n1", Stats: func() nodeagent.Stats { return nodeagent.Stats{} }, Connected: func() bool { return true }}
	for _, c := range []struct {
		cfg  agenthttp.Config
		want error
	}{
		{agenthttp.Config{}, agenthttp.ErrConfig},
		{agenthttp.Config{Addr: "127.0.0.1:0", UnhealthyAfter: -1}, agenthttp.ErrConfig},
		{agenthttp.Config{Addr: "127.0.0.1:notaport"}, agenthttp.ErrListen},
	} {
		if s, err := agenthttp.Listen(c.cfg, src); !errors.Is(err, c.want) {
			if s != nil {
				_ = s.Close()
			}
			t.Errorf("Listen(%+v): %v, want %v", c.cfg, err, c.want)
		}
	}
}
