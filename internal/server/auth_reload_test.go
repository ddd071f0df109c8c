package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/natsauth"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
)

// authDoc is an auth file of one admin, the given clients (name → key)
// and agents (node → key), in that order.
func authDoc(t *testing.T, admin *natsauth.Key, clients, agents [][2]string) *natsauth.File {
	t.Helper()
	doc := fmt.Sprintf("version: 1\nadmins: [{name: ops, nkey: %s}]\nclients:\n", admin.Public())
	for _, c := range clients {
		doc += fmt.Sprintf("  - {name: %s, nkey: %s}\n", c[0], c[1])
	}
	doc += "agents:\n"
	for _, a := range agents {
		doc += fmt.Sprintf("  - {node: %s, nkey: %s}\n", a[0], a[1])
	}
	f, err := natsauth.Parse("auth.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// securedAgent runs the agent of node with key on url until the test ends,
// on a connection that keeps reconnecting; disconnects counts the times it
// lost the server, errs its asynchronous errors.
func securedAgent(t *testing.T, url, node string, key *natsauth.Key) (a *nodeagent.Agent, nc *nats.Conn, disconnects *atomic.Int64, errs *asyncErrors) {
	t.Helper()
	opts, err := natsauth.AgentOptions(node, key)
	if err != nil {
		t.Fatal(err)
	}
	disconnects, errs = new(atomic.Int64), new(asyncErrors)
	opts = append(opts, errs.handler(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.DisconnectErrHandler(func(*nats.Conn, error) { disconnects.Add(1) }))
	if nc, err = nats.Connect(url, opts...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	cfg := nodeagent.DefaultConfig(node, scheduler.Resources{scheduler.CPU: 2, scheduler.UserSlots: 2})
	cfg.HeartbeatPeriod, cfg.WorkDir = 50*time.Millisecond, t.TempDir()
	a, _ = servertest.RunAgent(t, nc, cfg)
	return a, nc, disconnects, errs
}

// TestReloadedAuthRevokesAndAddsKeys (reliability test 15, revocation): a
// scheduler embedding NATS with an auth file takes a new one while it
// runs. The agent whose node the new file no longer lists is disconnected
// at once with an authorization violation and cannot connect again, and
// its node goes offline; the other agent keeps its connection and its
// heartbeats; a client key the new file adds can submit. A reload the
// server cannot take changes nothing.
func TestReloadedAuthRevokesAndAddsKeys(t *testing.T) {
	admin, cli, cli2, n1, n2 := newKey(t), newKey(t), newKey(t), newKey(t), newKey(t)
	before := authDoc(t, admin, [][2]string{{"ci", cli.Public()}}, [][2]string{{"n1", n1.Public()}, {"n2", n2.Public()}})
	srv := servertest.StartServer(t, treesYAML, func(c *server.Config) {
		c.HTTPAddr, c.Auth = "", before
		c.Actors.HeartbeatPeriod = 50 * time.Millisecond
		c.Actors.NodeOfflineTimeout, c.Actors.NodeLostTimeout = time.Second, time.Hour
	})
	url := srv.URL()
	a1, nc1, _, errs1 := securedAgent(t, url, "n1", n1)
	a2, nc2, disconnects2, _ := securedAgent(t, url, "n2", n2)
	for _, a := range []*nodeagent.Agent{a1, a2} {
		testutil.WaitFor(t, 10*time.Second, "both agents heard", func() bool { return a.Stats().HeartbeatsOK >= 3 })
	}
	if _, err := connectAs(url, cli2); err == nil {
		t.Fatal("a key the auth file does not list yet connected")
	}

	// A reload refused: the auth file in force stays (n1 still connected).
	if _, err := srv.ReloadAuth(nil); !errors.Is(err, server.ErrAuthReload) {
		t.Errorf("ReloadAuth(nil): %v, want ErrAuthReload", err)
	}

	after := authDoc(t, admin, [][2]string{{"ci", cli.Public()}, {"ci2", cli2.Public()}}, [][2]string{{"n2", n2.Public()}})
	change, err := srv.ReloadAuth(after)
	if err != nil {
		t.Fatal(err)
	}
	wantAdded, wantRemoved := "client ci2 "+cli2.Public(), "agent n1 "+n1.Public()
	if len(change.Added) != 1 || change.Added[0] != wantAdded || len(change.Removed) != 1 || change.Removed[0] != wantRemoved {
		t.Errorf("change %+v, want added [%s] and removed [%s]", change, wantAdded, wantRemoved)
	}

	// n1: cut off at once, and kept out.
	errs1.expect(t, "authorization violation")
	testutil.WaitFor(t, 10*time.Second, "n1's node offline", func() bool {
		off, _ := srv.System().NodeTransitions()
		return off == 1
	})
	if nc1.IsConnected() {
		t.Error("n1's connection is still up after its key was revoked")
	}
	if nc, err := connectAs(url, n1); err == nil {
		nc.Close()
		t.Error("n1's revoked key connected again")
	}
	// n2: never disconnected, heartbeats answered all along.
	ok := a2.Stats().HeartbeatsOK
	testutil.WaitFor(t, 10*time.Second, "20 more heartbeats of n2", func() bool { return a2.Stats().HeartbeatsOK >= ok+20 })
	if d := disconnects2.Load(); d != 0 || !nc2.IsConnected() {
		t.Errorf("n2's connection was lost %d times (connected now: %v); a reload must not touch users that stay", d, nc2.IsConnected())
	}
	if off, _ := srv.System().NodeTransitions(); off != 1 {
		t.Errorf("%d nodes went offline, want n1's only", off)
	}
	// ci2: added, submits as itself.
	c2, _ := securedClient(t, url, cli2, "ci2")
	id, err := c2.Submit(context.Background(), &pb.OperationSpec{Pool: "light", Tasks: []*pb.TaskSpec{{
		Name: "main", JobCount: 1, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
		Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(time.Second)}}}})
	if err != nil {
		t.Fatalf("the added client could not submit: %v", err)
	}
	st, err := c2.Get(context.Background(), id)
	if err != nil || st.GetSpec().GetUser() != "ci2" {
		t.Errorf("the added client's operation: %v, user %q; want ci2", err, st.GetSpec().GetUser())
	}
}

// TestAuthReloadNeedsAnAuthFileAtStart: a scheduler whose embedded NATS
// server was started open to anyone refuses an auth file while it runs
// (that would close it on every connection at once): restart it with one.
func TestAuthReloadNeedsAnAuthFileAtStart(t *testing.T) {
	srv := servertest.StartServer(t, treesYAML, func(c *server.Config) { c.HTTPAddr = "" })
	f := authDoc(t, newKey(t), nil, [][2]string{{"n1", newKey(t).Public()}})
	if _, err := srv.ReloadAuth(f); !errors.Is(err, server.ErrAuthReload) || !strings.Contains(err.Error(), "without an auth file") {
		t.Errorf("ReloadAuth on an open server: %v, want ErrAuthReload naming the missing auth file", err)
	}
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatalf("the open server no longer lets anyone in: %v", err)
	}
	nc.Close()
}

// connectAs connects with key alone (no reconnects).
func connectAs(url string, key *natsauth.Key) (*nats.Conn, error) {
	return nats.Connect(url, key.Option(), nats.NoReconnect())
}

// TestReloadedAuthChangesAKeysRole: a key the new auth file gives another
// role keeps none of its old one. A client's key becomes an agent's: its
// client connection can no longer submit (refused or cut off), and the
// key now runs that agent's node.
func TestReloadedAuthChangesAKeysRole(t *testing.T) {
	admin, key := newKey(t), newKey(t)
	srv := servertest.StartServer(t, treesYAML, func(c *server.Config) {
		c.HTTPAddr, c.Auth = "", authDoc(t, admin, [][2]string{{"ci", key.Public()}}, nil)
		c.Actors.HeartbeatPeriod = 50 * time.Millisecond
	})
	url := srv.URL()
	spec := &pb.OperationSpec{Pool: "light", Tasks: []*pb.TaskSpec{{
		Name: "main", JobCount: 1, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
		Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(time.Second)}}}}
	ci, _ := securedClient(t, url, key, "ci")
	if _, err := ci.Submit(context.Background(), spec); err != nil {
		t.Fatalf("the client could not submit before the reload: %v", err)
	}

	change, err := srv.ReloadAuth(authDoc(t, admin, nil, [][2]string{{"n3", key.Public()}}))
	if err != nil {
		t.Fatal(err)
	}
	wantAdded, wantRemoved := "agent n3 "+key.Public(), "client ci "+key.Public()
	if len(change.Added) != 1 || change.Added[0] != wantAdded || len(change.Removed) != 1 || change.Removed[0] != wantRemoved {
		t.Errorf("change %+v, want added [%s] and removed [%s]", change, wantAdded, wantRemoved)
	}
	if id, err := ci.Submit(context.Background(), spec); err == nil {
		t.Errorf("the key's client connection submitted %s after the key became an agent's", id)
	} else {
		t.Logf("the old client connection's submit: %v", err)
	}
	if _, err := connectAs(url, key); err != nil {
		t.Fatalf("the key cannot connect as an agent: %v", err)
	}
	a, _, _, _ := securedAgent(t, url, "n3", key)
	testutil.WaitFor(t, 10*time.Second, "n3's heartbeats answered", func() bool { return a.Stats().HeartbeatsOK >= 3 })
}
