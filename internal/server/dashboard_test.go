package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

const dashboardTreesYAML = `
version: 1
trees:
  - name: physical
    config: {fair_share_update_period: 50ms}
    pools:
      - {name: research, strong_guarantee_resources: {cpu: 2}}
      - {name: narrow, max_running_operation_count: 1}
      - name: burst
        integral_guarantees: {guarantee_type: burst, resource_flow: {cpu: 1}, burst_guarantee_resources: {cpu: 2}}
`

// dashboardGet fetches a dashboard path (without following redirects) and
// returns the response and its body.
func dashboardGet(t *testing.T, method, base, path string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// TestDashboardShowsTheLiveTreeAndItsHistory runs a real scheduler with
// agents and reads every dashboard page: the history follows the jobs
// that run, the tree page lists the pools and the waiting operation with
// its reason, the pool pages chart the seeds' figures, and bad requests
// are refused with the status that says why.
func TestDashboardShowsTheLiveTreeAndItsHistory(t *testing.T) {
	c := startClusterConfigured(t, dashboardTreesYAML, 2, scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4}, nil,
		func(cfg *server.Config) {
			cfg.Dashboard.Resolution, cfg.Dashboard.Window = 50*time.Millisecond, time.Minute
		})
	base := "http://" + c.srv.HTTPAddr()
	hour := time.Hour
	research := c.submit(t, simulated("research", 2, 1, hour))
	burst := c.submit(t, simulated("burst", 1, 1, hour))
	narrowRun := c.submit(t, simulated("narrow", 1, 1, hour))
	for _, id := range []string{research, burst, narrowRun} {
		c.waitState(t, id, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)
	}
	narrowWait := c.submit(t, simulated("narrow", 1, 1, hour))
	c.waitState(t, narrowWait, pb.OperationState_OPERATION_STATE_PENDING, 10*time.Second)

	type usage struct {
		Samples []struct {
			Time   string             `json:"time"`
			Usage  map[string]float64 `json:"resource_usage"`
			Volume map[string]float64 `json:"accumulated_resource_volume"`
		} `json:"samples"`
	}
	// read fetches a pool's history (dashboard.HistoryJSON).
	read := func(pool string) usage {
		t.Helper()
		resp, body := dashboardGet(t, "GET", base, "/dashboard/api/trees/physical/pools/"+url.PathEscape(pool)+"/history")
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("history of %s: %d %q %s", pool, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		var u usage
		if err := json.Unmarshal([]byte(body), &u); err != nil {
			t.Fatalf("history of %s is not JSON: %v\n%s", pool, err, body)
		}
		return u
	}
	// The research pool's two jobs run: its history reaches cpu 2 and
	// keeps sampling.
	testutil.WaitFor(t, 10*time.Second, "the research pool's history to show its two running jobs", func() bool {
		u := read("research")
		n := len(u.Samples)
		return n >= 3 && u.Samples[n-1].Usage["cpu"] == 2
	})
	u := read("research")
	for k := 1; k < len(u.Samples); k++ {
		if u.Samples[k].Time <= u.Samples[k-1].Time {
			t.Fatalf("samples out of order at %d: %s then %s", k, u.Samples[k-1].Time, u.Samples[k].Time)
		}
	}
	if u.Samples[0].Volume != nil {
		t.Errorf("research is not an integral pool, yet its history has a volume: %v", u.Samples[0].Volume)
	}
	testutil.WaitFor(t, 10*time.Second, "the burst pool's history to have its volume", func() bool {
		b := read("burst")
		n := len(b.Samples)
		return n > 0 && b.Samples[n-1].Volume != nil && b.Samples[n-1].Usage["cpu"] == 1
	})

	resp, body := dashboardGet(t, "GET", base, "/dashboard/")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `href="/dashboard/trees/physical"`) {
		t.Fatalf("trees page: %d\n%s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("trees page Content-Type %q", ct)
	}
	resp, body = dashboardGet(t, "GET", base, "/dashboard/trees/physical")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("tree page: %d\n%s", resp.StatusCode, body)
	}
	for _, want := range []string{
		`href="/dashboard/trees/physical/pools/%3CRoot%3E"`, `href="/dashboard/trees/physical/pools/research"`,
		`href="/dashboard/trees/physical/pools/narrow"`, `href="/dashboard/trees/physical/pools/burst"`,
		"Waiting operations (1)", narrowWait, "max_running_operation_count of narrow reached (1/1)",
		"strong 25%", // research's guarantee: 2 of 8 cpu
		`<meta http-equiv="refresh" content="5">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("tree page lacks %q", want)
		}
	}
	for _, running := range []string{research, burst, narrowRun} {
		if strings.Contains(body, running) {
			t.Errorf("tree page lists running operation %s as waiting", running)
		}
	}
	for pool, charts := range map[string][]string{
		"research": {"Usage and demand (cpu)", "Usage and fair share (cpu)", "strong guarantee"},
		"burst":    {"Usage and demand (cpu)", "Usage and fair share (cpu)", "Accumulated volume (cpu·s)", "burst guarantee", "capacity"},
		"<Root>":   {"Usage and demand (cpu)"},
	} {
		resp, body := dashboardGet(t, "GET", base, "/dashboard/trees/physical/pools/"+url.PathEscape(pool)+"?resource=cpu")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("pool page %s: %d\n%s", pool, resp.StatusCode, body)
		}
		if got, want := strings.Count(body, "<svg "), 2+map[bool]int{true: 1}[pool == "burst"]; got != want {
			t.Errorf("pool page %s: %d charts, want %d", pool, got, want)
		}
		for _, want := range charts {
			if !strings.Contains(body, want) {
				t.Errorf("pool page %s lacks %q", pool, want)
			}
		}
	}
	resp, body = dashboardGet(t, "GET", base, "/dashboard/trees/physical/pools/research?resource=memory")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Usage and demand (memory)") {
		t.Errorf("memory charts: %d", resp.StatusCode)
	}

	for _, tc := range []struct {
		method, path string
		status       int
		says         string
	}{
		{"GET", "/dashboard/trees/nope", http.StatusNotFound, "unknown tree: &#34;nope&#34;"},
		{"GET", "/dashboard/trees/physical/pools/nope", http.StatusNotFound, "tree physical has no pool &#34;nope&#34;"},
		{"GET", "/dashboard/trees/physical/pools/research?resource=disk", http.StatusBadRequest, "unknown resource: &#34;disk&#34;"},
		{"GET", "/dashboard/trees/bad%20name", http.StatusBadRequest, "bad request"},
		{"GET", "/dashboard/api/trees/physical/pools/nope/history", http.StatusNotFound, `tree physical has no pool \"nope\"`},
		{"GET", "/dashboard/elsewhere", http.StatusNotFound, "not a dashboard page"},
		{"POST", "/dashboard/", http.StatusMethodNotAllowed, "not a dashboard page"},
	} {
		resp, body := dashboardGet(t, tc.method, base, tc.path)
		if resp.StatusCode != tc.status || !strings.Contains(body, tc.says) {
			t.Errorf("%s %s: %d, want %d saying %q\n%s", tc.method, tc.path, resp.StatusCode, tc.status, tc.says, body)
		}
	}
	resp, _ = dashboardGet(t, "GET", base, "/")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/dashboard/" {
		t.Errorf("/: %d to %q, want a redirect to /dashboard/", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body = dashboardGet(t, "GET", base, "/dashboard/style.css")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") || !strings.Contains(body, "svg.chart") {
		t.Errorf("style sheet: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}
