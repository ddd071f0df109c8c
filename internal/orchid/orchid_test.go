package orchid

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// fakeSource serves fixed snapshots.
type fakeSource struct {
	trees map[string]*actors.TreeIntrospection
}

func (f *fakeSource) Trees() []string { return []string{"physical"} }

func (f *fakeSource) Introspect(tree string, scope actors.Scope) (*actors.TreeIntrospection, error) {
	in, ok := f.trees[tree]
	if !ok {
		return nil, actors.ErrUnknownTree
	}
	// Like the tree actor: only the operations the scope selects.
	out := *in
	out.Operations = nil
	for _, op := range in.Operations {
		if scope.AllOperations || op.ID == scope.Operation {
			out.Operations = append(out.Operations, op)
		}
	}
	return &out, nil
}

func (f *fakeSource) Get(*actors.GetOperation) {}

// snapshot runs the engine on two pools with one running operation in
// "a", and adds a pending operation in "b" and a pool "new" the update has
// not seen.
func snapshot(t *testing.T) *actors.TreeIntrospection {
	t.Helper()
	one := 1
	pools := []scheduler.PoolConfig{{Name: "a"}, {Name: "b", MaxRunningOperationCount: &one}}
	res, err := scheduler.Update(&scheduler.Snapshot{
		Now:     time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Cluster: scheduler.Cluster{Total: scheduler.Resources{scheduler.CPU: 10, scheduler.UserSlots: 10}},
		Tree:    scheduler.DefaultTreeConfig(), Pools: pools,
		Operations: []scheduler.Operation{{ID: "op-a", Pool: "a", Demand: scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4}}},
	}, &scheduler.State{})
	if err != nil {
		t.Fatal(err)
	}
	return &actors.TreeIntrospection{
		Tree: "physical", Result: res,
		Pools: []actors.PoolIntrospection{
			{Name: scheduler.RootID, Counts: scheduler.PoolCounts{Operations: 2, Running: 1, MaxRunning: 2000}},
			{Name: "a", Parent: scheduler.RootID, Counts: scheduler.PoolCounts{Operations: 1, Running: 1, MaxRunning: 8}},
			{Name: "b", Parent: scheduler.RootID, Counts: scheduler.PoolCounts{Operations: 1, Pending: 1, MaxRunning: 1}},
			{Name: "new", Parent: "a", Counts: scheduler.PoolCounts{MaxRunning: 8}},
		},
		Operations: []actors.OperationIntrospection{
			{ID: "op-a", Pool: "a", Admission: scheduler.AdmissionInfo{State: scheduler.AdmissionRunning}},
			{ID: "op-b", Pool: "b", SpecDemand: scheduler.Resources{scheduler.CPU: 5, scheduler.UserSlots: 1},
				Admission: scheduler.AdmissionInfo{State: scheduler.AdmissionPending, QueuePool: "b", QueuePosition: 0,
					PendingReason: "max_running_operation_count of b reached (0/1)"}},
		},
	}
}

func TestBuildTree(t *testing.T) {
	v := BuildTree(snapshot(t))
	type row struct {
		Name, Kind, Parent string
		Ops, Running       int
	}
	var pools []row
	for _, e := range v.Pools {
		pools = append(pools, row{e.Name, e.Kind, e.Parent, *e.OperationCount, *e.RunningOperationCount})
	}
	want := []row{{"<Root>", "root", "", 2, 1}, {"a", "pool", "<Root>", 1, 1}, {"b", "pool", "<Root>", 1, 0}, {"new", "pool", "a", 0, 0}}
	if diff := cmp.Diff(want, pools); diff != "" {
		t.Errorf("pools (-want +got):\n%s", diff)
	}
	if v.UpdateTime != "2026-01-02T03:04:05Z" {
		t.Errorf("update time %q", v.UpdateTime)
	}
	for _, tc := range []struct {
		path []string
		want string
	}{
		{[]string{"state"}, `"running"`},
		{[]string{"lightweight"}, `false`},
		{[]string{"fair_share", "total", "cpu"}, `0.4`},
		{[]string{"resource_demand", "cpu"}, `4`},
	} {
		e, err := v.Operation("op-a")
		if err != nil {
			t.Fatal(err)
		}
		got, err := Attribute(e, "op-a", tc.path)
		if err != nil || string(got) != tc.want {
			t.Errorf("op-a %v = %s, %v; want %s", tc.path, got, err, tc.want)
		}
	}
	b, _ := v.Operation("op-b")
	for path, want := range map[string]string{"state": `"pending"`, "queue_position": `0`, "demand_share.cpu": `0.5`,
		"pending_reason": `"max_running_operation_count of b reached (0/1)"`} {
		got, err := Attribute(b, "op-b", strings.Split(path, "."))
		if err != nil || string(got) != want {
			t.Errorf("op-b %s = %s, %v; want %s", path, got, err, want)
		}
	}
	for name, tc := range map[string]struct {
		path []string
		want error
	}{
		"unknown":           {[]string{"fare_share"}, ErrUnknownAttribute},
		"unknown field":     {[]string{"fair_share", "totl"}, ErrUnknownAttribute},
		"field of a number": {[]string{"queue_position", "x"}, ErrUnknownAttribute},
		"not set":           {[]string{"fifo_index"}, ErrAttributeNotSet},
	} {
		if _, err := Attribute(b, "op-b", tc.path); !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", name, err, tc.want)
		}
	}
	if _, err := v.Pool("nope"); !errors.Is(err, ErrUnknownPool) {
		t.Errorf("unknown pool: %v", err)
	}
}

func TestFieldsKeepOrder(t *testing.T) {
	got, err := Fields([]byte(`{"z": 1, "a": {"b": [1, 2]}, "m": "x"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{{"z", json.RawMessage(`1`)}, {"a", json.RawMessage(`{"b": [1, 2]}`)}, {"m", json.RawMessage(`"x"`)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := Fields([]byte(`[1]`)); err == nil {
		t.Error("an array is not an object")
	}
}

func TestHandlerRoutes(t *testing.T) {
	o := New(&fakeSource{trees: map[string]*actors.TreeIntrospection{"physical": snapshot(t)}}, 0, nil)
	srv := httptest.NewServer(o.Handler())
	defer srv.Close()
	for _, tc := range []struct {
		path   string
		status int
		body   string
	}{
		{"/orchid/trees/physical/pools/a/operation_count", 200, "1"},
		{"/orchid/trees/physical/pools/%3CRoot%3E/running_operation_count", 200, "1"},
		{"/orchid/trees/physical/root/max_running_operation_count", 200, "2000"},
		{"/orchid/trees/physical/operations/op-b/queue_position", 200, "0"},
		{"/orchid/trees/physical/pools/a/fair_share/total/cpu", 200, "0.4"},
		{"/orchid/trees/physical/pools/a/fair_share.total.cpu", 200, "0.4"},
		{"/orchid/trees/physical/pools/new/kind", 200, `"pool"`},
		{"/orchid/trees/virtual", 404, `{"error":{"code":"ERROR_CODE_NOT_FOUND","message":"unknown tree","field":"tree"}}`},
		{"/orchid/trees/physical/pools/a*", 400, `{"error":{"code":"ERROR_CODE_INVALID_ARGUMENT","message":"invalid token: pool name \"a*\" has '*' at byte 1; only letters, digits, '_', '-' and '$' are allowed"}}`},
		{"/orchid/trees/physical/pools/a/bogus", 400, ""},
		{"/orchid/elsewhere", 404, ""},
	} {
		resp, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != tc.status || (tc.body != "" && strings.TrimSpace(string(body)) != tc.body) {
			t.Errorf("GET %s = %d %s, want %d %s", tc.path, resp.StatusCode, body, tc.status, tc.body)
		}
	}
	doc, err := o.Answer(subjects.OrchidPath{Kind: subjects.OrchidTrees})
	if err != nil || !strings.Contains(string(doc), `"pending_operation_count":1`) {
		t.Errorf("trees = %s, %v", doc, err)
	}
}

// A pool or an operation built alone is what the whole tree's document
// says of it.
func TestElementsAloneMatchTheTree(t *testing.T) {
	in := snapshot(t)
	v := BuildTree(in)
	for _, want := range v.Pools {
		got, err := BuildPool(in, want.Name)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("pool %s (-tree +alone):\n%s", want.Name, d)
		}
	}
	for _, want := range v.Operations {
		got, err := BuildOperation(in, want.Name)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("operation %s (-tree +alone):\n%s", want.Name, d)
		}
	}
	if _, err := BuildPool(in, "nope"); !errors.Is(err, ErrUnknownPool) {
		t.Errorf("unknown pool: %v", err)
	}
	if _, err := BuildOperation(in, "nope"); !errors.Is(err, ErrUnknownOperation) {
		t.Errorf("unknown operation: %v", err)
	}
}

// A tree whose update was computed while a new leader waited for its
// nodes' jobs says so, in the tree list and in the tree's document; one
// that was not says nothing.
func TestTreesSayTheyAreBeingRevived(t *testing.T) {
	for _, reviving := range []bool{true, false} {
		in := snapshot(t)
		in.Reviving = reviving
		o := New(&fakeSource{trees: map[string]*actors.TreeIntrospection{"physical": in}}, time.Second, nil)
		list, err := o.Answer(subjects.OrchidPath{Kind: subjects.OrchidTrees})
		if err != nil {
			t.Fatal(err)
		}
		tree, err := o.Answer(subjects.OrchidPath{Kind: subjects.OrchidTree, Tree: "physical"})
		if err != nil {
			t.Fatal(err)
		}
		for what, doc := range map[string][]byte{"tree list": list, "tree": tree} {
			if got := strings.Contains(string(doc), `"reviving":true`); got != reviving {
				t.Errorf("reviving %v: the %s says reviving: %v\n%s", reviving, what, got, doc)
			}
		}
	}
}

// The metrics of a tree being revived leave its pools' shares and
// starvation out (a gap in the series, not a false dip) and say why.
func TestMetricsLeaveOutTheSharesOfATreeBeingRevived(t *testing.T) {
	for _, reviving := range []bool{true, false} {
		in := snapshot(t)
		in.Reviving = reviving
		reg := prometheus.NewRegistry()
		reg.MustRegister(NewCollector(New(&fakeSource{trees: map[string]*actors.TreeIntrospection{"physical": in}}, time.Second, nil)))
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got, flag := map[string]int{}, -1.0
		for _, f := range families {
			got[f.GetName()] = len(f.GetMetric())
			if f.GetName() == "sharetree_tree_reviving" {
				flag = f.GetMetric()[0].GetGauge().GetValue()
			}
		}
		if want := map[bool]float64{true: 1, false: 0}[reviving]; flag != want {
			t.Errorf("reviving %v: sharetree_tree_reviving %g, want %g", reviving, flag, want)
		}
		if shares := got["sharetree_pool_usage_share"] + got["sharetree_pool_starvation_status"]; (shares == 0) != reviving {
			t.Errorf("reviving %v: %d share and starvation series", reviving, shares)
		}
		if got["sharetree_pool_operation_count"] == 0 {
			t.Errorf("reviving %v: the pools' counts are left out too", reviving)
		}
	}
}
