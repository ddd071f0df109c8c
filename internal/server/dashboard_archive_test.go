package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// historyTimes reads a pool's dashboard history from srv: its samples'
// times and cpu usage.
func historyTimes(t *testing.T, srv *server.Server, pool string) (times []string, cpu []float64) {
	t.Helper()
	resp, body := dashboardGet(t, "GET", "http://"+srv.HTTPAddr(), "/dashboard/api/trees/physical/pools/"+pool+"/history")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("history of %s: %d %s", pool, resp.StatusCode, body)
	}
	var h struct {
		Samples []struct {
			Time  string             `json:"time"`
			Usage map[string]float64 `json:"resource_usage"`
		} `json:"samples"`
	}
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatal(err)
	}
	for _, s := range h.Samples {
		times, cpu = append(times, s.Time), append(cpu, s.Usage["cpu"])
	}
	return times, cpu
}

// TestDashboardHistoryOutlivesTheLeader: the dashboard's charts of a new
// leader go back as far as its predecessor's. A leader samples its tree
// while jobs run; it stops, a standby takes over, and the new leader's
// history of the pool holds the old leader's samples, then its own. The
// new leader charts nothing until its nodes have reported their jobs (the
// revival window), so the charts show no dip to zero that did not happen.
func TestDashboardHistoryOutlivesTheLeader(t *testing.T) {
	ns := testutil.StartNATS(t)
	trees, err := scenario.ParseTrees("trees.yaml", []byte(dashboardTreesYAML))
	if err != nil {
		t.Fatal(err)
	}
	config := func(name string) server.Config {
		cfg := server.DefaultConfig()
		cfg.NATSURL, cfg.Trees = ns.ClientURL(), trees
		cfg.Leader.Name, cfg.Leader.RetryPeriod = name, 100*time.Millisecond
		cfg.Actors.HeartbeatPeriod, cfg.Actors.JobRevivalTimeout = 50*time.Millisecond, 2*time.Second
		cfg.Dashboard.Resolution, cfg.Dashboard.Window = 50*time.Millisecond, time.Minute
		return cfg
	}
	first, err := server.Start(context.Background(), config("first"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(first.Close)
	standby := startStandby(t, config("second"))
	servertest.StartAgent(t, ns.ClientURL(), "node-0", scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4})
	cl := client.New(testutil.Connect(t, ns), 5*time.Second)
	if _, err := cl.Submit(context.Background(), simulated("research", 2, 1, time.Hour)); err != nil {
		t.Fatal(err)
	}
	var before []string
	testutil.WaitFor(t, 20*time.Second, "20 samples of the research pool's two jobs", func() bool {
		times, cpu := historyTimes(t, first, "research")
		before = times
		return len(cpu) >= 20 && cpu[len(cpu)-1] == 2
	})
	// Junk in the stream is skipped, not restored, and stops nothing.
	js, err := jetstream.New(testutil.Connect(t, ns))
	if err != nil {
		t.Fatal(err)
	}
	junkSubject, _ := subjects.DashboardSamples("physical")
	for _, junk := range [][]byte{[]byte("not a sample"), {0xff, 0xff, 0xff}, nil} {
		if _, err := js.Publish(context.Background(), junkSubject, junk); err != nil {
			t.Fatal(err)
		}
	}
	first.Close() // releases the lease: the standby takes over at once
	var second *server.Server
	select {
	case second = <-standby:
	case <-time.After(20 * time.Second):
		t.Fatal("the standby did not take over")
	}
	var after []string
	var cpu []float64
	testutil.WaitFor(t, 20*time.Second, "the new leader's history: the old one's samples, then its own", func() bool {
		after, cpu = historyTimes(t, second, "research")
		return len(after) > len(before) && after[len(after)-1] > before[len(before)-1]
	})
	// Every sample the old leader had charted, in order, then the new
	// leader's.
	if len(after) < len(before) || !slices.Equal(after[:len(before)], before) {
		t.Fatalf("the new leader's history does not begin with the old leader's %d samples:\nold %v\nnew %v", len(before), before, after)
	}
	// Once started, the two jobs ran throughout: every sample from the
	// first that charts them does.
	for i, c := range cpu[slices.Index(cpu, 2):] {
		if c != 2 {
			i += slices.Index(cpu, 2)
			t.Errorf("sample %d of %d (%s) has cpu %g, want the two jobs' 2", i, len(cpu), after[i], c)
		}
	}
	t.Logf("the old leader charted %d samples; the new leader's history has %d", len(before), len(after))
}
