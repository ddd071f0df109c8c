package actors

import (
	"sync"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/testutil"
)

// TestWorkerPoolRunsEverything: every scheduled function runs, also while
// every worker is busy, and idle workers exit.
func TestWorkerPoolRunsEverything(t *testing.T) {
	p := newWorkerPool(10, 2, 10*time.Millisecond)
	release := make(chan struct{})
	var wg sync.WaitGroup
	// Three blocking functions: two on workers, the third on a goroutine
	// of its own (the pool is full); none waits for another.
	for range 3 {
		wg.Add(1)
		p.Schedule(func() { <-release; wg.Done() })
	}
	if n := p.workers.Load(); n > 2 {
		t.Errorf("%d workers, want at most 2", n)
	}
	close(release)
	wg.Wait()
	// Many short functions from many goroutines.
	var ran sync.WaitGroup
	for range 1000 {
		ran.Add(1)
		go p.Schedule(ran.Done)
	}
	ran.Wait()
	testutil.WaitFor(t, 10*time.Second, "idle workers to exit", func() bool { return p.workers.Load() == 0 })
	if p.Throughput() != 10 {
		t.Errorf("throughput %d, want 10", p.Throughput())
	}
}
