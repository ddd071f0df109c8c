package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
)

// TestTLSIsRequiredWhenConfigured: a scheduler whose embedded NATS server
// has a certificate refuses plain connections; a client and an agent that
// trust the certificate's authority run an operation over TLS.
func TestTLSIsRequiredWhenConfigured(t *testing.T) {
	cert, key := testutil.SelfSignedCert(t)
	srv := startTLS(t, cert, key)

	if nc, err := nats.Connect(srv.URL()); err == nil {
		nc.Close()
		t.Fatal("a plain connection was accepted by a server that requires TLS")
	}
	if nc, err := nats.Connect(srv.URL(), nats.Secure()); err == nil {
		nc.Close()
		t.Fatal("a TLS connection that does not trust the certificate was accepted")
	}

	tlsConn := func() *nats.Conn {
		nc, err := nats.Connect(srv.URL(), nats.RootCAs(cert))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		if !nc.TLSRequired() {
			t.Fatal("the connection does not use TLS")
		}
		return nc
	}
	acfg := nodeagent.DefaultConfig("n1", scheduler.Resources{scheduler.CPU: 2, scheduler.UserSlots: 2})
	acfg.HeartbeatPeriod, acfg.WorkDir = 50*time.Millisecond, t.TempDir()
	agent, err := nodeagent.New(acfg, tlsConn())
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = agent.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })

	cl := client.New(tlsConn(), 5*time.Second)
	id, err := cl.Submit(context.Background(), simulated("light", 2, 1, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 20*time.Second, "the operation to complete over TLS", func() bool {
		st, err := cl.Get(context.Background(), id)
		return err == nil && st.GetState() == pb.OperationState_OPERATION_STATE_COMPLETED
	})
}

// startTLS starts a scheduler whose embedded NATS server presents cert.
func startTLS(t *testing.T, cert, key string) *server.Server {
	t.Helper()
	return servertest.StartServer(t, treesYAML, func(c *server.Config) {
		c.HTTPAddr, c.TLSCert, c.TLSKey = "", cert, key
		c.Actors.HeartbeatPeriod = 50 * time.Millisecond
	})
}
