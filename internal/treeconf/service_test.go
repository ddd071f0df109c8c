package treeconf

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/micro"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/client"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

func startService(t *testing.T, e *env) *Client {
	t.Helper()
	svc, err := NewAdminService(e.nc, e.admin, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	return NewClient(e.nc, 10*time.Second)
}

// apiError returns the typed Error of a refused request.
func apiError(t *testing.T, err error) *pb.Error {
	t.Helper()
	var ae *client.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error = %v, want a refused request", err)
	}
	return ae.Err
}

func TestServiceRoundTrip(t *testing.T) {
	e := newEnv(t)
	c := startService(t, e)
	cx := ctx(t)
	td, err := c.CreateTree(cx, "physical", `{main_resource: cpu, node_tag_filter: "!gpu"}`)
	if err != nil {
		t.Fatal(err)
	}
	if td.GetConfig() != `{"main_resource":"cpu","node_tag_filter":"!gpu"}` || td.GetRevision() == 0 {
		t.Errorf("created tree = %v", td)
	}
	if _, err := c.CreatePool(cx, "physical", "research", `{strong_guarantee_resources: {cpu: 10}}`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreatePool(cx, "physical", "research$alice", `{"parent": "research", "max_operation_count": 30}`); err != nil {
		t.Fatal(err)
	}
	pd, err := c.SetPool(cx, &pb.SetPoolRequest{Tree: "physical", Pool: "research", Key: "integral_guarantees",
		Value: "{guarantee_type: burst, resource_flow: {cpu: 1000}, burst_guarantee_resources: {cpu: 2000}}"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"integral_guarantees":{"burst_guarantee_resources":{"cpu":2000},"guarantee_type":"burst","resource_flow":{"cpu":1000}},"strong_guarantee_resources":{"cpu":10}}`
	if pd.GetConfig() != want {
		t.Errorf("pool after set:\n got %s\nwant %s", pd.GetConfig(), want)
	}
	got, err := c.GetPool(cx, "physical", "research")
	if err != nil || !proto.Equal(got, pd) {
		t.Errorf("get = %v, %v; want %v", got, err, pd)
	}
	pools, err := c.ListPools(cx, "physical")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pools.GetPools() {
		names = append(names, p.GetPool())
	}
	if diff := cmp.Diff([]string{"research", "research$alice"}, names); diff != "" {
		t.Errorf("pools (-want +got):\n%s", diff)
	}
	trees, err := c.ListTrees(cx)
	if err != nil || len(trees.GetTrees()) != 1 || trees.GetDefaultTree() != "physical" {
		t.Errorf("trees = %v, %v", trees, err)
	}
	if _, err := c.CreateTree(cx, "cloud", ""); err != nil {
		t.Fatal(err)
	}
	cl, err := c.SetCluster(cx, &pb.SetClusterRequest{Key: "default_tree", Value: "cloud"})
	if err != nil || cl.GetConfig() != `{"default_tree":"cloud"}` {
		t.Errorf("cluster = %v, %v", cl, err)
	}
	if got, err := c.GetCluster(cx); err != nil || !proto.Equal(got, cl) {
		t.Errorf("get cluster = %v, %v", got, err)
	}
	st, err := c.SetTree(cx, &pb.SetTreeRequest{Tree: "physical", Config: `{}`, ExpectedRevision: td.GetRevision()})
	if err != nil || st.GetConfig() != `{}` {
		t.Errorf("replace tree = %v, %v", st, err)
	}
	res, err := c.Apply(cx, []byte("version: 1\ntrees: [{name: cloud, pools: [{name: x}]}]"), false, true)
	if err != nil || res.GetApplied() || len(res.GetChanges()) != 1 || res.GetChanges()[0].GetAction() != pb.ConfigChangeAction_CONFIG_CHANGE_ACTION_CREATE {
		t.Errorf("dry run = %v, %v", res, err)
	}
	if _, err := c.RemovePool(cx, "physical", "research$alice", 0); err != nil {
		t.Fatal(err)
	}
	if r, err := c.RemovePool(cx, "physical", "research", 0); err != nil || r.GetRevision() == 0 {
		t.Fatalf("remove = %v, %v", r, err)
	}
	if _, err := c.RemoveTree(cx, "physical", 0); err != nil {
		t.Fatal(err)
	}
}

func TestServiceTypedErrors(t *testing.T) {
	e := newEnv(t)
	e.applyBase(t)
	c := startService(t, e)
	cx := ctx(t)
	cases := map[string]struct {
		call func() error
		want *pb.Error
	}{
		"rule": {func() error {
			_, err := c.SetPool(cx, &pb.SetPoolRequest{Tree: "physical", Pool: "burst", Key: "weight", Value: "-1"})
			return err
		}, &pb.Error{Code: pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, Rule: "weight", Field: "weight"}},
		"in use": {func() error { _, err := c.RemovePool(cx, "physical", "project-root", 0); return err },
			&pb.Error{Code: pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, Rule: "pool_has_children"}},
		"exists": {func() error { _, err := c.CreatePool(cx, "physical", "burst", ""); return err },
			&pb.Error{Code: pb.ErrorCode_ERROR_CODE_ALREADY_EXISTS, Rule: "duplicate_name"}},
		"not found": {func() error { _, err := c.GetPool(cx, "physical", "nope"); return err },
			&pb.Error{Code: pb.ErrorCode_ERROR_CODE_NOT_FOUND}},
		"no tree": {func() error { _, err := c.ListPools(cx, "nope"); return err },
			&pb.Error{Code: pb.ErrorCode_ERROR_CODE_NOT_FOUND}},
		"conflict": {func() error {
			_, err := c.SetPool(cx, &pb.SetPoolRequest{Tree: "physical", Pool: "burst", Key: "weight", Value: "2", ExpectedRevision: 1})
			return err
		}, &pb.Error{Code: pb.ErrorCode_ERROR_CODE_CONFLICT}},
		"key and document": {func() error {
			_, err := c.SetTree(cx, &pb.SetTreeRequest{Tree: "physical", Key: "weight", Value: "2", Config: "{}"})
			return err
		}, &pb.Error{Code: pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, Rule: "invalid_value", Field: "weight"}},
	}
	before := e.dump(t)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := apiError(t, tc.call())
			if got.GetMessage() == "" {
				t.Errorf("no message")
			}
			got.Message = ""
			if !proto.Equal(tc.want, got) {
				t.Errorf("error = %v, want %v", got, tc.want)
			}
		})
	}
	if diff := cmp.Diff(before, e.dump(t)); diff != "" {
		t.Errorf("refused requests changed the bucket:\n%s", diff)
	}
}

// TestServiceBadPayloads sends bytes that are not the endpoint's message to
// every endpoint: each answers with a typed INVALID_ARGUMENT and the micro
// error headers, and nothing changes.
func TestServiceBadPayloads(t *testing.T) {
	e := newEnv(t)
	e.applyBase(t)
	startService(t, e)
	var subs []string
	for _, v := range subjects.ConfigVerbs {
		s, _ := subjects.Config(v)
		subs = append(subs, s)
	}
	for _, v := range subjects.TreeVerbs {
		s, _ := subjects.ConfigTree("physical", v)
		subs = append(subs, s)
	}
	for _, v := range subjects.PoolVerbs {
		s, _ := subjects.ConfigPool("physical", "burst", v)
		subs = append(subs, s)
	}
	wrongType, _ := proto.Marshal(&pb.Heartbeat{LeaderEpoch: 5, Tags: []string{"gpu"}}) // fields 6 and 9: unknown to every config request
	before := e.dump(t)
	for _, subj := range subs {
		for name, payload := range map[string][]byte{"garbage": {0xff, 0xff, 0xff, 0xff}, "truncated": {0x0a, 0x10, 'a'}, "other message": wrongType} {
			t.Run(subj+"/"+name, func(t *testing.T) {
				cx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				msg, err := e.nc.RequestWithContext(cx, subj, payload)
				if err != nil {
					t.Fatal(err)
				}
				if code := msg.Header.Get(micro.ErrorCodeHeader); code != "400" {
					t.Errorf("error code header = %q, want 400", code)
				}
				pe := &pb.Error{}
				if err := proto.Unmarshal(msg.Data, pe); err != nil {
					t.Fatal(err)
				}
				if pe.GetCode() != pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT || pe.GetField() != "payload" {
					t.Errorf("error = %v, want INVALID_ARGUMENT on payload", pe)
				}
			})
		}
	}
	if diff := cmp.Diff(before, e.dump(t)); diff != "" {
		t.Errorf("bad payloads changed the bucket:\n%s", diff)
	}
}

func TestServiceSubjectPayloadMismatch(t *testing.T) {
	e := newEnv(t)
	e.applyBase(t)
	startService(t, e)
	subj, _ := subjects.ConfigPool("physical", "burst", subjects.PoolSet)
	data, _ := proto.Marshal(&pb.SetPoolRequest{Tree: "physical", Pool: "relaxed", Key: "weight", Value: "2"})
	var out pb.PoolDocument
	err := client.New(e.nc, 10*time.Second).CallRaw(ctx(t), subj, data, &out)
	got := apiError(t, err)
	if got.GetCode() != pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT || got.GetField() != "pool" {
		t.Errorf("error = %v", got)
	}
}

func TestServiceInfo(t *testing.T) {
	e := newEnv(t)
	svc, err := NewService(e.nc, e.store, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = svc.Stop() }()
	info := svc.Info()
	if info.Name != subjects.ConfigService || len(info.Endpoints) != len(subjects.ConfigVerbs)+len(subjects.TreeVerbs)+len(subjects.PoolVerbs) {
		t.Errorf("service %s has %d endpoints", info.Name, len(info.Endpoints))
	}
}
