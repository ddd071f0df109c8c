package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/natsauth"
	"github.com/sharetree/sharetree/internal/orchid"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	"github.com/sharetree/sharetree/internal/treeconf"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// asyncErrors collects a connection's asynchronous errors (permission
// violations among them).
type asyncErrors struct {
	mu   sync.Mutex
	errs []string
}

func (a *asyncErrors) handler() nats.Option {
	return nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.errs = append(a.errs, err.Error())
	})
}

// expect waits for an error that contains want.
func (a *asyncErrors) expect(t *testing.T, want string) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, "the error "+want, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, e := range a.errs {
			if strings.Contains(e, want) {
				return true
			}
		}
		return false
	})
}

func newKey(t *testing.T) *natsauth.Key {
	t.Helper()
	k, err := natsauth.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestAgentsAndClientsAreConfinedToTheirSubjects (reliability test 15):
// the embedded NATS server of a scheduler started with an auth file lets
// only its users in, each within its role. An agent runs its node's jobs
// and cannot speak for another node, read another node's signals or
// replies, or submit operations; a client submits and reads but cannot
// change the configuration or heartbeat; an admin can change it.
func TestAgentsAndClientsAreConfinedToTheirSubjects(t *testing.T) {
	admin, cli, n1, n2 := newKey(t), newKey(t), newKey(t), newKey(t)
	auth, err := natsauth.Parse("auth.yaml", []byte(fmt.Sprintf(`version: 1
admins: [{name: ops, nkey: %s}]
clients: [{name: ci, nkey: %s}]
agents:
  - {node: n1, nkey: %s}
  - {node: n2, nkey: %s}
`, admin.Public(), cli.Public(), n1.Public(), n2.Public())))
	if err != nil {
		t.Fatal(err)
	}
	srv := servertest.StartServer(t, treesYAML, func(c *server.Config) {
		c.HTTPAddr, c.Auth = "", auth
		c.Actors.HeartbeatPeriod = 50 * time.Millisecond
	})
	url := srv.URL()
	connect := func(errs *asyncErrors, opts ...nats.Option) *nats.Conn {
		t.Helper()
		if errs != nil {
			opts = append(opts, errs.handler())
		}
		nc, err := nats.Connect(url, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}

	// No credentials, or a key the file does not list: refused.
	if nc, err := nats.Connect(url); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		if nc != nil {
			nc.Close()
		}
		t.Fatalf("connect without credentials: %v, want an authorization violation", err)
	}
	if nc, err := nats.Connect(url, newKey(t).Option()); err == nil {
		nc.Close()
		t.Fatal("connected with a key the auth file does not list")
	}

	// The agent of n1 runs the jobs of an operation the client submits.
	agentOpts, err := natsauth.AgentOptions("n1", n1)
	if err != nil {
		t.Fatal(err)
	}
	var agentErrs asyncErrors
	agentConn := connect(&agentErrs, agentOpts...)
	acfg := nodeagent.DefaultConfig("n1", scheduler.Resources{scheduler.CPU: 2, scheduler.UserSlots: 2})
	acfg.HeartbeatPeriod, acfg.WorkDir = 50*time.Millisecond, t.TempDir()
	agent, err := nodeagent.New(acfg, agentConn)
	if err != nil {
		t.Fatal(err)
	}
	actx, stopAgent := context.WithCancel(context.Background())
	var agentDone sync.WaitGroup
	agentDone.Go(func() { _ = agent.Run(actx) })
	t.Cleanup(func() { stopAgent(); agentDone.Wait() })

	clientOpts, err := natsauth.ClientOptions(cli)
	if err != nil {
		t.Fatal(err)
	}
	var clientErrs asyncErrors
	clientConn := connect(&clientErrs, clientOpts...)
	cl, err := client.New(clientConn, 5*time.Second).WithUser("ci") // a client submits as itself
	if err != nil {
		t.Fatal(err)
	}
	id, err := cl.Submit(context.Background(), simulated("light", 2, 1, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, "the operation to complete on n1", func() bool {
		st, err := cl.Get(context.Background(), id)
		return err == nil && st.GetState() == pb.OperationState_OPERATION_STATE_COMPLETED
	})
	if _, err := cl.List(context.Background(), &pb.ListOperationsRequest{}); err != nil {
		t.Errorf("the client's listing: %v", err)
	}
	if _, err := orchid.NewClient(cl).Get(context.Background(), subjects.OrchidPath{Kind: subjects.OrchidTrees}); err != nil {
		t.Errorf("the client's orchid read: %v", err)
	}
	// It reads the events stream as `sharetree events` does.
	js, err := jetstream.New(clientConn)
	if err != nil {
		t.Fatal(err)
	}
	ectx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	filter, _ := subjects.EventsFilter("", subjects.EventOperation)
	cons, err := js.OrderedConsumer(ectx, subjects.EventsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
	if err != nil {
		t.Fatalf("the client's events consumer: %v", err)
	}
	if _, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second)); err != nil {
		t.Errorf("the client's first event: %v", err)
	}
	// And with a durable consumer, acknowledging each event (`events
	// --durable`).
	durable, err := js.CreateOrUpdateConsumer(ectx, subjects.EventsStream, jetstream.ConsumerConfig{
		Durable: "ci", FilterSubjects: []string{filter}, AckPolicy: jetstream.AckExplicitPolicy,
	})
	if err != nil {
		t.Fatalf("the client's durable consumer: %v", err)
	}
	if msg, err := durable.Next(jetstream.FetchMaxWait(5 * time.Second)); err != nil {
		t.Errorf("the client's first event through its durable consumer: %v", err)
	} else if err := msg.DoubleAck(ectx); err != nil {
		t.Errorf("the client's acknowledgement: %v", err)
	}
	conf := treeconf.NewClient(clientConn, 5*time.Second)
	if _, err := conf.GetPool(context.Background(), "physical", "light"); err != nil {
		t.Errorf("the client's configuration read: %v", err)
	}

	// An admin sees every heartbeat subject. n1 sends a heartbeat on n2's
	// subject, then one on its own: the admin gets only the second.
	adminConn := connect(nil, admin.Option())
	seen, err := adminConn.SubscribeSync(subjects.NodeHeartbeatAll())
	if err != nil {
		t.Fatal(err)
	}
	if err := adminConn.Flush(); err != nil {
		t.Fatal(err)
	}
	hb2, _ := subjects.NodeHeartbeat("n2")
	hb1, _ := subjects.NodeHeartbeat("n1")
	if err := agentConn.Publish(hb2, []byte("as n2")); err != nil {
		t.Fatal(err)
	}
	if err := agentConn.Publish(hb1, []byte("marker")); err != nil {
		t.Fatal(err)
	}
	agentErrs.expect(t, `Permissions Violation for Publish to "`+hb2+`"`)
	for {
		m, err := seen.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("the admin did not see n1's own heartbeat: %v", err)
		}
		if m.Subject == hb2 {
			t.Fatalf("n1's heartbeat on n2's subject reached the admin: %q", m.Data)
		}
		if string(m.Data) == "marker" {
			break // (n1's real heartbeats come through too)
		}
	}

	// n1 cannot read n2's signals or replies, nor submit.
	sig2, _ := subjects.NodeSignal("n2")
	inbox2, _ := subjects.AgentInbox("n2")
	for _, subj := range []string{sig2, inbox2 + ".>"} {
		if _, err := agentConn.SubscribeSync(subj); err != nil {
			t.Fatal(err)
		}
		agentErrs.expect(t, `Permissions Violation for Subscription to "`+subj+`"`)
	}
	if _, err := client.New(agentConn, 500*time.Millisecond).Submit(context.Background(), simulated("light", 1, 1, time.Second)); err == nil {
		t.Error("an agent submitted an operation")
	}
	agentErrs.expect(t, `Permissions Violation for Publish to "`+subjects.OpSubmit()+`"`)

	// The client cannot change the configuration or heartbeat; the admin
	// can change the configuration.
	set := &pb.SetPoolRequest{Tree: "physical", Pool: "light", Key: "weight", Value: "2"}
	if _, err := treeconf.NewClient(clientConn, 500*time.Millisecond).SetPool(context.Background(), set); err == nil {
		t.Error("a client changed the configuration")
	}
	setSubject, _ := subjects.ConfigPool("physical", "light", subjects.PoolSet)
	clientErrs.expect(t, `Permissions Violation for Publish to "`+setSubject+`"`)
	if err := clientConn.Publish(hb1, []byte("as n1")); err != nil {
		t.Fatal(err)
	}
	clientErrs.expect(t, `Permissions Violation for Publish to "`+hb1+`"`)
	if _, err := treeconf.NewClient(adminConn, 5*time.Second).SetPool(context.Background(), set); err != nil {
		t.Errorf("the admin's configuration change: %v", err)
	}
}

// securedClient connects to a secured server at url with a client's key,
// and sends as user (on the user's own subjects) unless user is empty;
// the connection's asynchronous errors (permission violations) are
// recorded.
func securedClient(t *testing.T, url string, key *natsauth.Key, user string) (*client.Client, *asyncErrors) {
	t.Helper()
	opts, err := natsauth.ClientOptions(key)
	if err != nil {
		t.Fatal(err)
	}
	var errs asyncErrors
	nc, err := nats.Connect(url, append(opts, errs.handler())...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	c := client.New(nc, time.Second)
	if user != "" {
		if c, err = c.WithUser(user); err != nil {
			t.Fatal(err)
		}
	}
	return c, &errs
}

// TestSubmitACLTakesTheUserFromNATS: a pool's submit_acl admits users by
// the identity NATS vouches for. On a secured server each client submits
// on its own user's subject only (the spec's user is overridden by it);
// alice may submit into research, bob may not; bob can neither submit on
// alice's subject nor on the anonymous one, where a spec could name
// anyone; an admin, trusted, submits as the spec says.
func TestSubmitACLTakesTheUserFromNATS(t *testing.T) {
	admin, alice, bob := newKey(t), newKey(t), newKey(t)
	auth, err := natsauth.Parse("auth.yaml", []byte(fmt.Sprintf("version: 1\nadmins: [{name: ops, nkey: %s}]\nclients:\n  - {name: alice, nkey: %s}\n  - {name: bob, nkey: %s}\n",
		admin.Public(), alice.Public(), bob.Public())))
	if err != nil {
		t.Fatal(err)
	}
	srv := servertest.StartServer(t, `
version: 1
trees:
  - name: physical
    pools:
      - {name: research, submit_acl: [alice]}
      - {name: open}
`, func(c *server.Config) { c.HTTPAddr, c.Auth = "", auth })
	as := func(key *natsauth.Key, user string) (*client.Client, *asyncErrors) {
		t.Helper()
		return securedClient(t, srv.URL(), key, user)
	}
	spec := func(pool, claimed string) *pb.OperationSpec {
		s := simulated(pool, 1, 1, time.Hour)
		s.User = claimed
		return s
	}
	ctx := context.Background()

	aliceC, _ := as(alice, "alice")
	id, err := aliceC.Submit(ctx, spec("research", "bob"))
	if err != nil {
		t.Fatalf("alice into research: %v", err)
	}
	if st, err := aliceC.Get(ctx, id); err != nil || st.GetSpec().GetUser() != "alice" {
		t.Errorf("the operation's user: %q (%v), want alice from the subject, not the spec's bob", st.GetSpec().GetUser(), err)
	}

	bobC, _ := as(bob, "bob")
	_, err = bobC.Submit(ctx, spec("research", "alice"))
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Err.GetCode() != pb.ErrorCode_ERROR_CODE_PERMISSION_DENIED || !strings.Contains(ae.Err.GetMessage(), `user "bob" may not submit into pool "research"`) {
		t.Fatalf("bob into research: %v, want PERMISSION_DENIED", err)
	}
	if _, err := bobC.Submit(ctx, spec("open", "")); err != nil {
		t.Errorf("bob into open: %v", err)
	}

	// bob on alice's subject, and on the anonymous one: NATS refuses.
	for name, c := range map[string]func() (*client.Client, *asyncErrors){
		"alice's subject":       func() (*client.Client, *asyncErrors) { return as(bob, "alice") },
		"the anonymous subject": func() (*client.Client, *asyncErrors) { return as(bob, "") },
	} {
		cl, errs := c()
		sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := cl.Submit(sctx, spec("research", "alice"))
		cancel()
		if err == nil {
			t.Errorf("bob submitted on %s", name)
		}
		errs.expect(t, "Permissions Violation for Publish")
	}

	// An admin may submit on the anonymous subject, as the spec says.
	adminConn, err := nats.Connect(srv.URL(), admin.Option())
	if err != nil {
		t.Fatal(err)
	}
	defer adminConn.Close()
	if _, err := client.New(adminConn, 5*time.Second).Submit(ctx, spec("research", "alice")); err != nil {
		t.Errorf("the admin submitting for alice: %v", err)
	}
	if _, err := client.New(adminConn, 5*time.Second).Submit(ctx, spec("research", "bob")); err == nil {
		t.Error("the admin submitted for bob into research")
	}
}

// A submit_acl created live applies to the next submission.
func TestSubmitACLAppliesLive(t *testing.T) {
	_, nc := servertest.Start(t, treesYAML, func(c *server.Config) { c.HTTPAddr = "" })
	ctx := context.Background()
	conf := treeconf.NewClient(nc, 5*time.Second)
	if _, err := conf.CreatePool(ctx, "physical", "guarded", `{submit_acl: [alice]}`); err != nil {
		t.Fatal(err)
	}
	cl := client.New(nc, 5*time.Second)
	spec := func(user string) *pb.OperationSpec {
		s := simulated("guarded", 1, 1, time.Hour)
		s.User = user
		return s
	}
	var ae *client.APIError
	testutil.WaitFor(t, 10*time.Second, "the new pool's list to refuse bob", func() bool {
		_, err := cl.Submit(ctx, spec("bob"))
		return errors.As(err, &ae) && ae.Err.GetCode() == pb.ErrorCode_ERROR_CODE_PERMISSION_DENIED
	})
	if _, err := cl.Submit(ctx, spec("alice")); err != nil {
		t.Errorf("alice into guarded: %v", err)
	}
}
