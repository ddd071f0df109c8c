package treeconf

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/natsembed"
	"github.com/sharetree/sharetree/internal/testutil"
)

// env is a real embedded nats-server with the config bucket.
type env struct {
	srv   *natsembed.Server
	nc    *nats.Conn
	store *Store
	ops   *fakeCounter
	admin *Admin
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	e := &env{srv: srv, nc: nc, ops: &fakeCounter{}}
	e.store = openStore(t, nc)
	e.admin = NewAdmin(e.store, e.ops, nil)
	return e
}

// openStore opens the bucket over a connection.
func openStore(t *testing.T, nc *nats.Conn) *Store {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenStore(ctx(t), js, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// second returns another Admin over its own connection and its own locks:
// a writer in another process.
func (e *env) second(t *testing.T) *Admin {
	t.Helper()
	return NewAdmin(openStore(t, testutil.Connect(t, e.srv)), e.ops, nil)
}

func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// fakeCounter is an OperationCounter with set counts.
type fakeCounter struct {
	mu     sync.Mutex
	counts map[[2]string]int
}

func (f *fakeCounter) set(tree, pool string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.counts == nil {
		f.counts = map[[2]string]int{}
	}
	f.counts[[2]string{tree, pool}] = n
}

func (f *fakeCounter) PoolOperationCount(tree, pool string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[[2]string{tree, pool}]
}

// baseTrees is the configuration most tests start from: the pool-tree
// seed's project pools, integral pools and a second tree.
const baseTrees = `
version: 1
default_tree: physical
trees:
  - name: physical
    config:
      main_resource: cpu
      pool_config_presets: {small: {max_running_operation_count: 2}}
    pools:
      - {name: project-root, strong_guarantee_resources: {cpu: 100}, max_running_operation_count: 10}
      - {name: project-adhoc, parent: project-root, strong_guarantee_resources: {cpu: 80}}
      - {name: project-batch, parent: project-root, strong_guarantee_resources: {cpu: 0}, weight: 10, max_running_operation_count: 4}
      - {name: project-backup, parent: project-root, strong_guarantee_resources: {cpu: 20}, max_running_operation_count: 2}
      - {name: burst, integral_guarantees: {guarantee_type: burst, resource_flow: {cpu: 10}, burst_guarantee_resources: {cpu: 40}}}
      - {name: relaxed, integral_guarantees: {guarantee_type: relaxed, resource_flow: {cpu: 20}}, config_presets: [small]}
  - name: cloud
    config: {node_tag_filter: cloud}
    pools:
      - {name: research}
`

// applyBase applies baseTrees.
func (e *env) applyBase(t *testing.T) {
	t.Helper()
	if _, err := e.admin.Apply(ctx(t), []byte(baseTrees), false, false); err != nil {
		t.Fatalf("apply base trees: %v", err)
	}
}

// dump is the bucket's content as key → revision:value.
func (e *env) dump(t *testing.T) map[string]string {
	t.Helper()
	list, err := e.store.List(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, en := range list {
		out[en.Key.String()] = string(en.Value)
	}
	return out
}

// wantRule checks that err is a *RuleError with the fields of want and a
// message containing every part.
func wantRule(t *testing.T, err error, want RuleError, parts ...string) {
	t.Helper()
	var re *RuleError
	if !errors.As(err, &re) {
		t.Fatalf("error = %v, want a *RuleError", err)
	}
	got := RuleError{Rule: re.Rule, Tree: re.Tree, Pool: re.Pool, Key: re.Key}
	want.Msg = ""
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rule error (-want +got):\n%s\nmessage: %s", diff, re.Msg)
	}
	for _, p := range parts {
		if !strings.Contains(re.Msg, p) {
			t.Errorf("message %q lacks %q", re.Msg, p)
		}
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("error does not wrap ErrInvalid")
	}
}
