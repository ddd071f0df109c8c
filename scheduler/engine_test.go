package scheduler

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// resultDiff describes the first of a result's elements, state and alerts
// that differ from want's (-want +got), or returns "".
func resultDiff(want, got *Result) string {
	if d := cmp.Diff(want.Elements, got.Elements); d != "" {
		return "Elements differ (-want +got):\n" + d
	}
	if d := cmp.Diff(want.State, got.State); d != "" {
		return "State differs (-want +got):\n" + d
	}
	if d := cmp.Diff(want.Alerts, got.Alerts); d != "" {
		return "Alerts differ (-want +got):\n" + d
	}
	return ""
}

// updateBoth makes one update both ways: Update (a new result, continuing
// from prevFresh) and en.UpdateInto into res (from prevEngine). It returns
// Update's result and error, and what each way said when their errors
// differ ("" when they agree).
func updateBoth(en *Engine, res *Result, snap *Snapshot, prevFresh, prevEngine *State) (want *Result, differ string, err error) {
	want, err = Update(snap, prevFresh)
	gerr := en.UpdateInto(res, snap, prevEngine)
	if (err == nil) != (gerr == nil) || err != nil && err.Error() != gerr.Error() {
		differ = fmt.Sprintf("Update %v, UpdateInto %v", err, gerr)
	}
	return want, differ, err
}

// An Engine reused across updates of different trees, including updates that
// fail, gives exactly what a fresh engine gives: nothing of an earlier update
// leaks into a later one.
func TestPropertyEngineReuseMatchesFresh(t *testing.T) {
	var en Engine
	rapid.Check(t, func(t *rapid.T) {
		for k := range rapid.IntRange(1, 3).Draw(t, "updates") {
			p := drawGenParams(t)
			snap, prev := genSnapshot(p)
			if rapid.IntRange(0, 9).Draw(t, "fail") == 0 && len(snap.Operations) > 1 {
				// A duplicate operation: the update fails half way through
				// building the tree.
				bad := *snap
				bad.Operations = append(append([]Operation(nil), snap.Operations...), snap.Operations[0])
				if _, err := en.Update(&bad, prev); !errors.Is(err, ErrDuplicateOperation) {
					t.Fatalf("update %d: want ErrDuplicateOperation, got %v", k, err)
				}
			}
			got, err := en.Update(snap, prev)
			if err != nil {
				t.Fatalf("update %d: reused engine: %v", k, err)
			}
			want, err := new(Engine).Update(snap, prev)
			if err != nil {
				t.Fatalf("update %d: fresh engine: %v", k, err)
			}
			if d := cmp.Diff(want.Elements, got.Elements); d != "" {
				t.Fatalf("update %d: reused engine differs in Elements (-fresh +reused):\n%s", k, d)
			}
			if d := cmp.Diff(want.State, got.State); d != "" {
				t.Fatalf("update %d: reused engine differs in State (-fresh +reused):\n%s", k, d)
			}
			if d := cmp.Diff(want.Alerts, got.Alerts); d != "" {
				t.Fatalf("update %d: reused engine differs in Alerts (-fresh +reused):\n%s", k, d)
			}
		}
	})
}

// A Result does not share memory with the Engine that made it: the next
// update leaves it unchanged.
func TestEngineResultsIndependent(t *testing.T) {
	var en Engine
	p := genDefaults(7)
	snap, prev := genSnapshot(p)
	r1, err := en.Update(snap, prev)
	if err != nil {
		t.Fatal(err)
	}
	before := cmp.Diff(nil, r1.Elements) // a deep rendering of the first result
	p2 := genDefaults(8)
	snap2, prev2 := genSnapshot(p2)
	if _, err := en.Update(snap2, prev2); err != nil {
		t.Fatal(err)
	}
	if after := cmp.Diff(nil, r1.Elements); after != before {
		t.Fatalf("the second update changed the first result")
	}
}

// Update may be called from several goroutines at once: each call borrows
// its own engine.
func TestUpdateConcurrent(t *testing.T) {
	const n = 8
	snaps := make([]*Snapshot, n)
	prevs := make([]*State, n)
	want := make([]*Result, n)
	for i := range n {
		snaps[i], prevs[i] = genSnapshot(genDefaults(uint64(100 + i)))
		r, err := new(Engine).Update(snaps[i], prevs[i])
		if err != nil {
			t.Fatal(err)
		}
		want[i] = r
	}
	got := make([]*Result, n)
	done := make(chan int)
	for i := range n {
		go func() {
			for range 5 {
				r, err := Update(snaps[i], prevs[i])
				if err != nil {
					t.Error(err)
				}
				got[i] = r
			}
			done <- i
		}()
	}
	for range n {
		<-done
	}
	for i := range n {
		if d := cmp.Diff(want[i].Elements, got[i].Elements); d != "" {
			t.Fatalf("snapshot %d: concurrent Update differs (-alone +concurrent):\n%s", i, d)
		}
	}
}

// Several goroutines may look elements up in one Result at once (the
// scheduler's readers share the latest Result): the index is built once,
// and every lookup finds its element.
func TestResultElementConcurrent(t *testing.T) {
	snap, prev := genSnapshot(genDefaults(21))
	r, err := Update(snap, prev)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	done := make(chan int)
	for g := range n {
		go func() {
			defer func() { done <- g }()
			for k := range r.Elements {
				i := (k + g*len(r.Elements)/n) % len(r.Elements)
				name := r.Elements[i].Name
				e, ok := r.Element(name)
				if !ok || e != &r.Elements[i] {
					t.Errorf("goroutine %d: Element(%q) = %p, %v; want element %d", g, name, e, ok, i)
					return
				}
			}
		}()
	}
	for range n {
		<-done
	}
	if _, ok := r.Element("no-such-element"); ok {
		t.Error("Element found a name no element has")
	}
}
