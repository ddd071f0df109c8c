package scheduler

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAdmissionMove(t *testing.T) {
	cfg := DefaultTreeConfig()
	pools := []PoolConfig{
		{Name: "a", MaxRunningOperationCount: admInt(1), MaxOperationCount: admInt(2)},
		{Name: "b", MaxRunningOperationCount: admInt(1), MaxOperationCount: admInt(2)},
		{Name: "b1", Parent: "b"},
	}
	type counts struct{ Ops, Running int }
	tests := []struct {
		name        string
		setup       [][2]string // (id, pool) added in order
		move        [2]string
		wantStarted []OperationID
		wantErr     error
		wantInfo    map[OperationID]AdmissionInfo
		wantCounts  map[PoolID]counts
	}{
		{
			name:        "running op leaves a pool: the pool's queue starts",
			setup:       [][2]string{{"x", "a"}, {"y", "a"}},
			move:        [2]string{"x", ""},
			wantStarted: []OperationID{"y"},
			wantInfo:    map[OperationID]AdmissionInfo{"x": admRunning, "y": admRunning},
			wantCounts:  map[PoolID]counts{"a": {1, 1}, "": {2, 2}},
		},
		{
			name:       "running op keeps running in a full pool",
			setup:      [][2]string{{"x", "a"}, {"z", "b"}},
			move:       [2]string{"x", "b1"},
			wantInfo:   map[OperationID]AdmissionInfo{"x": admRunning, "z": admRunning},
			wantCounts: map[PoolID]counts{"a": {0, 0}, "b": {2, 2}, "b1": {1, 1}},
		},
		{
			name:        "pending op moves to a pool with a free slot and starts",
			setup:       [][2]string{{"x", "a"}, {"y", "a"}},
			move:        [2]string{"y", "b"},
			wantStarted: []OperationID{"y"},
			wantInfo:    map[OperationID]AdmissionInfo{"x": admRunning, "y": admRunning},
			wantCounts:  map[PoolID]counts{"a": {1, 1}, "b": {1, 1}},
		},
		{
			name:       "pending op moves into another full pool and queues there",
			setup:      [][2]string{{"x", "a"}, {"y", "a"}, {"z", "b"}},
			move:       [2]string{"y", "b"},
			wantInfo:   map[OperationID]AdmissionInfo{"y": admPending("b", "max_running_operation_count of b reached (1/1)", 0, 1, 1)},
			wantCounts: map[PoolID]counts{"a": {1, 1}, "b": {2, 1}},
		},
		{
			name:       "max_operation_count of the new pool refuses the move",
			setup:      [][2]string{{"x", "a"}, {"z", "b"}, {"w", "b1"}},
			move:       [2]string{"x", "b"},
			wantErr:    ErrTooManyOperations,
			wantInfo:   map[OperationID]AdmissionInfo{"x": admRunning},
			wantCounts: map[PoolID]counts{"a": {1, 1}, "b": {2, 1}},
		},
		{
			name:       "moving inside the subtree does not count twice",
			setup:      [][2]string{{"z", "b"}, {"w", "b1"}},
			move:       [2]string{"w", "b"},
			wantInfo:   map[OperationID]AdmissionInfo{"w": admPending("b", "max_running_operation_count of b reached (1/1)", 0, 1, 1)},
			wantCounts: map[PoolID]counts{"b": {2, 1}, "b1": {0, 0}},
		},
		{name: "unknown pool", setup: [][2]string{{"x", "a"}}, move: [2]string{"x", "nope"}, wantErr: ErrInvalidOperation},
		{name: "unknown operation", move: [2]string{"x", "a"}, wantErr: ErrUnknownOperation},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewAdmission(cfg, pools)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.setup {
				if _, err := a.Add(OperationID(s[0]), PoolID(s[1])); err != nil {
					t.Fatal(err)
				}
			}
			started, err := a.Move(OperationID(tc.move[0]), PoolID(tc.move[1]))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Move error %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantStarted, started); diff != "" {
				t.Errorf("started (-want +got):\n%s", diff)
			}
			for id, want := range tc.wantInfo {
				got, _ := a.Info(id)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Info(%s) (-want +got):\n%s", id, diff)
				}
			}
			for pool, want := range tc.wantCounts {
				var got counts
				got.Ops, got.Running = a.Counts(pool)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Counts(%q) (-want +got):\n%s", pool, diff)
				}
			}
		})
	}
}
