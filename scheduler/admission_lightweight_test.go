package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLightweightOperations follows the operation-limits seed: a vanilla
// operation in a fifo pool with enable_lightweight_operations neither uses
// nor waits for a running slot, still counts toward max_operation_count,
// and is counted in lightweight_running_operation_count on every ancestor.
func TestLightweightOperations(t *testing.T) {
	tree := DefaultTreeConfig()
	pools := []PoolConfig{
		{Name: "parent", MaxRunningOperationCount: admInt(1), MaxOperationCount: admInt(4)},
		{Name: "light", Parent: "parent", Mode: ModeFIFO, EnableLightweightOperations: true, MaxRunningOperationCount: admInt(1)},
		{Name: "fifo", Parent: "parent", Mode: ModeFIFO},
		{Name: "fair", Parent: "parent", EnableLightweightOperations: true},
	}
	a, err := NewAdmission(tree, pools)
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		id      OperationID
		pool    PoolID
		vanilla bool
		want    AdmissionInfo
	}
	steps := []step{
		// Takes the parent's only running slot.
		{id: "heavy", pool: "light", want: AdmissionInfo{State: AdmissionRunning}},
		// Lightweight: runs although light and parent are full.
		{id: "v1", pool: "light", vanilla: true, want: AdmissionInfo{State: AdmissionRunning, Lightweight: true}},
		{id: "v2", pool: "light", vanilla: true, want: AdmissionInfo{State: AdmissionRunning, Lightweight: true}},
		// Vanilla, but the pool is fifo without the switch, or the switch
		// is on a fair_share pool: an ordinary operation that waits.
		{id: "v3", pool: "fifo", vanilla: true, want: AdmissionInfo{State: AdmissionPending, QueuePool: "parent",
			PendingReason: "max_running_operation_count of parent reached (1/1)", QueueRunning: 1, QueueMaxRunning: 1}},
	}
	for _, s := range steps {
		if _, err := a.Admit(s.id, s.pool, AdmitOptions{Vanilla: s.vanilla}); err != nil {
			t.Fatalf("admit %s: %v", s.id, err)
		}
		got, _ := a.Info(s.id)
		if d := cmp.Diff(s.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", s.id, d)
		}
	}
	// Lightweight operations count toward max_operation_count (4 on parent).
	if _, err := a.Admit("v4", "fair", AdmitOptions{Vanilla: true}); err == nil {
		t.Error("a fifth operation under parent (max_operation_count 4) was admitted")
	}
	wantCounts := map[PoolID]PoolCounts{
		"parent": {Operations: 4, Running: 1, LightweightRunning: 2, Pending: 1, MaxOperations: 4, MaxRunning: 1},
		"light":  {Operations: 3, Running: 1, LightweightRunning: 2, MaxOperations: 50, MaxRunning: 1},
		RootID:   {Operations: 4, Running: 1, LightweightRunning: 2, MaxOperations: tree.MaxOperationCount, MaxRunning: tree.MaxRunningOperationCount},
	}
	for _, p := range []PoolID{"parent", "light", RootID} {
		if d := cmp.Diff(wantCounts[p], a.PoolCounts(p)); d != "" {
			t.Errorf("counts of %s (-want +got):\n%s", p, d)
		}
	}
	// A lightweight operation leaving frees no running slot: v3 still waits.
	started, err := a.Remove("v1")
	if err != nil || len(started) != 0 {
		t.Errorf("remove v1: started %v, err %v; want nothing started", started, err)
	}
	// The ordinary one leaving lets v3 run.
	started, err = a.Remove("heavy")
	if d := cmp.Diff([]OperationID{"v3"}, started); err != nil || d != "" {
		t.Errorf("remove heavy: err %v, started (-want +got):\n%s", err, d)
	}
	// Switching the feature off keeps a running lightweight operation
	// lightweight (it started as one) and moving it keeps its kind.
	pools[1].EnableLightweightOperations = false
	if _, err := a.Reconfigure(tree, pools); err != nil {
		t.Fatal(err)
	}
	if got := a.PoolCounts("parent"); got.Running != 1 || got.LightweightRunning != 1 {
		t.Errorf("after reconfigure: running %d lightweight %d, want 1 and 1", got.Running, got.LightweightRunning)
	}
	if _, err := a.Move("v2", "fair"); err != nil {
		t.Fatal(err)
	}
	if got := a.PoolCounts("fair"); got.Running != 0 || got.LightweightRunning != 1 {
		t.Errorf("after move: fair running %d lightweight %d, want 0 and 1", got.Running, got.LightweightRunning)
	}
	if _, err := a.Admit("v5", "light", AdmitOptions{Vanilla: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Info("v5"); got.State != AdmissionPending {
		t.Errorf("with the feature off a vanilla operation is %v, want pending behind v3", got.State)
	}
}
