package scheduler

import (
	"math"
	"testing"
	"time"
)

// rejectBase is a small valid tree: a parent with a child pool, a fifo
// pool with two operations, an operation at the root, and a burst pool
// with a stored volume.
func rejectBase() (*Snapshot, *State) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	flow := PartialResources{}.With(CPU, 1)
	snap := &Snapshot{
		Now:     now,
		Cluster: Cluster{Total: res(100, 100, 1000)},
		Tree:    DefaultTreeConfig(),
		Pools: []PoolConfig{
			{Name: "prod", StrongGuaranteeResources: PartialResources{}.With(CPU, 40)},
			{Name: "batch", Parent: "prod"},
			{Name: "queue", Mode: ModeFIFO},
			{Name: "burst", IntegralGuarantees: IntegralGuarantees{GuaranteeType: GuaranteeBurst,
				ResourceFlow: flow, BurstGuaranteeResources: PartialResources{}.With(CPU, 20)}},
		},
		Operations: []Operation{
			{ID: "op-a", Pool: "batch", Demand: res(30, 30, 300), Usage: res(10, 10, 100)},
			{ID: "op-b", Pool: "queue", Demand: res(50, 50, 100), StartTime: now.Add(-time.Hour)},
			{ID: "op-c", Pool: "queue", Demand: res(50, 50, 100), StartTime: now.Add(-time.Minute)},
			{ID: "op-d", Demand: res(5, 5, 50)},
			{ID: "op-e", Pool: "burst", Demand: res(40, 40, 100)},
		},
	}
	prev := &State{
		LastUpdate: now.Add(-time.Second),
		Pools:      map[PoolID]PoolState{"burst": {AccumulatedVolume: Resources{CPU: 600}}},
	}
	return snap, prev
}

// Update refuses every snapshot and previous state that breaks a rule with
// the package's sentinel and a message naming what is wrong; an Engine
// refuses it the same way whether its last update was of the same tree (so
// that it takes its reuse paths) or not, and its next update of the valid
// tree gives exactly what a fresh update gives: a refused update changes
// nothing.
func TestUpdateRejectsBadSnapshots(t *testing.T) {
	cases := []struct {
		name string
		edit func(s *Snapshot, prev *State)
		want error
		msg  string
	}{
		{"tree config", func(s *Snapshot, _ *State) { s.Tree.FairShareStarvationTolerance = 2 },
			ErrInvalidConfig, "scheduler: invalid configuration: tree fair_share_starvation_tolerance: must be in [0, 1], got 2"},
		{"pool config", func(s *Snapshot, _ *State) { s.Pools[1].Weight = ptr(-1.0) },
			ErrInvalidConfig, `scheduler: invalid configuration: pool "batch" weight: must be a finite number in [1.4901161193847656e-08, 6.7108864e+07], got -1`},
		{"pool defined twice", func(s *Snapshot, _ *State) { s.Pools = append(s.Pools, PoolConfig{Name: "queue"}) },
			ErrInvalidTree, `scheduler: invalid pool tree: pool "queue" is defined twice`},
		{"parent missing", func(s *Snapshot, _ *State) { s.Pools[1].Parent = "staging" },
			ErrInvalidTree, `scheduler: invalid pool tree: pool "batch": parent "staging" does not exist`},
		{"cycle", func(s *Snapshot, _ *State) { s.Pools[0].Parent = "batch" },
			ErrInvalidTree, `scheduler: invalid pool tree: pool "prod" is part of a cycle (not reachable from the root)`},
		{"pool under a fifo pool", func(s *Snapshot, _ *State) { s.Pools[1].Parent = "queue" },
			ErrInvalidTree, `scheduler: invalid pool tree: fifo pool "queue" has child pools; fifo pools hold operations only`},
		{"operation's pool missing", func(s *Snapshot, _ *State) { s.Operations[0].Pool = "staging" },
			ErrInvalidOperation, `scheduler: invalid operation: operation "op-a": pool "staging" does not exist`},
		{"operation demand", func(s *Snapshot, _ *State) { s.Operations[2].Demand[CPU] = math.Inf(1) },
			ErrInvalidOperation, `scheduler: invalid operation: operation "op-c" demand: cpu ` + AmountRule + ", got +Inf"},
		{"operation listed twice", func(s *Snapshot, _ *State) { s.Operations = append(s.Operations, s.Operations[3]) },
			ErrDuplicateOperation, `scheduler: duplicate operation: operation "op-d" is listed twice`},
		{"time before the previous update", func(s *Snapshot, prev *State) { prev.LastUpdate = s.Now.Add(time.Millisecond) },
			ErrInvalidConfig, "scheduler: invalid configuration: update time 2026-11-22T12:00:00.000Z is before the previous update 2026-11-22T12:00:00.001Z"},
		{"stored volume negative", func(_ *Snapshot, prev *State) { prev.Pools["burst"] = PoolState{AccumulatedVolume: Resources{GPU: -1}} },
			ErrInvalidState, `scheduler: invalid previous state: pool "burst" accumulated volume gpu ` + VolumeRule + ", got -1"},
		{"stored share ratio NaN", func(_ *Snapshot, prev *State) { prev.Pools["burst"] = PoolState{LastIntegralShareRatio: math.NaN()} },
			ErrInvalidState, `scheduler: invalid previous state: pool "burst" last integral share ratio must be a number in [0, 1e+27], got NaN`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			good, goodPrev := rejectBase()
			want, err := Update(good, goodPrev)
			if err != nil {
				t.Fatalf("the valid tree: %v", err)
			}
			bad, badPrev := rejectBase()
			c.edit(bad, badPrev)
			_, err = Update(bad, badPrev)
			checkError(t, "Update", err, c.want, c.msg)

			// An Engine that has just updated the valid tree, and one that
			// has not (its first update), both refuse it, and both then
			// update the valid tree exactly as Update does.
			for _, warm := range []bool{true, false} {
				var en Engine
				if warm {
					if _, err := en.Update(good, goodPrev); err != nil {
						t.Fatalf("Engine, the valid tree: %v", err)
					}
				}
				_, err := en.Update(bad, badPrev)
				checkError(t, "Engine.Update", err, c.want, c.msg)
				got, err := en.Update(good, goodPrev)
				if err != nil {
					t.Fatalf("Engine (warm %v) after the refusal: %v", warm, err)
				}
				if d := resultDiff(want, got); d != "" {
					t.Errorf("Engine (warm %v) after the refusal: %s", warm, d)
				}
			}
		})
	}
}
