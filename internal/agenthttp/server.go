package agenthttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sharetree/sharetree/nodeagent"
)

// ErrListen is wrapped when the address cannot be listened on.
var ErrListen = errors.New("agenthttp: cannot listen")

// maxScrapesInFlight bounds concurrent /metrics requests; more are
// answered 503 at once.
const maxScrapesInFlight = 4

// Source is what the listener reads: the agent's node id, its counters
// and whether its NATS connection is up.
type Source struct {
	Node      string
	Stats     func() nodeagent.Stats
	Connected func() bool
}

// Health is /healthz's body.
type Health struct {
	Node    string `json:"node"`
	Healthy bool   `json:"healthy"`
	// Connected: the agent's NATS connection is up.
	Connected bool `json:"connected"`
	// ConsecutiveFailedHeartbeats since the last answered one.
	ConsecutiveFailedHeartbeats uint64 `json:"consecutive_failed_heartbeats"`
	LeaderEpoch                 uint64 `json:"leader_epoch"`
	RunningJobs                 int    `json:"running_jobs"`
	// Reasons says why it is unhealthy (empty when healthy).
	Reasons []string `json:"reasons"`
}

// Server is a running listener.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan error
}

// Listen binds cfg.Addr (a bad or busy address fails here, at start) and
// serves src's metrics and health on it until Close.
func Listen(cfg Config, src Source) (*Server, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		newCollector(src.Node, src.Stats, src.Connected),
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("agenthttp: metrics: %w", err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{MaxRequestsInFlight: maxScrapesInFlight}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		h := health(cfg, src)
		w.Header().Set("Content-Type", "application/json")
		if !h.Healthy {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(h)
	})
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("%w on %q: %w", ErrListen, cfg.Addr, err)
	}
	s := &Server{ln: ln, done: make(chan error, 1), srv: &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
	}}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// health judges the agent from one snapshot.
func health(cfg Config, src Source) Health {
	s, connected := src.Stats(), src.Connected()
	h := Health{Node: src.Node, Connected: connected, ConsecutiveFailedHeartbeats: s.ConsecutiveFailures,
		LeaderEpoch: s.LeaderEpoch, RunningJobs: s.RunningJobs, Reasons: []string{}}
	if !connected {
		h.Reasons = append(h.Reasons, "not connected to NATS")
	}
	if s.ConsecutiveFailures >= uint64(cfg.UnhealthyAfter) {
		h.Reasons = append(h.Reasons, fmt.Sprintf("the last %d heartbeats failed (unhealthy after %d)", s.ConsecutiveFailures, cfg.UnhealthyAfter))
	}
	h.Healthy = len(h.Reasons) == 0
	return h
}

// Addr is the address listened on (with the port picked for port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the listener, letting requests in progress end for up to
// 5 s.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
