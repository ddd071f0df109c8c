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

// TestNameIndexAddHashed checks that adding keys hashed ahead a batch at a
// time (hashAhead, addHashed) gives the indexes and duplicate reports that
// adding them one by one does, with duplicates inside a batch and across
// batches, and that hashAhead on an index without a table reads nothing.
func TestNameIndexAddHashed(t *testing.T) {
	var empty nameIndex
	hs := make([]uint64, findBatch)
	empty.hashAhead([]string{"a", "b"}, hs) // must not index an empty table
	if hs[0] != hashName("a") || hs[1] != hashName("b") {
		t.Fatalf("hashAhead on an empty index: hashes %x %x, want %x %x", hs[0], hs[1], hashName("a"), hashName("b"))
	}
	keys := make([]string, 0, 1200)
	for i := range 1000 {
		keys = append(keys, fmt.Sprintf("op%d", i))
		if i%7 == 3 {
			keys = append(keys, fmt.Sprintf("op%d", i)) // within a batch, mostly
		}
		if i%50 == 49 {
			keys = append(keys, fmt.Sprintf("op%d", i-40)) // across batches
		}
	}
	var one, batched nameIndex
	one.reset(len(keys))
	batched.reset(len(keys))
	var dups int
	for lo := 0; lo < len(keys); lo += findBatch {
		batch := keys[lo:min(lo+findBatch, len(keys))]
		batched.hashAhead(batch, hs)
		for k, key := range batch {
			wi, wok := one.add(key)
			gi, gok := batched.addHashed(key, hs[k])
			if gi != wi || gok != wok {
				t.Fatalf("addHashed(%q) = %d, %v; add gives %d, %v", key, gi, gok, wi, wok)
			}
			if !gok {
				dups++
			}
		}
	}
	// The keys added with their hashes ahead are found by find, which
	// hashes them itself.
	for _, key := range keys {
		wi, _ := one.find(key)
		if gi, ok := batched.find(key); !ok || gi != wi {
			t.Fatalf("find(%q) after addHashed = %d, %v; want %d, true", key, gi, ok, wi)
		}
	}
	if want := 143 + 20; dups != want { // i%7 == 3 for 143 of 1,000; i%50 == 49 for 20
		t.Fatalf("%d duplicates reported, want %d", dups, want)
	}
}
