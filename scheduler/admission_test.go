package scheduler

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func admInt(v int) *int { return &v }

// admStep is one call on an Admission and what it must return.
type admStep struct {
	do    string // "add", "remove" or "reconfigure"
	id    OperationID
	pool  PoolID
	tree  TreeConfig   // reconfigure
	pools []PoolConfig // reconfigure

	wantState   AdmissionState // add
	wantStarted []OperationID  // remove, reconfigure
	wantErr     error          // errors.Is target; nil: no error
	wantLimit   *LimitError    // the typed rejection, when wantErr is ErrTooManyOperations
}

func admAdd(id OperationID, pool PoolID, state AdmissionState) admStep {
	return admStep{do: "add", id: id, pool: pool, wantState: state}
}

func admAddErr(id OperationID, pool PoolID, err error) admStep {
	return admStep{do: "add", id: id, pool: pool, wantErr: err}
}

func admReject(id OperationID, pool PoolID, limitPool string, limit, count int) admStep {
	return admStep{do: "add", id: id, pool: pool, wantErr: ErrTooManyOperations,
		wantLimit: &LimitError{Operation: id, Pool: limitPool, Limit: limit, Count: count}}
}

func admRemove(id OperationID, started ...OperationID) admStep {
	return admStep{do: "remove", id: id, wantStarted: started}
}

func admRemoveErr(id OperationID, err error) admStep {
	return admStep{do: "remove", id: id, wantErr: err}
}

func admReconfigure(tree TreeConfig, pools []PoolConfig, started ...OperationID) admStep {
	return admStep{do: "reconfigure", tree: tree, pools: pools, wantStarted: started}
}

func admReconfigureErr(tree TreeConfig, pools []PoolConfig, err error) admStep {
	return admStep{do: "reconfigure", tree: tree, pools: pools, wantErr: err}
}

func admPending(pool string, reason string, pos, running, maxRunning int) AdmissionInfo {
	return AdmissionInfo{State: AdmissionPending, PendingReason: reason, QueuePosition: pos, QueuePool: pool,
		QueueRunning: running, QueueMaxRunning: maxRunning}
}

var admRunning = AdmissionInfo{State: AdmissionRunning}

// admCounts is Counts' (operations, running) pair.
type admCounts struct{ Ops, Running int }

func TestAdmission(t *testing.T) {
	def := DefaultTreeConfig()
	rootLimits := func(maxOps, maxRunning int) TreeConfig {
		c := DefaultTreeConfig()
		c.MaxOperationCount, c.MaxRunningOperationCount = maxOps, maxRunning
		return c
	}
	// research (running 2, operations 3) with children x and y; x runs one
	// operation at a time.
	research := []PoolConfig{
		{Name: "research", MaxRunningOperationCount: admInt(2), MaxOperationCount: admInt(3)},
		{Name: "x", Parent: "research", MaxRunningOperationCount: admInt(1)},
		{Name: "y", Parent: "research"},
	}
	withResearchRunning := func(n int) []PoolConfig {
		return []PoolConfig{
			{Name: "research", MaxRunningOperationCount: admInt(n)},
			{Name: "x", Parent: "research", MaxRunningOperationCount: admInt(1)},
			{Name: "y", Parent: "research"},
		}
	}
	twoPools := func(a, b int) []PoolConfig {
		return []PoolConfig{
			{Name: "A", MaxRunningOperationCount: admInt(a)},
			{Name: "B", MaxRunningOperationCount: admInt(b)},
		}
	}

	cases := map[string]struct {
		tree        TreeConfig
		pools       []PoolConfig
		steps       []admStep
		wantInfo    map[OperationID]AdmissionInfo // every registered operation
		wantCounts  map[PoolID]admCounts
		wantRunning []OperationID
	}{
		// §12 integration: per-pool limit 1 ⇒ the second op in the same pool
		// is pending, an op in another pool runs.
		"per-pool running limit 1": {
			tree:  def,
			pools: twoPools(1, 1),
			steps: []admStep{
				admAdd("a1", "A", AdmissionRunning),
				admAdd("a2", "A", AdmissionPending),
				admAdd("b1", "B", AdmissionRunning),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"a1": admRunning,
				"a2": admPending("A", "max_running_operation_count of A reached (1/1)", 0, 1, 1),
				"b1": admRunning,
			},
			wantCounts:  map[PoolID]admCounts{"A": {2, 1}, "B": {1, 1}, "": {3, 2}, RootID: {3, 2}},
			wantRunning: []OperationID{"a1", "b1"},
		},
		"ancestor running limit blocks ops of two children; they queue on the ancestor": {
			tree:  def,
			pools: withResearchRunning(2),
			steps: []admStep{
				admAdd("y1", "y", AdmissionRunning),
				admAdd("y2", "y", AdmissionRunning),
				admAdd("x1", "x", AdmissionPending),
				admAdd("y3", "y", AdmissionPending),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"y1": admRunning,
				"y2": admRunning,
				"x1": admPending("research", "max_running_operation_count of research reached (2/2)", 0, 2, 2),
				"y3": admPending("research", "max_running_operation_count of research reached (2/2)", 1, 2, 2),
			},
			wantCounts:  map[PoolID]admCounts{"research": {4, 2}, "x": {1, 0}, "y": {3, 2}, RootID: {4, 2}},
			wantRunning: []OperationID{"y1", "y2"},
		},
		"the first blocking pool from the operation upwards holds the queue": {
			// x is full (1/1) and so is research (2/2): x2 queues on x, y2
			// (whose own pool has room) on research.
			tree:  def,
			pools: withResearchRunning(2),
			steps: []admStep{
				admAdd("x1", "x", AdmissionRunning),
				admAdd("y1", "y", AdmissionRunning),
				admAdd("x2", "x", AdmissionPending),
				admAdd("y2", "y", AdmissionPending),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"x1": admRunning,
				"y1": admRunning,
				"x2": admPending("x", "max_running_operation_count of x reached (1/1)", 0, 1, 1),
				"y2": admPending("research", "max_running_operation_count of research reached (2/2)", 0, 2, 2),
			},
			wantCounts:  map[PoolID]admCounts{"research": {4, 2}, "x": {2, 1}, "y": {2, 1}},
			wantRunning: []OperationID{"x1", "y1"},
		},
		// §12 integration: research max_operation_count 3 ⇒ the 4th op in
		// research or its subpool is rejected.
		"max_operation_count of research rejects a 4th op in research": {
			tree:  def,
			pools: research,
			steps: []admStep{
				admAdd("r1", "research", AdmissionRunning),
				admAdd("r2", "y", AdmissionRunning),
				admAdd("r3", "research", AdmissionPending),
				admReject("r4", "research", "research", 3, 3),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"r1": admRunning,
				"r2": admRunning,
				"r3": admPending("research", "max_running_operation_count of research reached (2/2)", 0, 2, 2),
			},
			wantCounts:  map[PoolID]admCounts{"research": {3, 2}, "y": {1, 1}, "x": {0, 0}, RootID: {3, 2}},
			wantRunning: []OperationID{"r1", "r2"},
		},
		"max_operation_count of research rejects a 4th op in its subpool": {
			tree:  def,
			pools: research,
			steps: []admStep{
				admAdd("r1", "research", AdmissionRunning),
				admAdd("r2", "research", AdmissionRunning),
				admAdd("r3", "y", AdmissionPending),
				admReject("r4", "x", "research", 3, 3),
				admReject("r5", "y", "research", 3, 3),
				admAdd("other", "", AdmissionRunning),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"r1":    admRunning,
				"r2":    admRunning,
				"r3":    admPending("research", "max_running_operation_count of research reached (2/2)", 0, 2, 2),
				"other": admRunning,
			},
			wantCounts:  map[PoolID]admCounts{"research": {3, 2}, "x": {0, 0}, "y": {1, 0}, RootID: {4, 3}},
			wantRunning: []OperationID{"r1", "r2", "other"},
		},
		"max_operation_count of the pool itself": {
			tree: def,
			pools: []PoolConfig{
				{Name: "research", MaxOperationCount: admInt(10)},
				{Name: "x", Parent: "research", MaxRunningOperationCount: admInt(1), MaxOperationCount: admInt(1)},
			},
			steps: []admStep{
				admAdd("x1", "x", AdmissionRunning),
				admReject("x2", "x", "x", 1, 1),
				admAdd("r1", "research", AdmissionRunning),
			},
			wantInfo:    map[OperationID]AdmissionInfo{"x1": admRunning, "r1": admRunning},
			wantCounts:  map[PoolID]admCounts{"research": {2, 2}, "x": {1, 1}},
			wantRunning: []OperationID{"x1", "r1"},
		},
		"pending operations count toward max_operation_count": {
			tree: def,
			pools: []PoolConfig{
				{Name: "P", MaxRunningOperationCount: admInt(1), MaxOperationCount: admInt(3)},
			},
			steps: []admStep{
				admAdd("p1", "P", AdmissionRunning),
				admAdd("p2", "P", AdmissionPending),
				admAdd("p3", "P", AdmissionPending),
				admReject("p4", "P", "P", 3, 3),
				// Dropping a pending operation frees an operation slot.
				admRemove("p3"),
				admAdd("p4", "P", AdmissionPending),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"p1": admRunning,
				"p2": admPending("P", "max_running_operation_count of P reached (1/1)", 0, 1, 1),
				"p4": admPending("P", "max_running_operation_count of P reached (1/1)", 1, 1, 1),
			},
			wantCounts:  map[PoolID]admCounts{"P": {3, 1}},
			wantRunning: []OperationID{"p1"},
		},
		"tree per-pool defaults: 8 running, 50 operations": {
			tree:  def,
			pools: []PoolConfig{{Name: "P"}},
			steps: func() []admStep {
				var s []admStep
				for i := range 50 {
					state := AdmissionRunning
					if i >= 8 {
						state = AdmissionPending
					}
					s = append(s, admAdd(OperationID(rune('a'+i/26))+OperationID(rune('a'+i%26)), "P", state))
				}
				return append(s, admReject("last", "P", "P", 50, 50))
			}(),
			wantInfo: func() map[OperationID]AdmissionInfo {
				m := map[OperationID]AdmissionInfo{}
				for i := range 50 {
					id := OperationID(rune('a'+i/26)) + OperationID(rune('a'+i%26))
					if i < 8 {
						m[id] = admRunning
					} else {
						m[id] = admPending("P", "max_running_operation_count of P reached (8/8)", i-8, 8, 8)
					}
				}
				return m
			}(),
			wantCounts: map[PoolID]admCounts{"P": {50, 8}, RootID: {50, 8}},
			wantRunning: []OperationID{
				"aa", "ab", "ac", "ad", "ae", "af", "ag", "ah",
			},
		},
		"root limits come from the tree": {
			tree:  rootLimits(3, 2),
			pools: twoPools(5, 5),
			steps: []admStep{
				admAdd("a1", "A", AdmissionRunning),
				admAdd("b1", "B", AdmissionRunning),
				admAdd("r1", "", AdmissionPending),
				admReject("b2", "B", RootID, 3, 3),
				admRemove("a1", "r1"),
			},
			wantInfo:    map[OperationID]AdmissionInfo{"b1": admRunning, "r1": admRunning},
			wantCounts:  map[PoolID]admCounts{"A": {0, 0}, "B": {1, 1}, RootID: {2, 2}},
			wantRunning: []OperationID{"b1", "r1"},
		},
		"root running limit queues on the root": {
			tree:  rootLimits(50000, 2),
			pools: twoPools(5, 5),
			steps: []admStep{
				admAdd("a1", "A", AdmissionRunning),
				admAdd("b1", "B", AdmissionRunning),
				admAdd("a2", "A", AdmissionPending),
				admAdd("b2", "B", AdmissionPending),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"a1": admRunning,
				"b1": admRunning,
				"a2": admPending(RootID, "max_running_operation_count of <Root> reached (2/2)", 0, 2, 2),
				"b2": admPending(RootID, "max_running_operation_count of <Root> reached (2/2)", 1, 2, 2),
			},
			wantCounts:  map[PoolID]admCounts{"A": {2, 1}, "B": {2, 1}, RootID: {4, 2}},
			wantRunning: []OperationID{"a1", "b1"},
		},
		"removing a running op starts the first pending op of its pool (FIFO)": {
			tree:  def,
			pools: twoPools(1, 1),
			steps: []admStep{
				admAdd("a1", "A", AdmissionRunning),
				admAdd("a2", "A", AdmissionPending),
				admAdd("a3", "A", AdmissionPending),
				admAdd("a4", "A", AdmissionPending),
				admRemove("a1", "a2"),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"a2": admRunning,
				"a3": admPending("A", "max_running_operation_count of A reached (1/1)", 0, 1, 1),
				"a4": admPending("A", "max_running_operation_count of A reached (1/1)", 1, 1, 1),
			},
			wantCounts:  map[PoolID]admCounts{"A": {3, 1}, RootID: {3, 1}},
			wantRunning: []OperationID{"a2"},
		},
		"removal serves the ancestor's queue when the pool's own is empty": {
			tree:  def,
			pools: withResearchRunning(2),
			steps: []admStep{
				admAdd("x1", "x", AdmissionRunning),
				admAdd("y1", "y", AdmissionRunning),
				admAdd("y2", "y", AdmissionPending),
				admAdd("y3", "y", AdmissionPending),
				admRemove("x1", "y2"),
				admRemove("y1", "y3"),
			},
			wantInfo:    map[OperationID]AdmissionInfo{"y2": admRunning, "y3": admRunning},
			wantCounts:  map[PoolID]admCounts{"research": {2, 2}, "x": {0, 0}, "y": {2, 2}},
			wantRunning: []OperationID{"y2", "y3"},
		},
		"removal serves the pool's own queue before its ancestors'": {
			// b2 waits on the root since before a2 waits on A; a1 leaving
			// frees a slot in A and in the root, and A is served first.
			tree:  rootLimits(50000, 2),
			pools: twoPools(1, 5),
			steps: []admStep{
				admAdd("a1", "A", AdmissionRunning),
				admAdd("b1", "B", AdmissionRunning),
				admAdd("b2", "B", AdmissionPending),
				admAdd("a2", "A", AdmissionPending),
				admRemove("a1", "a2"),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"b1": admRunning,
				"a2": admRunning,
				"b2": admPending(RootID, "max_running_operation_count of <Root> reached (2/2)", 0, 2, 2),
			},
			wantCounts:  map[PoolID]admCounts{"A": {1, 1}, "B": {2, 1}, RootID: {3, 2}},
			wantRunning: []OperationID{"b1", "a2"},
		},
		"lowering a limit keeps running ops; a freed op re-queues on the pool that now blocks it": {
			tree:  def,
			pools: withResearchRunning(3),
			steps: []admStep{
				admAdd("x1", "x", AdmissionRunning),
				admAdd("y1", "y", AdmissionRunning),
				admAdd("y2", "y", AdmissionRunning),
				admAdd("x2", "x", AdmissionPending),
				// research 3 → 2: nothing stops, nothing starts.
				admReconfigure(def, withResearchRunning(2)),
				// x has room now, research (2/2) does not: x2 moves there.
				admRemove("x1"),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"y1": admRunning,
				"y2": admRunning,
				"x2": admPending("research", "max_running_operation_count of research reached (2/2)", 0, 2, 2),
			},
			wantCounts:  map[PoolID]admCounts{"research": {3, 2}, "x": {1, 0}, "y": {2, 2}},
			wantRunning: []OperationID{"y1", "y2"},
		},
		"lowering a limit below the running count": {
			tree:  def,
			pools: withResearchRunning(3),
			steps: []admStep{
				admAdd("y1", "y", AdmissionRunning),
				admAdd("y2", "y", AdmissionRunning),
				admAdd("y3", "y", AdmissionRunning),
				admAdd("y4", "y", AdmissionPending),
				admReconfigure(def, withResearchRunning(1)),
				// 2 of 1 still running after y1 leaves: y4 keeps waiting.
				admRemove("y1"),
				admRemove("y2"),
				admRemove("y3", "y4"),
			},
			wantInfo:    map[OperationID]AdmissionInfo{"y4": admRunning},
			wantCounts:  map[PoolID]admCounts{"research": {1, 1}, "y": {1, 1}},
			wantRunning: []OperationID{"y4"},
		},
		"removing a pending op drops it and shifts later queue positions": {
			tree:  def,
			pools: twoPools(1, 1),
			steps: []admStep{
				admAdd("a1", "A", AdmissionRunning),
				admAdd("a2", "A", AdmissionPending),
				admAdd("a3", "A", AdmissionPending),
				admAdd("a4", "A", AdmissionPending),
				admRemove("a2"),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"a1": admRunning,
				"a3": admPending("A", "max_running_operation_count of A reached (1/1)", 0, 1, 1),
				"a4": admPending("A", "max_running_operation_count of A reached (1/1)", 1, 1, 1),
			},
			wantCounts:  map[PoolID]admCounts{"A": {3, 1}, RootID: {3, 1}},
			wantRunning: []OperationID{"a1"},
		},
		"raising limits starts pending ops in registration order": {
			tree:  def,
			pools: twoPools(1, 1),
			steps: []admStep{
				admAdd("a1", "A", AdmissionRunning),
				admAdd("b1", "B", AdmissionRunning),
				admAdd("b2", "B", AdmissionPending),
				admAdd("a2", "A", AdmissionPending),
				admAdd("a3", "A", AdmissionPending),
				admAdd("b3", "B", AdmissionPending),
				admReconfigure(def, twoPools(3, 2), "b2", "a2", "a3"),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"a1": admRunning,
				"b1": admRunning,
				"b2": admRunning,
				"a2": admRunning,
				"a3": admRunning,
				"b3": admPending("B", "max_running_operation_count of B reached (2/2)", 0, 2, 2),
			},
			wantCounts:  map[PoolID]admCounts{"A": {3, 3}, "B": {3, 2}, RootID: {6, 5}},
			wantRunning: []OperationID{"a1", "b1", "b2", "a2", "a3"},
		},
		"raising the root limit through the tree config": {
			tree:  rootLimits(100, 1),
			pools: twoPools(5, 5),
			steps: []admStep{
				admAdd("a1", "A", AdmissionRunning),
				admAdd("b1", "B", AdmissionPending),
				admAdd("a2", "A", AdmissionPending),
				admReconfigure(rootLimits(100, 2), twoPools(5, 5), "b1"),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"a1": admRunning,
				"b1": admRunning,
				"a2": admPending(RootID, "max_running_operation_count of <Root> reached (2/2)", 0, 2, 2),
			},
			wantCounts:  map[PoolID]admCounts{"A": {2, 1}, "B": {1, 1}, RootID: {3, 2}},
			wantRunning: []OperationID{"a1", "b1"},
		},
		"raising the tree's per-pool default starts ops of pools without their own limit": {
			tree: func() TreeConfig {
				c := DefaultTreeConfig()
				c.MaxRunningOperationCountPerPool = 1
				return c
			}(),
			pools: []PoolConfig{{Name: "A"}, {Name: "B", MaxRunningOperationCount: admInt(1)}},
			steps: []admStep{
				admAdd("a1", "A", AdmissionRunning),
				admAdd("a2", "A", AdmissionPending),
				admAdd("b1", "B", AdmissionRunning),
				admAdd("b2", "B", AdmissionPending),
				admReconfigure(def, []PoolConfig{{Name: "A"}, {Name: "B", MaxRunningOperationCount: admInt(1)}}, "a2"),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"a1": admRunning,
				"a2": admRunning,
				"b1": admRunning,
				"b2": admPending("B", "max_running_operation_count of B reached (1/1)", 0, 1, 1),
			},
			wantCounts:  map[PoolID]admCounts{"A": {2, 2}, "B": {2, 1}},
			wantRunning: []OperationID{"a1", "a2", "b1"},
		},
		"lowering max_operation_count keeps registered ops and rejects new ones": {
			tree:  def,
			pools: research,
			steps: []admStep{
				admAdd("r1", "research", AdmissionRunning),
				admAdd("r2", "x", AdmissionRunning),
				admAdd("r3", "y", AdmissionPending),
				admReconfigure(def, []PoolConfig{
					{Name: "research", MaxRunningOperationCount: admInt(1), MaxOperationCount: admInt(1)},
					{Name: "x", Parent: "research", MaxRunningOperationCount: admInt(1)},
					{Name: "y", Parent: "research"},
				}),
				admReject("r4", "y", "research", 1, 3),
				admRemove("r1"),
				admReject("r5", "research", "research", 1, 2),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"r2": admRunning,
				"r3": admPending("research", "max_running_operation_count of research reached (1/1)", 0, 1, 1),
			},
			wantCounts:  map[PoolID]admCounts{"research": {2, 1}, "x": {1, 1}, "y": {1, 0}},
			wantRunning: []OperationID{"r2"},
		},
		"reconfigure re-queues a pending op on the pool that now blocks it": {
			// y has room for one: raising research starts y2, and y3 now waits
			// on y instead of research.
			tree: def,
			pools: []PoolConfig{
				{Name: "research", MaxRunningOperationCount: admInt(1)},
				{Name: "y", Parent: "research", MaxRunningOperationCount: admInt(2)},
			},
			steps: []admStep{
				admAdd("y1", "y", AdmissionRunning),
				admAdd("y2", "y", AdmissionPending),
				admAdd("y3", "y", AdmissionPending),
				admReconfigure(def, []PoolConfig{
					{Name: "research", MaxRunningOperationCount: admInt(5)},
					{Name: "y", Parent: "research", MaxRunningOperationCount: admInt(2)},
				}, "y2"),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"y1": admRunning,
				"y2": admRunning,
				"y3": admPending("y", "max_running_operation_count of y reached (2/2)", 0, 2, 2),
			},
			wantCounts:  map[PoolID]admCounts{"research": {3, 2}, "y": {3, 2}},
			wantRunning: []OperationID{"y1", "y2"},
		},
		"moving a pool out of a full ancestor starts its pending op": {
			tree:  def,
			pools: withResearchRunning(1),
			steps: []admStep{
				admAdd("y1", "y", AdmissionRunning),
				admAdd("x1", "x", AdmissionPending),
				admReconfigure(def, []PoolConfig{
					{Name: "research", MaxRunningOperationCount: admInt(1)},
					{Name: "x", MaxRunningOperationCount: admInt(1)},
					{Name: "y", Parent: "research"},
				}, "x1"),
			},
			wantInfo:    map[OperationID]AdmissionInfo{"y1": admRunning, "x1": admRunning},
			wantCounts:  map[PoolID]admCounts{"research": {1, 1}, "x": {1, 1}, "y": {1, 1}, RootID: {2, 2}},
			wantRunning: []OperationID{"y1", "x1"},
		},
		"reconfigure that would remove a pool holding operations changes nothing": {
			tree:  def,
			pools: twoPools(1, 1),
			steps: []admStep{
				admAdd("a1", "A", AdmissionRunning),
				admAdd("a2", "A", AdmissionPending),
				admAdd("b1", "B", AdmissionRunning),
				// Drops A and raises B: rejected as a whole.
				admReconfigureErr(def, []PoolConfig{{Name: "B", MaxRunningOperationCount: admInt(5)}}, ErrInvalidTree),
				// The old configuration is still in force.
				admAdd("a3", "A", AdmissionPending),
				admAdd("b2", "B", AdmissionPending),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"a1": admRunning,
				"a2": admPending("A", "max_running_operation_count of A reached (1/1)", 0, 1, 1),
				"a3": admPending("A", "max_running_operation_count of A reached (1/1)", 1, 1, 1),
				"b1": admRunning,
				"b2": admPending("B", "max_running_operation_count of B reached (1/1)", 0, 1, 1),
			},
			wantCounts:  map[PoolID]admCounts{"A": {3, 1}, "B": {2, 1}, RootID: {5, 2}},
			wantRunning: []OperationID{"a1", "b1"},
		},
		"reconfigure removing an empty pool is fine": {
			tree:  def,
			pools: twoPools(1, 1),
			steps: []admStep{
				admAdd("a1", "A", AdmissionRunning),
				admReconfigure(def, []PoolConfig{{Name: "A", MaxRunningOperationCount: admInt(1)}}),
				admAddErr("b1", "B", ErrInvalidOperation),
			},
			wantInfo:    map[OperationID]AdmissionInfo{"a1": admRunning},
			wantCounts:  map[PoolID]admCounts{"A": {1, 1}, "B": {0, 0}, RootID: {1, 1}},
			wantRunning: []OperationID{"a1"},
		},
		"invalid reconfigure changes nothing": {
			tree:  def,
			pools: twoPools(1, 1),
			steps: []admStep{
				admAdd("a1", "A", AdmissionRunning),
				admAdd("a2", "A", AdmissionPending),
				admReconfigureErr(def, []PoolConfig{
					{Name: "A", MaxRunningOperationCount: admInt(5)},
					{Name: "B", Parent: "missing"},
				}, ErrInvalidTree),
				admReconfigureErr(def, []PoolConfig{
					{Name: "A", MaxRunningOperationCount: admInt(5), MaxOperationCount: admInt(2)},
				}, ErrInvalidConfig),
			},
			wantInfo: map[OperationID]AdmissionInfo{
				"a1": admRunning,
				"a2": admPending("A", "max_running_operation_count of A reached (1/1)", 0, 1, 1),
			},
			wantCounts:  map[PoolID]admCounts{"A": {2, 1}, "B": {0, 0}},
			wantRunning: []OperationID{"a1"},
		},
		"duplicate and unknown ids": {
			tree:  def,
			pools: twoPools(1, 1),
			steps: []admStep{
				admAdd("a1", "A", AdmissionRunning),
				admAddErr("a1", "A", ErrDuplicateOperation),
				admAddErr("a1", "B", ErrDuplicateOperation),
				admAddErr("n1", "nope", ErrInvalidOperation),
				admRemoveErr("ghost", ErrUnknownOperation),
				admRemove("a1"),
				admRemoveErr("a1", ErrUnknownOperation),
				// A removed id can be registered again.
				admAdd("a1", "B", AdmissionRunning),
			},
			wantInfo:    map[OperationID]AdmissionInfo{"a1": admRunning},
			wantCounts:  map[PoolID]admCounts{"A": {0, 0}, "B": {1, 1}, RootID: {1, 1}, "nope": {0, 0}},
			wantRunning: []OperationID{"a1"},
		},
	}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, err := NewAdmission(tc.tree, tc.pools)
			if err != nil {
				t.Fatalf("NewAdmission: %v", err)
			}
			seen := map[OperationID]bool{"ghost": true}
			for i, s := range tc.steps {
				var (
					state   AdmissionState
					started []OperationID
				)
				switch s.do {
				case "add":
					seen[s.id] = true
					state, err = a.Add(s.id, s.pool)
				case "remove":
					started, err = a.Remove(s.id)
				case "reconfigure":
					started, err = a.Reconfigure(s.tree, s.pools)
				default:
					t.Fatalf("step %d: unknown action %q", i, s.do)
				}
				if s.wantErr != nil {
					if !errors.Is(err, s.wantErr) {
						t.Fatalf("step %d %s %s: err = %v, want errors.Is %v", i, s.do, s.id, err, s.wantErr)
					}
				} else if err != nil {
					t.Fatalf("step %d %s %s: unexpected error %v", i, s.do, s.id, err)
				}
				if s.wantLimit != nil {
					var le *LimitError
					if !errors.As(err, &le) {
						t.Fatalf("step %d add %s: err %v (%T) is not a *LimitError", i, s.id, err, err)
					}
					if diff := cmp.Diff(s.wantLimit, le); diff != "" {
						t.Errorf("step %d add %s: LimitError mismatch (-want +got):\n%s", i, s.id, diff)
					}
				}
				if err != nil {
					continue
				}
				if s.do == "add" && state != s.wantState {
					t.Errorf("step %d add %s: state = %v, want %v", i, s.id, state, s.wantState)
				}
				if diff := cmp.Diff(s.wantStarted, started, cmpopts.EquateEmpty()); s.do != "add" && diff != "" {
					t.Errorf("step %d %s %s: started mismatch (-want +got):\n%s", i, s.do, s.id, diff)
				}
			}

			gotInfo := map[OperationID]AdmissionInfo{}
			for id := range seen {
				if info, ok := a.Info(id); ok {
					gotInfo[id] = info
				} else if info != (AdmissionInfo{}) {
					t.Errorf("Info(%s) = %+v, false; want the zero value with false", id, info)
				}
			}
			if diff := cmp.Diff(tc.wantInfo, gotInfo); diff != "" {
				t.Errorf("Info mismatch (-want +got):\n%s", diff)
			}
			checkPendingQueues(t, a, gotInfo)
			gotCounts := map[PoolID]admCounts{}
			for p := range tc.wantCounts {
				ops, running := a.Counts(p)
				gotCounts[p] = admCounts{ops, running}
			}
			if diff := cmp.Diff(tc.wantCounts, gotCounts); diff != "" {
				t.Errorf("Counts mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRunning, a.Running(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Running mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAdmissionLimitError(t *testing.T) {
	a, err := NewAdmission(DefaultTreeConfig(), []PoolConfig{{Name: "research", MaxRunningOperationCount: admInt(1), MaxOperationCount: admInt(1)}})
	if err != nil {
		t.Fatalf("NewAdmission: %v", err)
	}
	if _, err := a.Add("r1", "research"); err != nil {
		t.Fatalf("Add r1: %v", err)
	}
	_, err = a.Add("r2", "research")
	var le *LimitError
	if !errors.As(err, &le) || !errors.Is(err, ErrTooManyOperations) {
		t.Fatalf("Add r2: err = %v (%T), want a *LimitError wrapping ErrTooManyOperations", err, err)
	}
	if got, want := err.Error(), `operation "r2" rejected: max_operation_count of research reached (1/1)`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// TestAdmissionRevivedOverTheLimit: an operation admitted again after a
// restart is not refused by max_operation_count (lowered meanwhile); it
// counts, so a new operation is refused after it, and it waits for a
// running slot like any other.
func TestAdmissionRevivedOverTheLimit(t *testing.T) {
	a, err := NewAdmission(DefaultTreeConfig(), []PoolConfig{{Name: "research", MaxRunningOperationCount: admInt(1), MaxOperationCount: admInt(1)}})
	if err != nil {
		t.Fatalf("NewAdmission: %v", err)
	}
	var got []AdmissionState
	for _, id := range []OperationID{"r1", "r2"} {
		st, err := a.Admit(id, "research", AdmitOptions{Revived: true})
		if err != nil {
			t.Fatalf("Admit %s revived: %v", id, err)
		}
		got = append(got, st)
	}
	if diff := cmp.Diff([]AdmissionState{AdmissionRunning, AdmissionPending}, got); diff != "" {
		t.Errorf("revived states (-want +got):\n%s", diff)
	}
	var le *LimitError
	if _, err := a.Add("r3", "research"); !errors.As(err, &le) || le.Count != 2 {
		t.Errorf("Add r3 after two revived: err = %v, want a *LimitError counting 2 of 1", err)
	}
}

func TestNewAdmissionInvalid(t *testing.T) {
	badTree := DefaultTreeConfig()
	badTree.MaxRunningOperationCount = badTree.MaxOperationCount + 1
	cases := map[string]struct {
		tree    TreeConfig
		pools   []PoolConfig
		wantErr error
	}{
		"running above operations on the tree": {tree: badTree, wantErr: ErrInvalidConfig},
		"negative pool limit": {
			tree:    DefaultTreeConfig(),
			pools:   []PoolConfig{{Name: "A", MaxRunningOperationCount: admInt(-1)}},
			wantErr: ErrInvalidConfig,
		},
		"duplicate pool": {
			tree:    DefaultTreeConfig(),
			pools:   []PoolConfig{{Name: "A"}, {Name: "A"}},
			wantErr: ErrInvalidTree,
		},
		"missing parent": {
			tree:    DefaultTreeConfig(),
			pools:   []PoolConfig{{Name: "A", Parent: "B"}},
			wantErr: ErrInvalidTree,
		},
		"cycle": {
			tree:    DefaultTreeConfig(),
			pools:   []PoolConfig{{Name: "A", Parent: "B"}, {Name: "B", Parent: "A"}},
			wantErr: ErrInvalidTree,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, err := NewAdmission(tc.tree, tc.pools)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("NewAdmission: err = %v, want errors.Is %v", err, tc.wantErr)
			}
			if a != nil {
				t.Errorf("NewAdmission returned %v with an error, want nil", a)
			}
		})
	}
}

// TestAdmissionEmptyPoolIsRoot: Admission (like the engine) treats an
// operation whose pool is "" as an operation of the root, whatever
// DefaultParentPool says; resolving a submission without a pool to a user's
// ephemeral pool under default_parent_pool is the running scheduler's job
// (see the TreeConfig.DefaultParentPool doc).
func TestAdmissionEmptyPoolIsRoot(t *testing.T) {
	cfg := DefaultTreeConfig()
	cfg.DefaultParentPool = "research"
	cfg.MaxRunningOperationCount = 1
	a, err := NewAdmission(cfg, []PoolConfig{{Name: "research", MaxRunningOperationCount: admInt(1)}})
	if err != nil {
		t.Fatalf("NewAdmission: %v", err)
	}
	for _, id := range []OperationID{"a", "b"} {
		if _, err := a.Add(id, ""); err != nil {
			t.Fatalf("Add %s: %v", id, err)
		}
	}
	got, _ := a.Info("b")
	want := admPending(RootID, "max_running_operation_count of <Root> reached (1/1)", 0, 1, 1)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Info(b) mismatch (-want +got):\n%s", diff)
	}
	if ops, running := a.Counts("research"); ops != 0 || running != 0 {
		t.Errorf("research counts = %d/%d, want 0/0", ops, running)
	}
}

// Removing an operation leaves its registration in place until the removed
// ones are half of them (see Admission.seq): the order of the live ones
// must not change, before or after the list is compacted, and an
// operation registered again after its removal goes to the end. Running
// and the retries after a reconfiguration follow that order.
func TestAdmissionRegistrationOrderSurvivesRemovals(t *testing.T) {
	cfg := DefaultTreeConfig()
	pools := []PoolConfig{{Name: "p", MaxRunningOperationCount: admInt(100)}}
	a, err := NewAdmission(cfg, pools)
	if err != nil {
		t.Fatalf("NewAdmission: %v", err)
	}
	var want []OperationID
	add := func(id OperationID) {
		t.Helper()
		if _, err := a.Add(id, "p"); err != nil {
			t.Fatalf("Add %s: %v", id, err)
		}
		want = append(want, id)
	}
	remove := func(id OperationID) {
		t.Helper()
		if _, err := a.Remove(id); err != nil {
			t.Fatalf("Remove %s: %v", id, err)
		}
		want = slices.DeleteFunc(want, func(x OperationID) bool { return x == id })
	}
	for i := range 10 {
		add(OperationID(rune('a' + i)))
	}
	check := func(when string) {
		t.Helper()
		if diff := cmp.Diff(want, a.Running()); diff != "" {
			t.Errorf("%s: Running (-want +got):\n%s", when, diff)
		}
	}
	remove("c")
	add("c") // registered again: now last
	remove("a")
	check("removals kept in place")
	for _, id := range []OperationID{"b", "d", "e", "f"} {
		remove(id)
	}
	if a.dead != 0 {
		t.Errorf("%d removed entries after six removals of eleven registrations, want the list compacted", a.dead)
	}
	check("after compaction")
	add("k")
	remove("h")
	check("after more")

	// A limit at the running count holds new operations; raising it
	// starts them in registration order.
	pools[0].MaxRunningOperationCount = admInt(len(want))
	if _, err := a.Reconfigure(cfg, pools); err != nil {
		t.Fatalf("Reconfigure: %v", err)
	}
	for _, id := range []OperationID{"x", "y"} {
		if st, err := a.Add(id, "p"); err != nil || st != AdmissionPending {
			t.Fatalf("Add %s = %v, %v; want pending", id, st, err)
		}
	}
	pools[0].MaxRunningOperationCount = admInt(100)
	started, err := a.Reconfigure(cfg, pools)
	if err != nil {
		t.Fatalf("Reconfigure: %v", err)
	}
	if diff := cmp.Diff([]OperationID{"x", "y"}, started); diff != "" {
		t.Errorf("started on the raised limit (-want +got):\n%s", diff)
	}
	want = append(want, "x", "y")
	check("after the raised limit")
}

// checkPendingQueues checks that PendingQueues lists exactly the pending
// operations of infos (every registered operation's Info), each once, at
// the queue and position Info gives, with Info's reason and counts.
func checkPendingQueues(t *testing.T, a *Admission, infos map[OperationID]AdmissionInfo) {
	t.Helper()
	want := map[OperationID]AdmissionInfo{}
	for id, info := range infos {
		if info.State == AdmissionPending {
			want[id] = info
		}
	}
	got := map[OperationID]AdmissionInfo{}
	var pools []string
	for q := range a.PendingQueues() {
		pools = append(pools, q.Pool)
		for pos, id := range q.Operations {
			if _, dup := got[id]; dup {
				t.Errorf("PendingQueues lists %s twice", id)
			}
			got[id] = q.Info(pos)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PendingQueues disagrees with Info (-Info +PendingQueues):\n%s", diff)
	}
	// In configuration order, root first: each pool once.
	var order []string
	for _, name := range a.order {
		if slices.Contains(pools, name) {
			order = append(order, name)
		}
	}
	if diff := cmp.Diff(order, pools); diff != "" {
		t.Errorf("PendingQueues order (-configuration +got):\n%s", diff)
	}
}

// TestPendingQueuesFollowRandomChanges checks PendingQueues against Info
// after every step of seeded random sequences of admissions, removals and
// limit changes on a small tree with tight running limits.
func TestPendingQueuesFollowRandomChanges(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		cfg := DefaultTreeConfig()
		cfg.MaxRunningOperationCount = 6
		pools := []PoolConfig{
			{Name: "a", MaxRunningOperationCount: admInt(3)},
			{Name: "a1", Parent: "a", MaxRunningOperationCount: admInt(1)},
			{Name: "a2", Parent: "a", MaxRunningOperationCount: admInt(2)},
			{Name: "b", MaxRunningOperationCount: admInt(2)},
			{Name: "c"},
		}
		a, err := NewAdmission(cfg, pools)
		if err != nil {
			t.Fatal(err)
		}
		var live []OperationID
		next := 0
		for step := range 300 {
			switch k := rng.IntN(10); {
			case k < 5 || len(live) == 0:
				id := OperationID(fmt.Sprintf("op%d", next))
				next++
				if _, err := a.Add(id, pools[rng.IntN(len(pools))].Name); err != nil {
					t.Fatalf("seed %d step %d: Add: %v", seed, step, err)
				}
				live = append(live, id)
			case k < 9:
				i := rng.IntN(len(live))
				if _, err := a.Remove(live[i]); err != nil {
					t.Fatalf("seed %d step %d: Remove: %v", seed, step, err)
				}
				live = slices.Delete(live, i, i+1)
			default:
				p := &pools[rng.IntN(len(pools))]
				p.MaxRunningOperationCount = admInt(1 + rng.IntN(3))
				if _, err := a.Reconfigure(cfg, pools); err != nil {
					t.Fatalf("seed %d step %d: Reconfigure: %v", seed, step, err)
				}
			}
			infos := map[OperationID]AdmissionInfo{}
			for _, id := range live {
				infos[id], _ = a.Info(id)
			}
			checkPendingQueues(t, a, infos)
			if t.Failed() {
				t.Fatalf("seed %d: failed at step %d", seed, step)
			}
		}
	}
}
