package testutil

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// NATSCluster is a NATS cluster of real servers with JetStream, each on a
// random loopback port with its store in a temporary directory.
type NATSCluster struct {
	Servers []*server.Server
}

// StartNATSCluster starts n clustered servers and waits until JetStream has
// a meta leader; they are stopped when the test ends.
func StartNATSCluster(t testing.TB, n int) *NATSCluster {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		ports[i] = freeTCPPort(t)
	}
	var routes []*url.URL
	for _, p := range ports {
		routes = append(routes, &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", p)})
	}
	c := &NATSCluster{}
	for i := range n {
		opts := &server.Options{
			ServerName: fmt.Sprintf("n%d", i), Host: "127.0.0.1", Port: -1, NoSigs: true, NoLog: true,
			JetStream: true, StoreDir: t.TempDir(), JetStreamMaxMemory: 64 << 20, JetStreamMaxStore: 8 << 30,
			Cluster: server.ClusterOpts{Name: "sharetree-test", Host: "127.0.0.1", Port: ports[i]},
			Routes:  routes,
		}
		s, err := server.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatalf("cluster server %d did not start", i)
		}
		c.Servers = append(c.Servers, s)
	}
	// Streams of n replicas can be placed once the meta leader knows
	// every server online with JetStream.
	WaitFor(t, 30*time.Second, "the JetStream meta leader to know every server", func() bool {
		for _, s := range c.Servers {
			if s.JetStreamIsLeader() && len(s.JetStreamClusterPeers()) == n {
				return true
			}
		}
		return false
	})
	return c
}

// URL lists every running server's client URL, for a connection that
// fails over from one to the next.
func (c *NATSCluster) URL() string {
	var urls []string
	for _, s := range c.Servers {
		if s.Running() {
			urls = append(urls, s.ClientURL())
		}
	}
	return strings.Join(urls, ",")
}

func freeTCPPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
