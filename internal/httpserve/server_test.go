package httpserve

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// A listener serves its handler until Close; a busy address fails at
// Listen; the metrics handler has the runtime's metrics and the extra
// ones, and refuses a collector registered twice.
func TestListenServeClose(t *testing.T) {
	extra := prometheus.NewCounter(prometheus.CounterOpts{Name: "httpserve_test_total", Help: "A test counter."})
	metrics, err := Metrics(extra)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Listen("127.0.0.1:0", metrics)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"go_goroutines ", "httpserve_test_total 0"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics (%d) lacks %q", resp.StatusCode, want)
		}
	}
	if _, err := Listen(s.Addr(), metrics); err == nil {
		t.Errorf("a second listener on the busy %s started", s.Addr())
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := http.Get("http://" + s.Addr() + "/metrics"); err == nil {
		t.Error("the closed listener still answers")
	}
	if _, err := Metrics(extra, extra); err == nil {
		t.Error("a collector registered twice was taken")
	}
}
