package scheduler

import (
	"fmt"
	"testing"
)

// TestNameIndexFindMany checks that findMany finds what find finds, for
// batches of present and absent keys of every size up to findBatch, in a
// table full enough that probes run past the first slot.
func TestNameIndexFindMany(t *testing.T) {
	var x nameIndex
	keys := make([]string, 0, 3000)
	for i := range 1000 {
		keys = append(keys, fmt.Sprintf("op%d", i))
	}
	out := make([]int32, findBatch)
	x.findMany(keys[:3], out) // an empty index finds nothing
	for k, v := range out[:3] {
		if v != -1 {
			t.Fatalf("empty index: findMany(%q) = %d, want -1", keys[k], v)
		}
	}
	x.reset(len(keys))
	for _, k := range keys {
		x.add(k)
	}
	for i := range 2000 {
		keys = append(keys, fmt.Sprintf("absent%d", i))
	}
	for size := 1; size <= findBatch; size++ {
		for lo := 0; lo+size <= len(keys); lo += 97 {
			batch := keys[lo : lo+size]
			x.findMany(batch, out)
			for k, key := range batch {
				want := int32(-1)
				if i, ok := x.find(key); ok {
					want = int32(i)
				}
				if out[k] != want {
					t.Fatalf("findMany(%q) = %d, want %d", key, out[k], want)
				}
			}
		}
	}
}
