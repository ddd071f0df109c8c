package agenthttp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/sharetree/sharetree/internal/httpserve"
	"github.com/sharetree/sharetree/nodeagent"
)

// ErrListen is wrapped when the address cannot be listened on.
var ErrListen = errors.New("agenthttp: cannot listen")

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
type Server struct{ *httpserve.Server }

// Listen binds cfg.Addr (a bad or busy address fails here, at start) and
// serves src's metrics and health on it until Close.
func Listen(cfg Config, src Source) (*Server, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	metrics, err := httpserve.Metrics(newCollector(src.Node, src.Stats, src.Connected))
	if err != nil {
		return nil, fmt.Errorf("agenthttp: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		h := health(cfg, src)
		w.Header().Set("Content-Type", "application/json")
		if !h.Healthy {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(h)
	})
	s, err := httpserve.Listen(cfg.Addr, mux)
	if err != nil {
		return nil, fmt.Errorf("%w on %q: %w", ErrListen, cfg.Addr, err)
	}
	return &Server{s}, nil
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
