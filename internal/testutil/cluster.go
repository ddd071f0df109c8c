package testutil

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// NATSCluster is a NATS cluster of real servers with JetStream, each on a
// random loopback port with its store in a temporary directory.
type NATSCluster struct {
	Servers []*server.Server
	t       testing.TB
	opts    []*server.Options // each server's, to start it again (Restart)
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
	c := &NATSCluster{t: t}
	for i := range n {
		// Client ports are fixed too, so that a restarted server serves
		// where its clients reconnect.
		c.opts = append(c.opts, &server.Options{
			ServerName: fmt.Sprintf("n%d", i), Host: "127.0.0.1", Port: freeTCPPort(t), NoSigs: true, NoLog: true,
			JetStream: true, StoreDir: t.TempDir(), JetStreamMaxMemory: 64 << 20, JetStreamMaxStore: 8 << 30,
			Cluster: server.ClusterOpts{Name: "sharetree-test", Host: "127.0.0.1", Port: ports[i]},
			Routes:  routes,
		})
		c.Servers = append(c.Servers, c.start(i))
	}
	t.Cleanup(func() {
		for _, s := range c.Servers {
			s.Shutdown()
			s.WaitForShutdown()
		}
	})
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

// start starts server i from its options and waits until it accepts
// connections. A server whose client port another process took since it
// was picked (the ports are picked free, then bound by the server) starts
// again on a new one; any other failure fails the test with the server's
// last log lines.
func (c *NATSCluster) start(i int) *server.Server {
	c.t.Helper()
	for try := 1; ; try++ {
		s, err := server.NewServer(c.opts[i].Clone())
		if err != nil {
			c.t.Fatal(err)
		}
		log := &tailLog{}
		s.SetLoggerV2(log, false, false, false)
		go s.Start()
		// (Generous: two test binaries under the race detector share
		// the machine's cores in CI.)
		if s.ReadyForConnections(30 * time.Second) {
			return s
		}
		s.Shutdown()
		lines := log.String()
		if try < 3 && strings.Contains(lines, fmt.Sprintf(":%d", c.opts[i].Port)) && strings.Contains(lines, "address already in use") {
			c.opts[i].Port = freeTCPPort(c.t)
			continue
		}
		c.t.Fatalf("cluster server %d did not start; its log:\n%s", i, lines)
	}
}

// tailLog keeps a NATS server's last log lines.
type tailLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *tailLog) add(level, format string, v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, level+" "+fmt.Sprintf(format, v...))
	if len(l.lines) > 40 {
		l.lines = l.lines[len(l.lines)-40:]
	}
}

func (l *tailLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func (l *tailLog) Noticef(format string, v ...any) { l.add("[INF]", format, v...) }
func (l *tailLog) Warnf(format string, v ...any)   { l.add("[WRN]", format, v...) }
func (l *tailLog) Fatalf(format string, v ...any)  { l.add("[FTL]", format, v...) }
func (l *tailLog) Errorf(format string, v ...any)  { l.add("[ERR]", format, v...) }
func (l *tailLog) Debugf(format string, v ...any)  { l.add("[DBG]", format, v...) }
func (l *tailLog) Tracef(format string, v ...any)  { l.add("[TRC]", format, v...) }

// Restart shuts server i down and starts it again on the same ports and
// store, as a NATS server restarted by its supervisor; it returns once the
// new server accepts connections (its streams catch up afterwards).
func (c *NATSCluster) Restart(i int) {
	c.t.Helper()
	c.Servers[i].Shutdown()
	c.Servers[i].WaitForShutdown()
	c.Servers[i] = c.start(i)
}

// URLs lists every server's client URL, running or not: a connection
// given them all fails over to whichever runs.
func (c *NATSCluster) URLs() string {
	var urls []string
	for _, o := range c.opts {
		urls = append(urls, fmt.Sprintf("nats://%s:%d", o.Host, o.Port))
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
