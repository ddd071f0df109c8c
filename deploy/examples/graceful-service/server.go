package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharetree/sharetree/deploy/examples/graceful-service/registry"
)

// maxWork bounds the work time of one request.
const maxWork = 10 * time.Minute

// service is one running instance.
type service struct {
	cfg      config
	log      *slog.Logger
	srv      *http.Server
	serveErr chan error

	inFlight  atomic.Int64
	completed atomic.Int64
	seq       atomic.Int64
	// running holds the work time of every /work request in flight, by
	// request number.
	mu      sync.Mutex
	running map[int64]time.Duration
}

// start listens, registers the address and serves in the background.
func start(cfg config, log *slog.Logger) (*service, error) {
	if err := registry.CheckID(cfg.id); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.registryDir, 0o755); err != nil {
		return nil, fmt.Errorf("registry directory: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := &service{cfg: cfg, log: log, serveErr: make(chan error, 1), running: map[int64]time.Duration{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /work", s.work)
	mux.HandleFunc("GET /stats", s.stats)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.serveErr <- err
		}
	}()
	addr := ln.Addr().String()
	if err := registry.Register(cfg.registryDir, cfg.id, addr); err != nil {
		_ = s.srv.Close()
		return nil, err
	}
	log.Info("serving", "addr", addr, "registry", registry.Path(cfg.registryDir, cfg.id))
	return s, nil
}

// work sleeps for ?ms (or the default) and answers "<id> <n>".
func (s *service) work(w http.ResponseWriter, r *http.Request) {
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	d := s.cfg.workDefault
	if v := r.URL.Query().Get("ms"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 0 || time.Duration(ms)*time.Millisecond > maxWork {
			http.Error(w, fmt.Sprintf("ms must be an integer in [0, %d]", maxWork.Milliseconds()), http.StatusBadRequest)
			return
		}
		d = time.Duration(ms) * time.Millisecond
	}
	n := s.seq.Add(1)
	s.mu.Lock()
	s.running[n] = d
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.running, n)
		s.mu.Unlock()
	}()
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-r.Context().Done():
		t.Stop()
		return // the client went away
	}
	s.completed.Add(1)
	fmt.Fprintf(w, "%s %d\n", s.cfg.id, n)
}

// Stats is what /stats reports.
type Stats struct {
	ID        string `json:"id"`
	InFlight  int64  `json:"in_flight"`
	Completed int64  `json:"completed"`
	// InFlightWorkMS lists the work time of each /work request in flight,
	// in milliseconds, ascending.
	InFlightWorkMS []int64 `json:"in_flight_work_ms"`
}

// stats reports the instance's counters.
func (s *service) stats(w http.ResponseWriter, _ *http.Request) {
	st := Stats{ID: s.cfg.id, InFlight: s.inFlight.Load(), Completed: s.completed.Load(), InFlightWorkMS: []int64{}}
	s.mu.Lock()
	for _, d := range s.running {
		st.InFlightWorkMS = append(st.InFlightWorkMS, d.Milliseconds())
	}
	s.mu.Unlock()
	slices.Sort(st.InFlightWorkMS)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(st)
}

// unregister removes the registry entry; it reports whether that worked.
func (s *service) unregister() bool {
	if err := registry.Unregister(s.cfg.registryDir, s.cfg.id); err != nil {
		s.log.Error("cannot unregister", "err", err)
		return false
	}
	return true
}

// drain unregisters, stops accepting and waits for the requests in flight.
// A second signal gives up at once.
func (s *service) drain(sig os.Signal, more <-chan os.Signal) int {
	inFlight, done := s.inFlight.Load(), s.completed.Load()
	s.log.Info("interrupted: unregistering and draining", "signal", sig.String(), "in_flight", inFlight)
	ok := s.unregister()
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.drainTimeout)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- s.srv.Shutdown(ctx) }()
	select {
	case err := <-shut:
		if err != nil {
			s.log.Error("drain failed", "err", err, "in_flight", s.inFlight.Load())
			_ = s.srv.Close()
			return exitDrainFail
		}
	case sig := <-more:
		s.log.Error("second signal: giving up the drain", "signal", sig.String(), "in_flight", s.inFlight.Load())
		_ = s.srv.Close()
		return exitDrainFail
	}
	s.log.Info("drained", "in_flight_at_signal", inFlight, "finished_after_signal", s.completed.Load()-done)
	if !ok {
		return exitDrainFail
	}
	return exitOK
}
