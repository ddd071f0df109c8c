package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sharetree/sharetree/deploy/examples/graceful-service/registry"
)

// serve starts an in-process instance registered as id.
func serve(t *testing.T, dir, id string, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	if h == nil {
		h = func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, id) }
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	if err := registry.Register(dir, id, srv.Listener.Addr().String()); err != nil {
		t.Fatal(err)
	}
	return srv
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// drop answers nothing: it closes the connection under the request.
func drop(before func()) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if before != nil {
			before()
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}
}

func TestRoundRobin(t *testing.T) {
	dir := t.TempDir()
	serve(t, dir, "a", nil)
	serve(t, dir, "b", nil)
	c := New(dir, Options{})
	var got []string
	for range 4 {
		r, err := c.Get(context.Background(), "/")
		if err != nil {
			t.Fatal(err)
		}
		if string(r.Body) != r.Instance {
			t.Fatalf("body %q from instance %s", r.Body, r.Instance)
		}
		got = append(got, r.Instance)
	}
	if fmt.Sprint(got) != "[a b a b]" {
		t.Errorf("instances %v, want alternating", got)
	}
	if s := c.Stats(); s.Completed != 4 || s.PerInstance["a"] != 2 || s.PerInstance["b"] != 2 || s.Failed != 0 {
		t.Errorf("stats %+v", s)
	}
}

func TestRetriesRefusedConnections(t *testing.T) {
	dir := t.TempDir()
	if err := registry.Register(dir, "a", closedAddr(t)); err != nil {
		t.Fatal(err)
	}
	serve(t, dir, "b", nil)
	c := New(dir, Options{})
	for range 4 {
		if r, err := c.Get(context.Background(), "/"); err != nil || r.Instance != "b" {
			t.Fatalf("Get = %v, %v", r.Instance, err)
		}
	}
	if s := c.Stats(); s.Completed != 4 || s.Failed != 0 || s.Retried == 0 {
		t.Errorf("stats %+v", s)
	}
}

// An instance that unregistered before dropping the request never accepted
// it: the request goes to another instance.
func TestRetriesWhenTheEntryIsGone(t *testing.T) {
	dir := t.TempDir()
	serve(t, dir, "a", drop(func() { _ = registry.Unregister(dir, "a") }))
	serve(t, dir, "b", nil)
	c := New(dir, Options{})
	r, err := c.Get(context.Background(), "/")
	if err != nil || r.Instance != "b" {
		t.Fatalf("Get = %v, %v", r.Instance, err)
	}
	if s := c.Stats(); s.Retried != 1 || s.Failed != 0 {
		t.Errorf("stats %+v", s)
	}
}

// A registered instance that drops a request may have done the work: it
// fails and is not retried.
func TestDoesNotRetryAcceptedRequests(t *testing.T) {
	dir := t.TempDir()
	serve(t, dir, "a", drop(nil))
	serve(t, dir, "b", nil)
	c := New(dir, Options{})
	if _, err := c.Get(context.Background(), "/"); !errors.Is(err, ErrFailed) {
		t.Fatalf("Get: %v, want ErrFailed", err)
	}
	serve(t, dir, "c", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "busy", http.StatusServiceUnavailable) })
	c2 := New(dir, Options{})
	c2.next.Store(2) // next pick is "c"
	if _, err := c2.Get(context.Background(), "/"); !errors.Is(err, ErrFailed) {
		t.Fatalf("Get on a 503: %v, want ErrFailed", err)
	}
	if s := c.Stats(); s.Failed != 1 || s.Retried != 0 {
		t.Errorf("stats %+v", s)
	}
}

func TestEmptyRegistryAndCancel(t *testing.T) {
	dir := t.TempDir()
	c := New(dir, Options{NoInstanceWait: 20 * time.Millisecond, PollInterval: time.Millisecond})
	if _, err := c.Get(context.Background(), "/"); !errors.Is(err, ErrNoInstances) {
		t.Fatalf("Get on an empty registry: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	slow := New(dir, Options{NoInstanceWait: time.Hour})
	if _, err := slow.Get(ctx, "/"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get with a canceled context: %v", err)
	}
	if s := slow.Stats(); s.Canceled != 1 || s.Failed != 0 {
		t.Errorf("stats %+v", s)
	}
	if err := registry.Register(dir, "a", closedAddr(t)); err != nil {
		t.Fatal(err)
	}
	few := New(dir, Options{MaxAttempts: 3})
	if _, err := few.Get(context.Background(), "/"); !errors.Is(err, ErrAttempts) {
		t.Fatalf("Get with only a dead instance: %v", err)
	}
}
