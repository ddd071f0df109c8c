package scheduler

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// An Engine's LastReuse counts the operations each update read and those it
// computed afresh, through every way the Engine builds a tree: the first
// update, the structure kept, operations finished and started (patch), a
// pool added (a new layout), and a failed update. Each update's result is
// also that of a fresh Update.
func TestEngineLastReuse(t *testing.T) {
	snap, prev := genSnapshot(genParams{Seed: 7, Pools: 20, Ops: 200, Depth: 3, GuaranteeFrac: 0.3,
		IntegralFrac: 0.1, FIFOFrac: 0.2, WeightFrac: 0.5, Load: 1.5, JobsFrac: 0.2})
	n := len(snap.Operations)
	if n != 200 {
		t.Fatalf("generated %d operations, want 200", n)
	}
	scale := func(ids ...int) func(*Snapshot) {
		return func(s *Snapshot) {
			for _, i := range ids {
				s.Operations[i].Demand = s.Operations[i].Demand.Add(s.Operations[i].Demand)
			}
		}
	}
	steps := []struct {
		name   string
		change func(*Snapshot)
		fail   bool
		want   Reuse
	}{
		{name: "first update", change: func(*Snapshot) {}, want: Reuse{Operations: n, Recomputed: n}},
		{name: "nothing changed", change: func(*Snapshot) {}, want: Reuse{Operations: n, Recomputed: 0}},
		{name: "one demand changed", change: scale(5), want: Reuse{Operations: n, Recomputed: 1}},
		{name: "three demands changed", change: scale(0, 50, 199), want: Reuse{Operations: n, Recomputed: 3}},
		{name: "one operation finished", change: func(s *Snapshot) {
			s.Operations = slices.Delete(s.Operations, 10, 11)
		}, want: Reuse{Operations: n - 1, Recomputed: 0}},
		{name: "one operation started", change: func(s *Snapshot) {
			o := s.Operations[0]
			o.ID, o.Jobs = "started-op", nil
			s.Operations = append(s.Operations, o)
		}, want: Reuse{Operations: n, Recomputed: 1}},
		{name: "the cluster grew", change: func(s *Snapshot) {
			s.Cluster.Total = s.Cluster.Total.Add(s.Cluster.Total)
		}, want: Reuse{Operations: n, Recomputed: n}},
		{name: "nothing changed after it", change: func(*Snapshot) {}, want: Reuse{Operations: n, Recomputed: 0}},
		{name: "a pool added", change: func(s *Snapshot) {
			s.Pools = append(s.Pools, PoolConfig{Name: "added-pool"})
		}, want: Reuse{Operations: n, Recomputed: n}},
		{name: "failed update", fail: true, want: Reuse{}},
	}
	var en Engine
	for _, st := range steps {
		cur := *snap
		cur.Pools = slices.Clone(snap.Pools)
		cur.Operations = slices.Clone(snap.Operations)
		if st.fail {
			cur.Operations = append(cur.Operations, cur.Operations[0])
			if _, err := en.Update(&cur, prev); !errors.Is(err, ErrDuplicateOperation) {
				t.Fatalf("%s: want ErrDuplicateOperation, got %v", st.name, err)
			}
		} else {
			st.change(&cur)
			got, err := en.Update(&cur, prev)
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			want, err := Update(&cur, prev)
			if err != nil {
				t.Fatalf("%s: fresh Update: %v", st.name, err)
			}
			if d := resultDiff(want, got); d != "" {
				t.Fatalf("%s: the Engine's result differs from a fresh Update's: %s", st.name, d)
			}
			snap = &cur
		}
		if d := cmp.Diff(st.want, en.LastReuse()); d != "" {
			t.Errorf("%s: LastReuse (-want +got):\n%s", st.name, d)
		}
	}
}

// When the memory of the operations' functions has grown too large, the
// Engine builds every operation's functions again (keeping their
// elements), and LastReuse counts every operation as recomputed in that
// update; in the others it counts the operations changed.
func TestEngineLastReuseCountsFunctionsRebuilt(t *testing.T) {
	snap, prev := genSnapshot(genParams{Seed: 11, Pools: 10, Ops: 100, Depth: 2, Load: 1.5, WeightFrac: 0.5})
	for i := range snap.Operations {
		snap.Operations[i].PendingJobCount = 1
	}
	var en Engine
	if _, err := en.Update(snap, prev); err != nil {
		t.Fatal(err)
	}
	resets := 0
	for k := range 400 {
		changed := map[int]bool{}
		for j := range 20 {
			i := (k*20 + j*7) % len(snap.Operations)
			snap.Operations[i].PendingJobCount++
			changed[i] = true
		}
		if _, err := en.Update(snap, prev); err != nil {
			t.Fatalf("update %d: %v", k, err)
		}
		want := Reuse{Operations: len(snap.Operations), Recomputed: len(changed)}
		if en.t.fnBase < 0 { // keepFunctions reset the functions' memory
			want.Recomputed = len(snap.Operations)
			resets++
		}
		if d := cmp.Diff(want, en.LastReuse()); d != "" {
			t.Fatalf("update %d: LastReuse (-want +got):\n%s", k, d)
		}
		if resets == 2 {
			return
		}
	}
	t.Fatalf("the functions' memory was reset %d times in 400 updates, want 2", resets)
}
