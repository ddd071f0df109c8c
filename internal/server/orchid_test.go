package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/orchid"
	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

const orchidTreesYAML = `
version: 1
trees:
  - name: physical
    config: {fair_share_update_period: 50ms}
    pools:
      - {name: light, weight: 1}
      - {name: heavy, weight: 3}
      - {name: narrow, max_running_operation_count: 1}
      - {name: quick, mode: fifo, enable_lightweight_operations: true, max_running_operation_count: 1}
`

// orchidDoc is the part of an element's orchid document the test reads.
type orchidDoc struct {
	Kind                             string  `json:"kind"`
	Parent                           string  `json:"parent"`
	State                            *string `json:"state"`
	PendingReason                    *string `json:"pending_reason"`
	QueuePosition                    *int    `json:"queue_position"`
	Lightweight                      *bool   `json:"lightweight"`
	OperationCount                   *int    `json:"operation_count"`
	RunningOperationCount            *int    `json:"running_operation_count"`
	LightweightRunningOperationCount *int    `json:"lightweight_running_operation_count"`
}

type counts struct{ Ops, Running, Lightweight int }

func (d orchidDoc) counts() counts {
	deref := func(p *int) int {
		if p == nil {
			return -1
		}
		return *p
	}
	return counts{deref(d.OperationCount), deref(d.RunningOperationCount), deref(d.LightweightRunningOperationCount)}
}

// httpGet fetches an orchid path and returns the status and body.
func httpGet(t *testing.T, base, path string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); path != "/metrics" && ct != orchid.ContentType {
		t.Errorf("GET %s: Content-Type %q", path, ct)
	}
	return resp.StatusCode, body
}

// withoutCounts drops the attributes the result does not hold, so an
// element's orchid document can be compared with its report.
func withoutCounts(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	for _, k := range []string{"operation_count", "running_operation_count", "lightweight_running_operation_count",
		"max_operation_count", "max_running_operation_count", "lightweight"} {
		delete(m, k)
	}
	return m
}

func TestOrchidOverNATSAndHTTP(t *testing.T) {
	c := startClusterWith(t, orchidTreesYAML, 2, scheduler.Resources{scheduler.CPU: 8, scheduler.UserSlots: 8}, nil)
	ctx := context.Background()
	hour := time.Hour
	lightOp := c.submit(t, simulated("light", 2, 1, hour))
	heavyOp := c.submit(t, simulated("heavy", 2, 1, hour))
	narrowRun := c.submit(t, simulated("narrow", 1, 1, hour))
	c.waitState(t, narrowRun, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)
	narrowWait := c.submit(t, simulated("narrow", 1, 1, hour))
	quickOp := c.submit(t, simulated("quick", 1, 1, hour))
	quickOp2 := c.submit(t, simulated("quick", 1, 1, hour))
	c.waitState(t, narrowWait, pb.OperationState_OPERATION_STATE_PENDING, 10*time.Second)
	for _, id := range []string{lightOp, heavyOp, quickOp, quickOp2} {
		c.waitState(t, id, pb.OperationState_OPERATION_STATE_RUNNING, 10*time.Second)
	}
	oc := orchid.NewClient(client.New(c.nc, 5*time.Second))
	get := func(p subjects.OrchidPath) ([]byte, error) { return oc.Get(ctx, p) }
	base := "http://" + c.srv.HTTPAddr()
	if c.srv.HTTPAddr() == "" {
		t.Fatal("no HTTP listener")
	}

	// Wait until every running job runs, so the shares stop moving.
	testutil.WaitFor(t, 10*time.Second, "every running operation's jobs to run", func() bool {
		r := c.srv.System().Result("physical")
		if r == nil {
			return false
		}
		for _, id := range []string{lightOp, heavyOp, narrowRun, quickOp, quickOp2} {
			e, ok := r.Element(id)
			if !ok || e.ResourceUsage[scheduler.CPU] == 0 || e.ResourceUsage[scheduler.CPU] < e.ResourceDemand[scheduler.CPU] {
				return false
			}
		}
		return true
	})

	// Pool attributes over NATS and HTTP are the result's, as the what-if
	// report names them: compare with an update of the same time.
	for _, pool := range []string{"light", "heavy", "narrow", "quick"} {
		for _, via := range []string{"nats", "http"} {
			testutil.WaitFor(t, 5*time.Second, via+" "+pool+" to match the result of its update", func() bool {
				var doc []byte
				if via == "nats" {
					d, err := get(subjects.OrchidPath{Kind: subjects.OrchidPool, Tree: "physical", Name: pool})
					if err != nil {
						t.Fatalf("orchid %s: %v", pool, err)
					}
					doc = d
				} else {
					code, d := httpGet(t, base, "/orchid/trees/physical/pools/"+pool)
					if code != http.StatusOK {
						t.Fatalf("GET pool %s: %d %s", pool, code, d)
					}
					doc = d
				}
				tree, err := get(subjects.OrchidPath{Kind: subjects.OrchidTree, Tree: "physical"})
				if err != nil {
					t.Fatal(err)
				}
				var tv struct {
					UpdateTime string `json:"update_time"`
				}
				_ = json.Unmarshal(tree, &tv)
				r := c.srv.System().Result("physical")
				if r.Now.UTC().Format(time.RFC3339Nano) != tv.UpdateTime {
					return false // an update ran in between
				}
				e, _ := r.Element(pool)
				want, _ := json.Marshal(scenario.ElementReportOf(e))
				return cmp.Diff(withoutCounts(t, want), withoutCounts(t, doc)) == ""
			})
		}
	}

	// Counts, pending reason and queue position.
	wantCounts := map[string]counts{
		scheduler.RootID: {Ops: 6, Running: 3, Lightweight: 2},
		"light":          {Ops: 1, Running: 1},
		"heavy":          {Ops: 1, Running: 1},
		"narrow":         {Ops: 2, Running: 1},
		"quick":          {Ops: 2, Running: 0, Lightweight: 2},
	}
	treeDoc, err := get(subjects.OrchidPath{Kind: subjects.OrchidTree, Tree: "physical"})
	if err != nil {
		t.Fatal(err)
	}
	var tree struct {
		Tree       string               `json:"tree"`
		Pools      map[string]orchidDoc `json:"pools"`
		Operations map[string]orchidDoc `json:"operations"`
	}
	if err := json.Unmarshal(treeDoc, &tree); err != nil {
		t.Fatal(err)
	}
	gotCounts := map[string]counts{}
	for name, d := range tree.Pools {
		gotCounts[name] = d.counts()
	}
	if diff := cmp.Diff(wantCounts, gotCounts); diff != "" {
		t.Errorf("pool counts (-want +got):\n%s", diff)
	}
	code, body := httpGet(t, base, "/orchid/trees/physical")
	if code != http.StatusOK || string(body) != string(treeDoc)+"\n" {
		// The two reads may straddle an update; the counts must agree.
		var viaHTTP struct {
			Pools map[string]orchidDoc `json:"pools"`
		}
		if err := json.Unmarshal(body, &viaHTTP); err != nil || code != http.StatusOK {
			t.Fatalf("GET tree: %d %s", code, body)
		}
		for name, d := range viaHTTP.Pools {
			if d.counts() != wantCounts[name] {
				t.Errorf("HTTP pool %s counts %+v, want %+v", name, d.counts(), wantCounts[name])
			}
		}
	}
	pending := tree.Operations[narrowWait]
	wantPending := orchidDoc{Kind: "operation", Parent: "narrow", State: ptr("pending"),
		PendingReason: ptr("max_running_operation_count of narrow reached (1/1)"), QueuePosition: ptr(0)}
	if diff := cmp.Diff(wantPending, pending); diff != "" {
		t.Errorf("pending operation (-want +got):\n%s", diff)
	}
	if d := tree.Operations[quickOp]; d.State == nil || *d.State != "running" || d.Lightweight == nil || !*d.Lightweight {
		t.Errorf("lightweight operation: %+v", d)
	}
	if d := tree.Operations[lightOp]; d.Lightweight == nil || *d.Lightweight {
		t.Errorf("vanilla operation in a fair-share pool is not lightweight: %+v", d)
	}

	// One attribute, over NATS and HTTP.
	for _, tc := range []struct {
		path subjects.OrchidPath
		url  string
		want string
	}{
		{subjects.OrchidPath{Kind: subjects.OrchidOperation, Tree: "physical", Name: narrowWait, Attribute: []string{"pending_reason"}},
			"/orchid/trees/physical/operations/" + narrowWait + "/pending_reason", `"max_running_operation_count of narrow reached (1/1)"`},
		{subjects.OrchidPath{Kind: subjects.OrchidOperation, Tree: "physical", Name: narrowWait, Attribute: []string{"queue_position"}},
			"/orchid/trees/physical/operations/" + narrowWait + "/queue_position", `0`},
		{subjects.OrchidPath{Kind: subjects.OrchidPool, Tree: "physical", Name: "narrow", Attribute: []string{"operation_count"}},
			"/orchid/trees/physical/pools/narrow/operation_count", `2`},
		{subjects.OrchidPath{Kind: subjects.OrchidRoot, Tree: "physical", Attribute: []string{"lightweight_running_operation_count"}},
			"/orchid/trees/physical/pools/%3CRoot%3E/lightweight_running_operation_count", `2`},
		{subjects.OrchidPath{Kind: subjects.OrchidRoot, Tree: "physical", Attribute: []string{"resource_limits", "cpu"}},
			"/orchid/trees/physical/root/resource_limits.cpu", `16`},
		{subjects.OrchidPath{Kind: subjects.OrchidPool, Tree: "physical", Name: "narrow", Attribute: []string{"fair_share", "total", "gpu"}},
			"/orchid/trees/physical/pools/narrow/fair_share/total/gpu", `0`},
	} {
		got, err := get(tc.path)
		if err != nil || string(got) != tc.want {
			t.Errorf("NATS %+v = %s, %v; want %s", tc.path, got, err, tc.want)
		}
		code, body := httpGet(t, base, tc.url)
		if code != http.StatusOK || strings.TrimSpace(string(body)) != tc.want {
			t.Errorf("GET %s = %d %s; want %s", tc.url, code, body, tc.want)
		}
	}

	// An operation across its trees.
	code, body = httpGet(t, base, "/orchid/operations/"+narrowWait+"/state")
	if code != http.StatusOK || strings.TrimSpace(string(body)) != `{"id":"`+narrowWait+`","state":"pending","trees":{"physical":"pending"}}` {
		t.Errorf("GET operation state: %d %s", code, body)
	}
	view, err := oc.Operation(ctx, narrowWait, []string{"queue_position"})
	if err != nil || view.State != "pending" || string(view.Trees["physical"]) != "0" {
		t.Errorf("operation over NATS: %+v, %v", view, err)
	}

	// Unknown trees, pools, operations and attributes.
	for _, tc := range []struct {
		name      string
		path      subjects.OrchidPath
		url       string
		code      pb.ErrorCode
		field     string
		status    int
		inMessage string
	}{
		{"unknown tree", subjects.OrchidPath{Kind: subjects.OrchidTree, Tree: "virtual"}, "/orchid/trees/virtual",
			pb.ErrorCode_ERROR_CODE_NOT_FOUND, "tree", 404, `"virtual"`},
		{"unknown pool", subjects.OrchidPath{Kind: subjects.OrchidPool, Tree: "physical", Name: "nope"}, "/orchid/trees/physical/pools/nope",
			pb.ErrorCode_ERROR_CODE_NOT_FOUND, "pool", 404, `no pool "nope"`},
		{"unknown operation", subjects.OrchidPath{Kind: subjects.OrchidOperation, Tree: "physical", Name: "op-nope"}, "/orchid/trees/physical/operations/op-nope",
			pb.ErrorCode_ERROR_CODE_NOT_FOUND, "operation_id", 404, `no operation "op-nope"`},
		{"unknown attribute", subjects.OrchidPath{Kind: subjects.OrchidPool, Tree: "physical", Name: "light", Attribute: []string{"fare_share"}},
			"/orchid/trees/physical/pools/light/fare_share", pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "attribute", 400, `"fare_share" is not one of`},
		{"unknown attribute field", subjects.OrchidPath{Kind: subjects.OrchidPool, Tree: "physical", Name: "light", Attribute: []string{"fair_share", "totl"}},
			"/orchid/trees/physical/pools/light/fair_share/totl", pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "attribute", 400, `fair_share of pool light of tree physical has no "totl"`},
		{"attribute of another kind", subjects.OrchidPath{Kind: subjects.OrchidPool, Tree: "physical", Name: "light", Attribute: []string{"accumulated_resource_volume"}},
			"/orchid/trees/physical/pools/light/accumulated_resource_volume", pb.ErrorCode_ERROR_CODE_NOT_FOUND, "attribute", 404, "has no accumulated_resource_volume"},
		{"pending reason of a running operation", subjects.OrchidPath{Kind: subjects.OrchidOperation, Tree: "physical", Name: lightOp, Attribute: []string{"pending_reason"}},
			"/orchid/trees/physical/operations/" + lightOp + "/pending_reason", pb.ErrorCode_ERROR_CODE_NOT_FOUND, "attribute", 404, "has no pending_reason"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := get(tc.path)
			var ae *client.APIError
			if !errors.As(err, &ae) || ae.Code() != tc.code || ae.Err.GetField() != tc.field || !strings.Contains(ae.Err.GetMessage(), tc.inMessage) {
				t.Errorf("NATS error = %v, want %s (%s) containing %q", err, tc.code, tc.field, tc.inMessage)
			}
			status, body := httpGet(t, base, tc.url)
			var eb orchid.ErrorBody
			if err := json.Unmarshal(body, &eb); err != nil || status != tc.status || eb.Error.Code != tc.code.String() ||
				eb.Error.Field != tc.field || !strings.Contains(eb.Error.Message, tc.inMessage) {
				t.Errorf("GET %s = %d %s, want %d %s (%s) containing %q", tc.url, status, body, tc.status, tc.code, tc.field, tc.inMessage)
			}
		})
	}
	if status, body := httpGet(t, base, "/orchid/operations/op-nope"); status != 404 || !strings.Contains(string(body), "ERROR_CODE_NOT_FOUND") {
		t.Errorf("GET unknown operation across trees = %d %s", status, body)
	}
	if status, body := httpGet(t, base, "/orchid/nothing/here"); status != 404 || !strings.Contains(string(body), `"field":"path"`) {
		t.Errorf("GET bad path = %d %s", status, body)
	}

	// The tree list and the metrics.
	code, body = httpGet(t, base, "/orchid/trees")
	var list orchid.TreeList
	if err := json.Unmarshal(body, &list); err != nil || code != 200 {
		t.Fatalf("GET trees: %d %s", code, body)
	}
	for i := range list.Trees {
		list.Trees[i].UpdateTime = ""
	}
	wantList := orchid.TreeList{Trees: []orchid.TreeSummary{{Tree: "physical", PoolCount: 4, OperationCount: 6,
		RunningOperationCount: 3, LightweightRunningOperationCount: 2, PendingOperationCount: 1}}}
	if diff := cmp.Diff(wantList, list); diff != "" {
		t.Errorf("tree list (-want +got):\n%s", diff)
	}
	code, body = httpGet(t, base, "/metrics")
	for _, want := range []string{
		`sharetree_tree_up{tree="physical"} 1`,
		`sharetree_pool_operation_count{pool="narrow",tree="physical"} 2`,
		`sharetree_pool_running_operation_count{pool="<Root>",tree="physical"} 3`,
		`sharetree_pool_lightweight_running_operation_count{pool="quick",tree="physical"} 2`,
		`sharetree_pool_fair_share{pool="heavy",resource="cpu",tree="physical"}`,
		`sharetree_pool_usage_share{pool="light",resource="cpu",tree="physical"}`,
		`sharetree_pool_demand_share{pool="narrow",resource="cpu",tree="physical"}`,
		`sharetree_tree_fair_share_update_seconds_count{tree="physical"}`,
		`sharetree_tree_fair_share_update_failures_total{tree="physical"} 0`,
		`sharetree_tree_fair_share_last_update_seconds{tree="physical"}`,
		`sharetree_tree_fair_share_results_total{source="recycled",tree="physical"}`,
		`sharetree_tree_fair_share_update_operations_total{outcome="recomputed",tree="physical"}`,
		`sharetree_tree_fair_share_update_operations_total{outcome="kept",tree="physical"}`,
		`sharetree_journal_batches_total `,
		`sharetree_journal_completions_total `,
		`sharetree_journal_failed_jobs_total `,
		`sharetree_journal_write_failures_total 0`,
		`sharetree_journal_trims_total `,
		`sharetree_journal_queued `,
		`sharetree_journal_operations_needing `,
		`sharetree_events_dropped_total 0`,
		`sharetree_events_publish_failures_total 0`,
		`sharetree_requests_rejected_total `,
		`sharetree_leader_epoch 1`,
		`sharetree_leader_lease_valid 1`,
		`sharetree_fenced_writes_total 0`,
		`sharetree_heartbeats_shed_total 0`,
		`sharetree_heartbeat_passes `,
		`sharetree_nodes `,
		`sharetree_nodes_offline_total 0`,
		`sharetree_nodes_lost_total 0`,
		`sharetree_revival_active 0`,
		`sharetree_revival_waiting_nodes 0`,
		`sharetree_node_roster_nodes `,
		`sharetree_storage_available 1`,
		`sharetree_storage_outages_total 0`,
	} {
		if code != 200 || !strings.Contains(string(body), want) {
			t.Errorf("/metrics (%d) lacks %s", code, want)
		}
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h server.Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || resp.StatusCode != 200 || !h.Leading || !h.StorageAvailable || h.Epoch != 1 || h.Name == "" {
		t.Errorf("/healthz: %d %+v %v; want 200, leading, storage available, epoch 1, a name", resp.StatusCode, h, err)
	}
}

func ptr[T any](v T) *T { return &v }
