package scheduler

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func starvPtr[T any](v T) *T { return &v }

var starvT0 = time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)

// starvNever stands for a zero BelowFairShareSince.
const starvNever = time.Duration(-1)

// starvObs is what a timeline step checks on one element.
type starvObs struct {
	Status     Status
	Starvation StarvationStatus
	// Since is BelowFairShareSince as an offset from starvT0, starvNever when
	// zero.
	Since time.Duration
}

func starvBelow(s StarvationStatus, since time.Duration) starvObs {
	return starvObs{Status: StatusBelowFairShare, Starvation: s, Since: since}
}

var starvNormal = starvObs{Status: StatusNormal, Starvation: NonStarving, Since: starvNever}

// starvStep is one Update at starvT0+at. usage (cpu, of 100) replaces
// operations' usage from this step on.
type starvStep struct {
	at    time.Duration
	usage map[OperationID]float64
	want  map[string]starvObs
}

// starvOp is an operation wanting twice the 100-cpu cluster and using cpu.
func starvOp(id OperationID, pool PoolID, cpu float64, pending int) Operation {
	return Operation{ID: id, Pool: pool, Demand: Resources{CPU: 200}, Usage: Resources{CPU: cpu}, PendingJobCount: pending}
}

const starvOneMillisecond = time.Millisecond

func TestStarvationTimeline(t *testing.T) {
	cases := map[string]struct {
		tree  func(*TreeConfig)
		pools []PoolConfig
		ops   []Operation
		steps []starvStep
	}{
		"starving only strictly after the 30 s timeout": {
			pools: []PoolConfig{{Name: "P"}},
			ops:   []Operation{starvOp("op", "P", 10, 10)},
			steps: []starvStep{
				{at: 0, want: map[string]starvObs{"op": starvBelow(NonStarving, 0), "P": starvBelow(NonStarving, 0)}},
				{at: 10 * time.Second, want: map[string]starvObs{"op": starvBelow(NonStarving, 0), "P": starvBelow(NonStarving, 0)}},
				{at: 30 * time.Second, want: map[string]starvObs{"op": starvBelow(NonStarving, 0), "P": starvBelow(NonStarving, 0)}},
				{at: 30*time.Second + starvOneMillisecond, want: map[string]starvObs{"op": starvBelow(Starving, 0), "P": starvBelow(Starving, 0)}},
				// Aggressive starvation is disabled by default.
				{at: 10 * time.Minute, want: map[string]starvObs{"op": starvBelow(Starving, 0), "P": starvBelow(Starving, 0)}},
			},
		},
		"the timestamp is set by the first update that sees the element below": {
			pools: []PoolConfig{{Name: "P"}},
			ops:   []Operation{starvOp("op", "P", 90, 10)},
			steps: []starvStep{
				{at: 0, want: map[string]starvObs{"op": starvNormal, "P": starvNormal}},
				{at: 20 * time.Second, usage: map[OperationID]float64{"op": 10},
					want: map[string]starvObs{"op": starvBelow(NonStarving, 20*time.Second), "P": starvBelow(NonStarving, 20*time.Second)}},
				{at: 50 * time.Second, want: map[string]starvObs{"op": starvBelow(NonStarving, 20*time.Second), "P": starvBelow(NonStarving, 20*time.Second)}},
				{at: 50*time.Second + starvOneMillisecond, want: map[string]starvObs{"op": starvBelow(Starving, 20*time.Second), "P": starvBelow(Starving, 20*time.Second)}},
			},
		},
		"aggressive starvation with EnableAggressiveStarvation after 120 s": {
			tree:  func(c *TreeConfig) { c.EnableAggressiveStarvation = true },
			pools: []PoolConfig{{Name: "P"}},
			ops:   []Operation{starvOp("op", "P", 10, 10)},
			steps: []starvStep{
				{at: 0, want: map[string]starvObs{"op": starvBelow(NonStarving, 0), "P": starvBelow(NonStarving, 0)}},
				{at: 30*time.Second + starvOneMillisecond, want: map[string]starvObs{"op": starvBelow(Starving, 0), "P": starvBelow(Starving, 0)}},
				{at: 120 * time.Second, want: map[string]starvObs{"op": starvBelow(Starving, 0), "P": starvBelow(Starving, 0)}},
				{at: 120*time.Second + starvOneMillisecond, want: map[string]starvObs{"op": starvBelow(AggressivelyStarving, 0), "P": starvBelow(AggressivelyStarving, 0)}},
			},
		},
		"aggressive starvation uses its own timeout": {
			tree: func(c *TreeConfig) {
				c.EnableAggressiveStarvation = true
				c.FairShareAggressiveStarvationTimeout = 45 * time.Second
			},
			ops: []Operation{starvOp("op", "", 10, 10)},
			steps: []starvStep{
				{at: 0, want: map[string]starvObs{"op": starvBelow(NonStarving, 0)}},
				{at: 45 * time.Second, want: map[string]starvObs{"op": starvBelow(Starving, 0)}},
				{at: 45*time.Second + starvOneMillisecond, want: map[string]starvObs{"op": starvBelow(AggressivelyStarving, 0)}},
			},
		},
		"a pool enables aggressive starvation for its subtree": {
			pools: []PoolConfig{
				{Name: "A", EnableAggressiveStarvation: starvPtr(true)},
				{Name: "A1", Parent: "A"},
				{Name: "B"},
			},
			ops: []Operation{starvOp("a", "A1", 10, 10), starvOp("b", "B", 10, 10)},
			steps: []starvStep{
				{at: 0, want: map[string]starvObs{
					"A": starvBelow(NonStarving, 0), "A1": starvBelow(NonStarving, 0), "a": starvBelow(NonStarving, 0),
					"B": starvBelow(NonStarving, 0), "b": starvBelow(NonStarving, 0),
				}},
				{at: 120*time.Second + starvOneMillisecond, want: map[string]starvObs{
					"A": starvBelow(AggressivelyStarving, 0), "A1": starvBelow(AggressivelyStarving, 0), "a": starvBelow(AggressivelyStarving, 0),
					"B": starvBelow(Starving, 0), "b": starvBelow(Starving, 0),
				}},
			},
		},
		"a pool disables aggressive starvation the tree enables": {
			tree: func(c *TreeConfig) { c.EnableAggressiveStarvation = true },
			pools: []PoolConfig{
				{Name: "A"},
				{Name: "B", EnableAggressiveStarvation: starvPtr(false)},
			},
			ops: []Operation{starvOp("a", "A", 10, 10), starvOp("b", "B", 10, 10)},
			steps: []starvStep{
				{at: 0},
				{at: 120*time.Second + starvOneMillisecond, want: map[string]starvObs{
					"A": starvBelow(AggressivelyStarving, 0), "a": starvBelow(AggressivelyStarving, 0),
					"B": starvBelow(Starving, 0), "b": starvBelow(Starving, 0),
				}},
			},
		},
		"going back to normal clears the timestamp": {
			ops: []Operation{starvOp("op", "", 10, 10)},
			steps: []starvStep{
				{at: 0, want: map[string]starvObs{"op": starvBelow(NonStarving, 0)}},
				{at: 40 * time.Second, want: map[string]starvObs{"op": starvBelow(Starving, 0)}},
				{at: 50 * time.Second, usage: map[OperationID]float64{"op": 90}, want: map[string]starvObs{"op": starvNormal}},
				{at: 60 * time.Second, usage: map[OperationID]float64{"op": 10}, want: map[string]starvObs{"op": starvBelow(NonStarving, 60*time.Second)}},
				{at: 90 * time.Second, want: map[string]starvObs{"op": starvBelow(NonStarving, 60*time.Second)}},
				{at: 90*time.Second + starvOneMillisecond, want: map[string]starvObs{"op": starvBelow(Starving, 60*time.Second)}},
			},
		},
		"EnablePoolStarvation=false keeps pools non_starving": {
			tree:  func(c *TreeConfig) { c.EnablePoolStarvation = false },
			pools: []PoolConfig{{Name: "P"}, {Name: "C", Parent: "P"}},
			ops:   []Operation{starvOp("op", "C", 10, 10)},
			steps: []starvStep{
				{at: 0, want: map[string]starvObs{
					"P":  {Status: StatusBelowFairShare, Starvation: NonStarving, Since: starvNever},
					"C":  {Status: StatusBelowFairShare, Starvation: NonStarving, Since: starvNever},
					"op": starvBelow(NonStarving, 0),
				}},
				{at: 10 * time.Minute, want: map[string]starvObs{
					"P":  {Status: StatusBelowFairShare, Starvation: NonStarving, Since: starvNever},
					"C":  {Status: StatusBelowFairShare, Starvation: NonStarving, Since: starvNever},
					"op": starvBelow(Starving, 0),
				}},
			},
		},
		"pool timeout is inherited; an operation can only raise it": {
			pools: []PoolConfig{
				{Name: "P", FairShareStarvationTimeout: starvPtr(10 * time.Second)},
				{Name: "C", Parent: "P"},
			},
			ops: []Operation{
				starvOp("inherit", "C", 1, 10),
				func() Operation {
					o := starvOp("lower", "C", 1, 10)
					o.FairShareStarvationTimeout = starvPtr(5 * time.Second)
					return o
				}(),
				func() Operation {
					o := starvOp("raise", "C", 1, 10)
					o.FairShareStarvationTimeout = starvPtr(20 * time.Second)
					return o
				}(),
			},
			steps: []starvStep{
				{at: 0},
				{at: 5*time.Second + starvOneMillisecond, want: map[string]starvObs{
					"P": starvBelow(NonStarving, 0), "C": starvBelow(NonStarving, 0),
					"inherit": starvBelow(NonStarving, 0), "lower": starvBelow(NonStarving, 0), "raise": starvBelow(NonStarving, 0),
				}},
				{at: 10*time.Second + starvOneMillisecond, want: map[string]starvObs{
					"P": starvBelow(Starving, 0), "C": starvBelow(Starving, 0),
					"inherit": starvBelow(Starving, 0), "lower": starvBelow(Starving, 0), "raise": starvBelow(NonStarving, 0),
				}},
				{at: 20*time.Second + starvOneMillisecond, want: map[string]starvObs{"raise": starvBelow(Starving, 0)}},
			},
		},
		"no pending jobs: starving at the first update after going below": {
			pools: []PoolConfig{{Name: "P"}},
			ops:   []Operation{starvOp("op", "P", 10, 0)},
			steps: []starvStep{
				{at: 0, want: map[string]starvObs{"op": starvBelow(NonStarving, 0), "P": starvBelow(NonStarving, 0)}},
				// The same instant again: not strictly after since + 0.
				{at: 0, want: map[string]starvObs{"op": starvBelow(NonStarving, 0), "P": starvBelow(NonStarving, 0)}},
				{at: starvOneMillisecond, want: map[string]starvObs{"op": starvBelow(Starving, 0), "P": starvBelow(NonStarving, 0)}},
			},
		},
		"timeouts scaled by pending/coefficient": {
			// min(1, 2/4) = 0.5: 15 s and 60 s for the operation, the pool
			// keeps 30 s and 120 s.
			tree: func(c *TreeConfig) {
				c.AllocationCountPreemptionTimeoutCoefficient = 4
				c.EnableAggressiveStarvation = true
			},
			pools: []PoolConfig{{Name: "P"}},
			ops:   []Operation{starvOp("op", "P", 10, 2)},
			steps: []starvStep{
				{at: 0},
				{at: 15 * time.Second, want: map[string]starvObs{"op": starvBelow(NonStarving, 0), "P": starvBelow(NonStarving, 0)}},
				{at: 15*time.Second + starvOneMillisecond, want: map[string]starvObs{"op": starvBelow(Starving, 0), "P": starvBelow(NonStarving, 0)}},
				{at: 60 * time.Second, want: map[string]starvObs{"op": starvBelow(Starving, 0), "P": starvBelow(Starving, 0)}},
				{at: 60*time.Second + starvOneMillisecond, want: map[string]starvObs{"op": starvBelow(AggressivelyStarving, 0), "P": starvBelow(Starving, 0)}},
				{at: 120*time.Second + starvOneMillisecond, want: map[string]starvObs{"op": starvBelow(AggressivelyStarving, 0), "P": starvBelow(AggressivelyStarving, 0)}},
			},
		},
		"pending at or above the coefficient: no scaling": {
			tree: func(c *TreeConfig) { c.AllocationCountPreemptionTimeoutCoefficient = 4 },
			ops:  []Operation{starvOp("four", "", 10, 4), starvOp("ten", "", 10, 10)},
			steps: []starvStep{
				{at: 0},
				{at: 30 * time.Second, want: map[string]starvObs{"four": starvBelow(NonStarving, 0), "ten": starvBelow(NonStarving, 0)}},
				{at: 30*time.Second + starvOneMillisecond, want: map[string]starvObs{"four": starvBelow(Starving, 0), "ten": starvBelow(Starving, 0)}},
			},
		},
		"an unschedulable operation is normal": {
			pools: []PoolConfig{{Name: "P"}},
			ops: []Operation{func() Operation {
				o := starvOp("op", "P", 0, 10)
				o.Unschedulable = true
				return o
			}()},
			steps: []starvStep{
				{at: 0, want: map[string]starvObs{"op": starvNormal, "P": starvBelow(NonStarving, 0)}},
				{at: 10 * time.Minute, want: map[string]starvObs{"op": starvNormal, "P": starvBelow(Starving, 0)}},
			},
		},
		"fair share covering demand: any shortfall counts": {
			// 9 of a fully granted demand of 10 cpu: below with the forced
			// tolerance 1.0 (0.8 would call it normal).
			ops: []Operation{{ID: "op", Demand: Resources{CPU: 10}, Usage: Resources{CPU: 9}, PendingJobCount: 1}},
			steps: []starvStep{
				{at: 0, want: map[string]starvObs{"op": starvBelow(NonStarving, 0)}},
				{at: 30*time.Second + starvOneMillisecond, want: map[string]starvObs{"op": starvBelow(Starving, 0)}},
				{at: 40 * time.Second, usage: map[OperationID]float64{"op": 10}, want: map[string]starvObs{"op": starvNormal}},
			},
		},
	}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultTreeConfig()
			if tc.tree != nil {
				tc.tree(&cfg)
			}
			ops := append([]Operation(nil), tc.ops...)
			var prev *State
			for i, s := range tc.steps {
				for k := range ops {
					if u, ok := s.usage[ops[k].ID]; ok {
						ops[k].Usage = Resources{CPU: u}
					}
				}
				snap := &Snapshot{
					Now:        starvT0.Add(s.at),
					Cluster:    Cluster{Total: Resources{CPU: 100}},
					Tree:       cfg,
					Pools:      tc.pools,
					Operations: append([]Operation(nil), ops...),
				}
				res, err := Update(snap, prev)
				if err != nil {
					t.Fatalf("step %d (+%s): Update: %v", i, s.at, err)
				}
				got := map[string]starvObs{}
				for name := range s.want {
					e, ok := res.Element(name)
					if !ok {
						t.Fatalf("step %d: no element %q", i, name)
					}
					since := starvNever
					if !e.BelowFairShareSince.IsZero() {
						since = e.BelowFairShareSince.Sub(starvT0)
					}
					got[name] = starvObs{Status: e.Status, Starvation: e.StarvationStatus, Since: since}
				}
				if diff := cmp.Diff(s.want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("step %d (+%s): mismatch (-want +got):\n%s", i, s.at, diff)
				}
				// The state carries exactly the reported timestamps.
				for _, e := range res.Elements {
					var stateSince time.Time
					switch e.Kind {
					case KindPool:
						stateSince = res.State.Pools[PoolID(e.Name)].BelowFairShareSince
					case KindOperation:
						st, _ := res.State.Operation(OperationID(e.Name))
						stateSince = st.BelowFairShareSince
					default:
						continue
					}
					if !stateSince.Equal(e.BelowFairShareSince) {
						t.Errorf("step %d: %s: State BelowFairShareSince %v, element reports %v", i, e.Name, stateSince, e.BelowFairShareSince)
					}
				}
				prev = &res.State
			}
		})
	}
}

// starvSettings is an element's effective starvation settings and status
// after one update.
type starvSettings struct {
	Tolerance float64
	Timeout   time.Duration
	Status    Status
}

func TestStarvationSettingsInheritance(t *testing.T) {
	withTolerance := func(o Operation, tol float64) Operation {
		o.FairShareStarvationTolerance = &tol
		return o
	}
	withTimeout := func(o Operation, d time.Duration) Operation {
		o.FairShareStarvationTimeout = &d
		return o
	}
	cases := map[string]struct {
		tree  func(*TreeConfig)
		pools []PoolConfig
		ops   []Operation
		want  map[string]starvSettings
	}{
		// P (tolerance 0.5, timeout 10 s) holds C; C's four operations share
		// 0.5: p_small gets its whole 0.01, the others 0.49/3 ≈ 0.163 each. Q
		// inherits the tree's 0.7; its op q gets 0.4 and covered 0.1 (all of
		// its demand).
		"pool settings, operation overrides, forced 1.0": {
			tree: func(c *TreeConfig) { c.FairShareStarvationTolerance = 0.7 },
			pools: []PoolConfig{
				{Name: "P", FairShareStarvationTolerance: starvPtr(0.5), FairShareStarvationTimeout: starvPtr(10 * time.Second)},
				{Name: "C", Parent: "P"},
				{Name: "Q"},
			},
			ops: []Operation{
				// 0.12 of 0.163: normal at 0.5, would be below at 0.8.
				starvOp("p_big", "C", 12, 1),
				// 0.05: normal at 0.2, would be below at 0.5.
				withTimeout(withTolerance(starvOp("p_low", "C", 5, 1), 0.2), 5*time.Second),
				// 0.10: normal at 0.5, would be below at 0.9.
				withTimeout(withTolerance(starvOp("p_high", "C", 10, 1), 0.9), 20*time.Second),
				{ID: "p_small", Pool: "C", Demand: Resources{CPU: 1}, PendingJobCount: 1},
				starvOp("q", "Q", 10, 1),
				// 0.09 of a granted 0.1: below only with the forced 1.0.
				{ID: "covered", Pool: "Q", Demand: Resources{CPU: 10}, Usage: Resources{CPU: 9}, PendingJobCount: 1},
			},
			want: map[string]starvSettings{
				"P":       {0.5, 10 * time.Second, StatusNormal},
				"C":       {0.5, 10 * time.Second, StatusNormal},
				"p_big":   {0.5, 10 * time.Second, StatusNormal},
				"p_low":   {0.2, 10 * time.Second, StatusNormal},
				"p_high":  {0.5, 20 * time.Second, StatusNormal},
				"p_small": {1.0, 10 * time.Second, StatusBelowFairShare},
				"Q":       {0.7, 30 * time.Second, StatusBelowFairShare},
				"q":       {0.7, 30 * time.Second, StatusBelowFairShare},
				"covered": {1.0, 30 * time.Second, StatusBelowFairShare},
			},
		},
		"tree defaults": {
			pools: []PoolConfig{{Name: "P"}},
			ops: []Operation{
				starvOp("root_op", "", 30, 1),
				starvOp("pool_op", "P", 45, 1),
			},
			// Each gets 0.5; 0.8 × 0.5 = 0.4.
			want: map[string]starvSettings{
				"P":       {0.8, 30 * time.Second, StatusNormal},
				"root_op": {0.8, 30 * time.Second, StatusBelowFairShare},
				"pool_op": {0.8, 30 * time.Second, StatusNormal},
			},
		},
		"a pool tolerance of 0 never goes below": {
			pools: []PoolConfig{{Name: "P", FairShareStarvationTolerance: starvPtr(0.0)}},
			ops:   []Operation{starvOp("op", "P", 0, 1)},
			want: map[string]starvSettings{
				"P":  {0, 30 * time.Second, StatusNormal},
				"op": {0, 30 * time.Second, StatusNormal},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultTreeConfig()
			if tc.tree != nil {
				tc.tree(&cfg)
			}
			res, err := Update(&Snapshot{
				Now:        starvT0,
				Cluster:    Cluster{Total: Resources{CPU: 100}},
				Tree:       cfg,
				Pools:      tc.pools,
				Operations: tc.ops,
			}, nil)
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			got := map[string]starvSettings{}
			for name := range tc.want {
				e, ok := res.Element(name)
				if !ok {
					t.Fatalf("no element %q", name)
				}
				got[name] = starvSettings{e.EffectiveFairShareStarvationTolerance, e.EffectiveFairShareStarvationTimeout, e.Status}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLocalSatisfaction(t *testing.T) {
	cpuMem := func(c, m float64) Share { return Share{CPU: c, Memory: m} }
	cases := map[string]struct {
		usage, fair, demand Share
		want                float64
	}{
		"zero fair share":                          {usage: cpuMem(0.1, 0), fair: Share{}, demand: cpuMem(0.5, 0), want: math.Inf(1)},
		"fair share at epsilon":                    {usage: Share{}, fair: cpuMem(1e-10, 0), demand: cpuMem(0.5, 0), want: math.Inf(1)},
		"zero fair share, zero usage":              {want: math.Inf(1)},
		"usage above fair share: largest ratio":    {usage: cpuMem(0.6, 0.3), fair: cpuMem(0.5, 0.2), demand: cpuMem(1, 1), want: 1.5},
		"one resource above fair share":            {usage: cpuMem(0.6, 0.1), fair: cpuMem(0.5, 0.2), demand: cpuMem(1, 1), want: 1.2},
		"usage on a resource with zero fair share": {usage: cpuMem(0.1, 0.1), fair: cpuMem(0.5, 0), demand: cpuMem(1, 1), want: math.Inf(1)},
		"below: largest ratio over non-blocked":    {usage: cpuMem(0.1, 0.3), fair: cpuMem(0.5, 0.5), demand: cpuMem(1, 1), want: 0.6},
		"blocked resource ignored": {
			// memory is fully granted; its ratio 0.9 does not count.
			usage: cpuMem(0.25, 0.45), fair: cpuMem(0.5, 0.5), demand: cpuMem(1, 0.5), want: 0.5,
		},
		"non-blocked resource with zero fair share ignored": {
			usage: cpuMem(0.25, 0), fair: cpuMem(0.5, 0), demand: cpuMem(1, 0.3), want: 0.5,
		},
		"all blocked: smallest ratio": {
			usage: cpuMem(0.25, 0.3), fair: cpuMem(0.5, 0.4), demand: cpuMem(0.5, 0.4), want: 0.5,
		},
		"all blocked, no usage": {
			usage: Share{}, fair: cpuMem(0.5, 0.4), demand: cpuMem(0.5, 0.4), want: 0,
		},
		"all blocked, usage equals fair share: 0/0 counts as 1": {
			usage: cpuMem(0.5, 0), fair: cpuMem(0.5, 0), demand: cpuMem(0.5, 0), want: 1,
		},
		"no usage, not blocked": {usage: Share{}, fair: cpuMem(0.5, 0.5), demand: cpuMem(1, 1), want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := LocalSatisfaction(tc.usage, tc.fair, tc.demand)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("LocalSatisfaction(%v, %v, %v) mismatch (-want +got):\n%s", tc.usage, tc.fair, tc.demand, diff)
			}
		})
	}
}
