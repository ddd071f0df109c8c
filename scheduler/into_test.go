package scheduler

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// UpdateInto into Results reused in turn (each update's previous state is
// the other Result's) gives exactly what Update gives, whatever the Results
// held before: records of other trees, jobs, integral attributes, states.
func TestPropertyUpdateIntoMatchesUpdate(t *testing.T) {
	var en Engine
	var bufs [2]Result
	rapid.Check(t, func(t *rapid.T) {
		for k := range rapid.IntRange(1, 4).Draw(t, "updates") {
			p := drawGenParams(t)
			snap, prev := genSnapshot(p)
			want, err := Update(snap, prev)
			if err != nil {
				t.Fatalf("update %d: Update: %v", k, err)
			}
			res := &bufs[k%2]
			if rapid.Bool().Draw(t, "chain") {
				// The previous state is the other buffer's (its maps are
				// not res's).
				other := &bufs[(k+1)%2]
				if other.State.Pools != nil {
					other.State = *prev
					prev = &other.State
				}
			}
			if err := en.UpdateInto(res, snap, prev); err != nil {
				t.Fatalf("update %d: UpdateInto: %v", k, err)
			}
			if d := cmp.Diff(want.Elements, res.Elements); d != "" {
				t.Fatalf("update %d: Elements differ (-Update +UpdateInto):\n%s", k, d)
			}
			if d := cmp.Diff(want.State, res.State); d != "" {
				t.Fatalf("update %d: State differs (-Update +UpdateInto):\n%s", k, d)
			}
			if d := cmp.Diff(want.Alerts, res.Alerts); d != "" {
				t.Fatalf("update %d: Alerts differ (-Update +UpdateInto):\n%s", k, d)
			}
			if !want.Now.Equal(res.Now) || want.Total != res.Total {
				t.Fatalf("update %d: Now or Total differ", k)
			}
			for _, e := range want.Elements {
				got, ok := res.Element(e.Name)
				if !ok || got.Name != e.Name {
					t.Fatalf("update %d: Element(%q) not found after UpdateInto", k, e.Name)
				}
			}
		}
	})
}

// UpdateInto refuses a previous state that shares its maps with the result
// it writes, and leaves the result alone on an error.
func TestUpdateIntoRejectsAliasedState(t *testing.T) {
	var en Engine
	snap, prev := genSnapshot(genDefaults(3))
	var res Result
	if err := en.UpdateInto(&res, snap, prev); err != nil {
		t.Fatal(err)
	}
	before := cmp.Diff(nil, res.Elements)
	if err := en.UpdateInto(&res, snap, &res.State); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("prev == &res.State: want ErrInvalidConfig, got %v", err)
	}
	alias := res.State
	if err := en.UpdateInto(&res, snap, &alias); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("prev sharing res.State's maps: want ErrInvalidConfig, got %v", err)
	}
	bad := *snap
	bad.Operations = append(append([]Operation(nil), snap.Operations...), snap.Operations[0])
	if err := en.UpdateInto(&res, &bad, prev); !errors.Is(err, ErrDuplicateOperation) {
		t.Fatalf("duplicate operation: want ErrDuplicateOperation, got %v", err)
	}
	if after := cmp.Diff(nil, res.Elements); after != before {
		t.Fatal("a failed UpdateInto changed the result")
	}
}
