package scheduler

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// cloneSnapshot copies the parts of a snapshot the variations below change.
func cloneSnapshot(s *Snapshot) *Snapshot {
	c := *s
	c.Pools = slices.Clone(s.Pools)
	c.Operations = slices.Clone(s.Operations)
	return &c
}

// varySnapshot changes snap in one of the ways drawn: values only (the
// structure stays: usage, demand, weights, start times, pending counts,
// limits, a fifo pool's sort parameters in place), or the structure (an
// operation moved to another pool, removed, or two swapped; a pool's mode
// or parent changed), or a value made invalid.
func varySnapshot(t *rapid.T, snap *Snapshot) *Snapshot {
	s := cloneSnapshot(snap)
	no, np := len(s.Operations), len(s.Pools)
	kind := rapid.SampledFrom([]string{"values", "values", "values", "fifoKeys", "fifoParamsInPlace", "move", "remove", "swap", "mode", "parent", "invalid"}).Draw(t, "variation")
	switch kind {
	case "values":
		for range rapid.IntRange(0, 20).Draw(t, "changes") {
			if no == 0 {
				break
			}
			o := &s.Operations[rapid.IntRange(0, no-1).Draw(t, "op")]
			o.Usage[CPU] = rapid.Float64Range(0, 50).Draw(t, "usage")
			o.Demand[CPU] = o.Usage[CPU] + rapid.Float64Range(0, 50).Draw(t, "demand")
			w := rapid.Float64Range(0.1, 10).Draw(t, "weight")
			o.Weight = &w
			o.PendingJobCount = rapid.IntRange(0, 10).Draw(t, "pending")
		}
		if np > 0 {
			p := &s.Pools[rapid.IntRange(0, np-1).Draw(t, "pool")]
			w := rapid.Float64Range(0.1, 10).Draw(t, "poolWeight")
			p.Weight = &w
		}
	case "fifoKeys":
		// Start times and weights reshuffled: fifo orders may change.
		for i := range s.Operations {
			o := &s.Operations[i]
			o.StartTime = o.StartTime.Add(time.Duration(rapid.IntRange(-100, 100).Draw(t, "shift")) * time.Second)
		}
	case "fifoParamsInPlace":
		// The caller changes a fifo pool's parameters in its own slice.
		for i := range s.Pools {
			if p := &snap.Pools[i]; p.Mode == ModeFIFO && len(p.FifoSortParameters) > 0 {
				p.FifoSortParameters[0] = FifoSortPendingJobCount
				s.Pools[i].FifoSortParameters = p.FifoSortParameters
				break
			}
		}
	case "move":
		if no > 0 && np > 0 {
			o := &s.Operations[rapid.IntRange(0, no-1).Draw(t, "op")]
			p := &s.Pools[rapid.IntRange(0, np-1).Draw(t, "pool")]
			if !slices.ContainsFunc(s.Pools, func(q PoolConfig) bool { return q.Parent == p.Name }) {
				o.Pool = p.Name
			}
		}
	case "remove":
		if no > 0 {
			s.Operations = slices.Delete(s.Operations, 0, 1)
		}
	case "swap":
		if no > 1 {
			i, j := rapid.IntRange(0, no-1).Draw(t, "i"), rapid.IntRange(0, no-1).Draw(t, "j")
			s.Operations[i], s.Operations[j] = s.Operations[j], s.Operations[i]
		}
	case "mode":
		for i := range s.Pools {
			p := &s.Pools[i]
			if !slices.ContainsFunc(s.Pools, func(q PoolConfig) bool { return q.Parent == p.Name }) {
				if p.Mode == ModeFIFO {
					p.Mode = ModeFairShare
				} else {
					p.Mode = ModeFIFO
				}
				break
			}
		}
	case "parent":
		if np > 1 {
			// May make a cycle or put a pool under a fifo pool: then both
			// engines must report the same error.
			s.Pools[np-1].Parent = s.Pools[rapid.IntRange(0, np-2).Draw(t, "parent")].Name
		}
	case "invalid":
		if no > 0 {
			s.Operations[rapid.IntRange(0, no-1).Draw(t, "op")].Demand[CPU] = -1
		}
	}
	return s
}

// An Engine updated with a sequence of snapshots, most of them of one
// structure (so that it reuses the structure it built), gives exactly what
// a fresh update of each gives, errors included.
func TestPropertyReusedStructureMatchesFreshUpdate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := drawGenParams(t)
		snap, prev := genSnapshot(p)
		var en Engine
		cur := snap
		for k := range rapid.IntRange(1, 6).Draw(t, "updates") {
			if k > 0 {
				cur = varySnapshot(t, cur)
			}
			var res Result
			want, differ, werr := updateBoth(&en, &res, cur, prev, prev)
			if differ != "" {
				t.Fatalf("update %d: errors differ: %s", k, differ)
			}
			if werr != nil {
				continue
			}
			if d := resultDiff(want, &res); d != "" {
				t.Fatalf("update %d: %s", k, d)
			}
		}
	})
}

// The structure is reused exactly when it is the same, and the package-level
// Update (shared engines) never keeps one.
func TestStructureReuse(t *testing.T) {
	snap, prev := genSnapshot(genDefaults(7))
	var en Engine
	if _, err := en.Update(snap, prev); err != nil {
		t.Fatal(err)
	}
	// An operation in a pool and one of the root's.
	inPool := slices.IndexFunc(snap.Operations, func(o Operation) bool { return o.Pool != "" })
	atRoot := slices.IndexFunc(snap.Operations, func(o Operation) bool { return o.Pool == "" })
	if inPool < 0 || atRoot < 0 {
		t.Fatalf("the snapshot needs operations in a pool (%d) and of the root (%d)", inPool, atRoot)
	}
	tests := []struct {
		name string
		vary func(s *Snapshot)
		want bool
	}{
		{"same snapshot", func(*Snapshot) {}, true},
		{"usage changed", func(s *Snapshot) { s.Operations[0].Usage[CPU]++ }, true},
		{"operation renamed", func(s *Snapshot) { s.Operations[0].ID += "x" }, false},
		{"operation removed", func(s *Snapshot) { s.Operations = s.Operations[1:] }, false},
		{"operations swapped", func(s *Snapshot) {
			s.Operations[0], s.Operations[1] = s.Operations[1], s.Operations[0]
		}, false},
		{"pool parent changed", func(s *Snapshot) { s.Pools[len(s.Pools)-1].Parent = "" }, false},
		{"operation moved to another pool", func(s *Snapshot) {
			o := &s.Operations[inPool]
			for _, p := range s.Pools {
				if p.Name != o.Pool {
					o.Pool = p.Name
					return
				}
			}
		}, false},
		{"operation moved to the root", func(s *Snapshot) { s.Operations[inPool].Pool = "" }, false},
		{"root's operation moved to a pool", func(s *Snapshot) { s.Operations[atRoot].Pool = s.Pools[0].Name }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := cloneSnapshot(snap)
			tc.vary(s)
			if got := en.t.topo.matches(s, &en.t); got != tc.want {
				t.Errorf("matches = %v, want %v", got, tc.want)
			}
		})
	}
	// A fifo pool's sort parameters changed in the caller's own slice.
	fifo := &Snapshot{Tree: DefaultTreeConfig(), Cluster: Cluster{Total: Resources{CPU: 10}},
		Pools: []PoolConfig{{Name: "F", Mode: ModeFIFO, FifoSortParameters: []FifoSortParameter{FifoSortWeight, FifoSortStartTime}}},
		Operations: []Operation{
			{ID: "a", Pool: "F", Demand: Resources{CPU: 10}, PendingJobCount: 2},
			{ID: "b", Pool: "F", Demand: Resources{CPU: 10}, PendingJobCount: 1},
		}}
	var fe Engine
	if _, err := fe.Update(fifo, nil); err != nil {
		t.Fatal(err)
	}
	fifo.Pools[0].FifoSortParameters[0] = FifoSortPendingJobCount
	if fe.t.topo.matches(fifo, &fe.t) {
		t.Error("matches after the fifo sort parameters changed in place")
	}
	r, err := fe.Update(fifo, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := r.Element("b"); b.FifoIndex != 0 {
		t.Errorf("b (fewer pending jobs) has fifo index %d, want 0", b.FifoIndex)
	}

	var pooled Engine
	if _, err := pooled.Update(snap, prev); err != nil {
		t.Fatal(err)
	}
	pooled.release()
	if pooled.t.topo.valid || len(pooled.t.topo.pools) > 0 || len(pooled.t.opIdx.keys) > 0 {
		t.Error("release kept the structure (and the caller's names)")
	}
}
