package server

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharetree/sharetree/internal/cfgerr"
	"github.com/sharetree/sharetree/internal/dashboard"
	"github.com/sharetree/sharetree/internal/httpserve"
	"github.com/sharetree/sharetree/internal/orchid"
)

// DefaultHTTPAddr is the HTTP listener of `sharetree server` unless
// --http-addr says otherwise: loopback only.
const DefaultHTTPAddr = "127.0.0.1:4280"

// CheckHTTPAddr validates an HTTP listener address (Config.HTTPAddr; ""
// disables the listener).
func CheckHTTPAddr(addr string) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return cfgerr.New(ErrConfig, "HTTPAddr", "%q: %v", addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return cfgerr.New(ErrConfig, "HTTPAddr", "%q: port %q is not a port number", addr, port)
	}
	return nil
}

// httpServer serves the orchid, the health and the metrics. It listens
// from the start of Start, while the server may still stand by for the
// leader lease: until it leads (lead), /healthz answers 503 with the role
// "standby" and /metrics the process's own metrics.
type httpServer struct {
	*httpserve.Server
	handler atomic.Pointer[http.Handler]
}

// listenHTTP listens on addr and serves the standby's handler (see
// httpServer).
func listenHTTP(addr, name string) (*httpServer, error) {
	standby, err := metricsMux(func() Health { return Health{Name: name, Role: roleStandby} })
	if err != nil {
		return nil, err
	}
	h := &httpServer{}
	h.setHandler(standby)
	if h.Server, err = httpserve.Listen(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.handler.Load()).ServeHTTP(w, r) })); err != nil {
		return nil, fmt.Errorf("http listener: %w", err)
	}
	return h, nil
}

func (h *httpServer) setHandler(m http.Handler) { h.handler.Store(&m) }

// metricsMux serves /healthz (see Health) and /metrics: the Go runtime's,
// the process's and extra. (A scrape asks every tree actor for its
// counts: more than a few at once are refused with 503 instead of
// queueing on the tree actors; see httpserve.Metrics.)
func metricsMux(health func() Health, extra ...prometheus.Collector) (*http.ServeMux, error) {
	metrics, err := httpserve.Metrics(extra...)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", healthHandler(health))
	mux.Handle("GET /metrics", metrics)
	return mux, nil
}

// lead serves the leader's handler: /orchid/, /dashboard/ (and / leads
// there), /healthz and /metrics (the orchid's too, and extra).
func (h *httpServer) lead(o *orchid.Orchid, d *dashboard.Dashboard, health func() Health, extra ...prometheus.Collector) error {
	mux, err := metricsMux(health, append([]prometheus.Collector{orchid.NewCollector(o)}, extra...)...)
	if err != nil {
		return err
	}
	mux.Handle("/orchid/", o.Handler())
	mux.Handle("/dashboard/", d.Handler())
	mux.Handle("GET /{$}", http.RedirectHandler("/dashboard/", http.StatusFound))
	h.setHandler(mux)
	return nil
}
