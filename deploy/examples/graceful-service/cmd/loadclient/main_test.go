package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sharetree/sharetree/deploy/examples/graceful-service/registry"
)

func TestCountsRequests(t *testing.T) {
	dir := t.TempDir()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	if err := registry.Register(dir, "a", srv.Listener.Addr().String()); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if code := run([]string{"--registry-dir", dir, "--requests", "10", "--ms", "0"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errs.String())
	}
	if !strings.Contains(out.String(), "completed=10 failed=0") || !strings.Contains(out.String(), "instance a completed=10") {
		t.Errorf("output %q", out.String())
	}
	if code := run([]string{}, &out, &errs); code != 2 {
		t.Errorf("no registry: exit %d", code)
	}
}
