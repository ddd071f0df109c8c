package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sharetree/sharetree/internal/cfgerr"
	"github.com/sharetree/sharetree/internal/dashboard"
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

// maxScrapesInFlight bounds the /metrics requests answered at once.
const maxScrapesInFlight = 4

// httpServer serves the orchid, the health and the metrics. It listens
// from the start of Start, while the server may still stand by for the
// leader lease: until it leads (lead), /healthz answers 503 with the role
// "standby" and /metrics the process's own metrics.
type httpServer struct {
	srv     *http.Server
	ln      net.Listener
	done    chan error
	handler atomic.Pointer[http.Handler]
}

// listenHTTP listens on addr and serves the standby's handler (see
// httpServer).
func listenHTTP(addr, name string) (*httpServer, error) {
	standby, err := metricsMux(func() Health { return Health{Name: name, Role: roleStandby} })
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("http listener: %w", err)
	}
	h := &httpServer{ln: ln, done: make(chan error, 1)}
	h.setHandler(standby)
	h.srv = &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.handler.Load()).ServeHTTP(w, r) }),
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
	}
	go func() { h.done <- h.srv.Serve(ln) }()
	return h, nil
}

func (h *httpServer) setHandler(m http.Handler) { h.handler.Store(&m) }

// metricsMux serves /healthz (see Health) and /metrics: the Go runtime's,
// the process's and extra.
func metricsMux(health func() Health, extra ...prometheus.Collector) (*http.ServeMux, error) {
	reg := prometheus.NewRegistry()
	for _, c := range append([]prometheus.Collector{
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	}, extra...) {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", healthHandler(health))
	// A scrape asks every tree actor for its counts: more than a few at
	// once are refused with 503 (promhttp's own bound) instead of queueing
	// on the tree actors.
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{MaxRequestsInFlight: maxScrapesInFlight}))
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

// addr is the bound address.
func (h *httpServer) addr() string { return h.ln.Addr().String() }

// close stops accepting and waits (bounded) for requests in flight.
func (h *httpServer) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := h.srv.Shutdown(ctx)
	if serr := <-h.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
