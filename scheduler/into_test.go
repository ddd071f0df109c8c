package scheduler

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

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
			if d := resultDiff(want, res); d != "" {
				t.Fatalf("update %d: %s", k, d)
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

// UpdateInto refuses a previous state that shares its pools map or its
// operations list with the result it writes, and leaves the result alone on
// an error.
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
	if after := cmp.Diff(nil, res.Elements); after != before {
		t.Fatal("a refused UpdateInto changed the result")
	}
	// Only the operations' list shared, from its middle: the result's
	// list has room (UpdateInto keeps it) whether or not it has entries.
	res.State.Operations = append(res.State.Operations, make([]OperationState, 4)...)[:len(res.State.Operations)]
	if err := en.UpdateInto(&res, snap, prev); err != nil {
		t.Fatal(err)
	}
	before = cmp.Diff(nil, res.Elements)
	if cap(res.State.Operations) < 2 {
		t.Fatalf("the result's operations list has capacity %d, want the room it was given", cap(res.State.Operations))
	}
	alias = State{Operations: res.State.Operations[1:1]}
	if err := en.UpdateInto(&res, snap, &alias); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("prev sharing res.State's operations list: want ErrInvalidConfig, got %v", err)
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

// UpdateInto writes every field of every record it reuses: records whose
// every field holds something (set through reflection, so that a field
// added later is covered too) come out exactly as Update's.
func TestUpdateIntoOverwritesEveryField(t *testing.T) {
	for seed := range uint64(3) {
		snap, prev := genSnapshot(genDefaults(seed))
		want, err := Update(snap, prev)
		if err != nil {
			t.Fatal(err)
		}
		res := Result{Elements: make([]ElementResult, len(want.Elements)+3)}
		for i := range res.Elements {
			fillEveryField(reflect.ValueOf(&res.Elements[i]).Elem(), i+1)
		}
		var en Engine
		if err := en.UpdateInto(&res, snap, prev); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want.Elements, res.Elements); d != "" {
			t.Fatalf("seed %d: Elements differ (-Update +UpdateInto into filled records):\n%s", seed, d)
		}
	}
}

// fillEveryField sets every settable field reachable from v to a value
// other than its zero value (slices get one element, pointers a target).
func fillEveryField(v reflect.Value, k int) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(k))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(k) + 0.5)
	case reflect.String:
		v.SetString("stale")
	case reflect.Array:
		for i := range v.Len() {
			fillEveryField(v.Index(i), k)
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fillEveryField(s.Index(0), k)
		v.Set(s)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fillEveryField(p.Elem(), k)
		v.Set(p)
	case reflect.Struct:
		if v.Type() == timeType {
			v.Set(reflect.ValueOf(genBaseTime.Add(-time.Duration(k) * time.Hour)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillEveryField(v.Field(i), k)
			}
		}
	}
}

// A previous state that lists an operation of the tree twice is refused
// with ErrInvalidState naming it (entries of operations that are gone are
// ignored, twice or not), and the Engine's next update is still exactly
// Update's.
func TestUpdateRejectsOperationListedTwiceInState(t *testing.T) {
	snap, prev := genSnapshot(genDefaults(1))
	id := snap.Operations[len(snap.Operations)/2].ID
	since := snap.Now.Add(-time.Minute)
	gone := OperationState{ID: "gone", BelowFairShareSince: since}
	bad := *prev
	bad.Operations = append(slices.Clone(prev.Operations), gone, OperationState{ID: id, BelowFairShareSince: since}, gone,
		OperationState{ID: id})
	var en Engine
	_, err := en.Update(snap, &bad)
	if !errors.Is(err, ErrInvalidState) || !strings.Contains(err.Error(), string(id)) {
		t.Fatalf("operation listed twice: want ErrInvalidState naming %q, got %v", id, err)
	}
	if _, err := Update(snap, &bad); !errors.Is(err, ErrInvalidState) {
		t.Fatalf("package-level Update: want ErrInvalidState, got %v", err)
	}
	ok := *prev
	ok.Operations = append(slices.Clone(prev.Operations), gone, gone)
	want, err := Update(snap, prev)
	if err != nil {
		t.Fatal(err)
	}
	got, err := en.Update(snap, &ok)
	if err != nil {
		t.Fatalf("after the refusal: %v", err)
	}
	if d := cmp.Diff(want.Elements, got.Elements); d != "" {
		t.Fatalf("the update after a refused state differs from Update (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want.State, got.State); d != "" {
		t.Fatalf("state differs (-want +got):\n%s", d)
	}
}
