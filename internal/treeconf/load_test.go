package treeconf

import (
	"fmt"
	"sync"
	"testing"
)

// TestLoadIsConsistentUnderWrites reads the bucket while another writer
// keeps rewriting one key: every read must have it (a watcher's initial
// values alone can miss a key written while it starts).
func TestLoadIsConsistentUnderWrites(t *testing.T) {
	e := newEnv(t)
	e.applyBase(t)
	other := e.second(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_, _ = other.SetPool(ctx(t), "physical", "burst", Set("max_operation_count", fmt.Sprint(20+i%10)))
		}
	}()
	for i := range 150 {
		raw, last, err := e.store.readAll(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := raw["pool.physical.burst"]; !ok {
			var keys []string
			for k, v := range raw {
				keys = append(keys, fmt.Sprintf("%s@%d", k, v.rev))
			}
			t.Errorf("iteration %d: burst missing; last %d; %v", i, last, keys)
			break
		}
	}
	close(stop)
	wg.Wait()
}
