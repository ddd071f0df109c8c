package httpserve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// ShutdownTimeout is how long Close lets requests in flight end.
const ShutdownTimeout = 5 * time.Second

// Server is a running listener.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan error
}

// Listen binds addr and serves h on it until Close. The error of a bad
// or busy address is net.Listen's.
func Listen(addr string, h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, done: make(chan error, 1), srv: &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
	}}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address listened on (with the port picked for port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops accepting and waits, up to ShutdownTimeout, for the
// requests in flight.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
