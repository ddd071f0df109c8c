package orchid

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/testutil"
)

// TestLimitInFlightRefusesBeyondTheBound holds two requests inside a
// handler limited to two: a third is refused at once with 503 and a typed
// UNAVAILABLE body, and once one of the two returns, the next is served.
func TestLimitInFlightRefusesBeyondTheBound(t *testing.T) {
	o := New(nil, time.Second, slog.New(slog.DiscardHandler))
	release := make(chan struct{})
	var inside atomic.Int32
	h := o.limitInFlight(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		inside.Add(1)
		<-release
		w.WriteHeader(http.StatusOK)
	}), 2)
	srv := httptest.NewServer(h)
	defer srv.Close()
	var once sync.Once
	releaseAll := func() { once.Do(func() { close(release) }) }
	defer releaseAll() // before Close, which waits for held requests

	var wg sync.WaitGroup
	codes := make(chan int, 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(srv.URL)
			if err != nil {
				t.Errorf("held request: %v", err)
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	testutil.WaitFor(t, 5*time.Second, "two requests inside the handler", func() bool { return inside.Load() == 2 })

	// A handler that let the third request in would hold it: the
	// client's timeout turns that into a failure, not a hang.
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatalf("third request: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("third request: status %d, want 503 (body %s)", resp.StatusCode, body)
	}
	var eb ErrorBody
	if err := json.Unmarshal(body, &eb); err != nil || eb.Error.Code != "ERROR_CODE_UNAVAILABLE" {
		t.Fatalf("third request: body %s (%v), want code ERROR_CODE_UNAVAILABLE", body, err)
	}
	if inside.Load() != 2 {
		t.Fatalf("the refused request reached the handler (%d inside)", inside.Load())
	}

	release <- struct{}{} // one held request returns
	if c := <-codes; c != http.StatusOK {
		t.Fatalf("held request: status %d", c)
	}
	releaseAll() // the rest return at once
	resp, err = http.Get(srv.URL)
	if err != nil {
		t.Fatalf("request after release: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("request after release: status %d, want 200", resp.StatusCode)
	}
	wg.Wait()
}
