package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// startScheduler runs a scheduler (embedded NATS on a free loopback port,
// JetStream in a temporary directory) without agents, with one pool that
// runs one operation at a time, and returns its URL and a client.
func startScheduler(t *testing.T) (string, *client.Client) {
	t.Helper()
	srv, nc := servertest.Start(t, `
version: 1
trees:
  - name: physical
    config: {fair_share_update_period: 50ms}
    pools:
      - {name: narrow, max_running_operation_count: 1}
`, func(cfg *server.Config) {
		cfg.HTTPAddr = ""
		cfg.Logger = slog.New(slog.DiscardHandler)
	})
	return srv.URL(), client.New(nc, 5*time.Second)
}

func TestGetCLI(t *testing.T) {
	url, c := startScheduler(t)
	ctx := context.Background()
	spec := &pb.OperationSpec{Pool: "narrow", Tasks: []*pb.TaskSpec{{Name: "main", JobCount: 1, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
		Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(time.Hour)}}}}
	running, err := c.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	waiting, err := c.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the orchid to show both operations", func() bool {
		code, out, _ := runCLI(t, "get", "physical/narrow", "operation_count", "--nats-url", url)
		return code == 0 && out == "2\n"
	})
	cli := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, append(args, "--nats-url", url)...)
		if code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
		return out
	}

	out := cli("get", "physical")
	for _, want := range []string{"# tree physical", "POOL", "<Root>", "narrow", "OPERATION", running, waiting,
		"max_running_operation_count of narrow reached (1/1); position 0 in the queue"} {
		if !strings.Contains(out, want) {
			t.Errorf("get physical lacks %q:\n%s", want, out)
		}
	}
	if out := cli("get", "physical/<Root>", "running_operation_count"); out != "1\n" {
		t.Errorf("root running_operation_count = %q", out)
	}
	out = cli("get", "physical/narrow")
	for _, want := range []string{"ATTRIBUTE", "fair_share.total", "operation_count", "running_operation_count", "max_running_operation_count"} {
		if !strings.Contains(out, want) {
			t.Errorf("get physical/narrow lacks %q:\n%s", want, out)
		}
	}
	var pool map[string]any
	if err := json.Unmarshal([]byte(cli("get", "physical/narrow", "-o", "json")), &pool); err != nil {
		t.Fatal(err)
	}
	if pool["kind"] != "pool" || pool["running_operation_count"] != 1.0 || pool["operation_count"] != 2.0 {
		t.Errorf("get physical/narrow -o json = %v", pool)
	}
	if out := cli("get", "physical/narrow", "fair_share.total", "-o", "json"); !strings.HasPrefix(out, `{"user_slots":`) {
		t.Errorf("fair_share.total as JSON = %q", out)
	}
	out = cli("get", "op", waiting)
	for _, want := range []string{"# operation " + waiting + ", pending", "# tree physical", "pending_reason", "queue_position"} {
		if !strings.Contains(out, want) {
			t.Errorf("get op lacks %q:\n%s", want, out)
		}
	}
	if out := cli("get", "op", waiting, "pending_reason"); !strings.Contains(out, "max_running_operation_count of narrow reached (1/1)") {
		t.Errorf("get op pending_reason:\n%s", out)
	}
	var view struct {
		ID    string                     `json:"id"`
		State string                     `json:"state"`
		Trees map[string]json.RawMessage `json:"trees"`
	}
	if err := json.Unmarshal([]byte(cli("get", "op", waiting, "queue_position", "-o", "json")), &view); err != nil {
		t.Fatal(err)
	}
	if view.ID != waiting || view.State != "pending" || string(view.Trees["physical"]) != "0" {
		t.Errorf("get op -o json = %+v", view)
	}
}

func TestGetCLIErrors(t *testing.T) {
	url, _ := startScheduler(t)
	for name, tc := range map[string]struct {
		args     []string
		code     int
		inStderr []string
	}{
		"unknown tree":       {[]string{"get", "virtual"}, 1, []string{"NOT_FOUND (tree)", `"virtual"`}},
		"unknown pool":       {[]string{"get", "physical/nope"}, 1, []string{"NOT_FOUND (pool)", `no pool "nope"`}},
		"unknown operation":  {[]string{"get", "op", "op-nope"}, 1, []string{"NOT_FOUND", `"op-nope"`}},
		"not applicable":     {[]string{"get", "physical/narrow", "accumulated_resource_volume"}, 1, []string{"NOT_FOUND (attribute)", "has no accumulated_resource_volume"}},
		"unknown attribute":  {[]string{"get", "physical/narrow", "fare_share"}, 2, []string{`"fare_share" is not one of`, "fair_share"}},
		"unknown field":      {[]string{"get", "physical/narrow", "fair_share.totl"}, 1, []string{"INVALID_ARGUMENT (attribute)", `no "totl"`}},
		"bad tree name":      {[]string{"get", "phys.ical"}, 2, []string{"tree name", `"phys.ical"`}},
		"bad pool name":      {[]string{"get", "physical/a*b"}, 2, []string{"pool name", `"a*b"`}},
		"empty pool":         {[]string{"get", "physical/"}, 2, []string{"pool name is empty"}},
		"attribute of tree":  {[]string{"get", "physical", "fair_share"}, 2, []string{"an attribute needs TREE/POOL"}},
		"too many":           {[]string{"get", "physical/narrow", "fair_share", "extra"}, 2, []string{"want TREE/POOL [ATTRIBUTE]"}},
		"bad operation id":   {[]string{"get", "op", "a.b"}, 2, []string{"operation id", `"a.b"`}},
		"bad op attribute":   {[]string{"get", "op", "x", "fare_share"}, 2, []string{`"fare_share" is not one of`}},
		"no arguments":       {[]string{"get"}, 2, []string{"want TREE, TREE/POOL [ATTRIBUTE] or op ID [ATTRIBUTE]"}},
		"bad output":         {[]string{"get", "physical", "-o", "yaml"}, 2, []string{"--output"}},
		"attribute wildcard": {[]string{"get", "physical/narrow", "fair_share.>"}, 2, []string{"attribute", `">"`}},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append(tc.args, "--nats-url", url)...)
			if code != tc.code || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d and nothing on stdout", code, out, errOut, tc.code)
			}
			for _, w := range tc.inStderr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
}

// A reply that turns out bad halfway through prints nothing: the pools
// rendered before the bad operations section do not reach stdout.
func TestGetBadReplyPrintsNothing(t *testing.T) {
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	subj, err := subjects.Orchid(subjects.OrchidPath{Kind: subjects.OrchidTree, Tree: "t"})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := nc.Subscribe(subj, func(m *nats.Msg) {
		_ = m.Respond([]byte(`{"tree":"t","update_time":"now","pools":{"p":{"parent":"<Root>"}},"operations":{"o":{"state":7}}}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	// The CLI asks on its own connection: flush so the server holds the
	// subscription first (without it, "no responders" now and then).
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "get", "t", "--nats-url", srv.ClientURL())
	if code != 1 || out != "" || !strings.Contains(errOut, "state") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 1, nothing on stdout and the bad field named", code, out, errOut)
	}
}
