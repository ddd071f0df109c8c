package scheduler

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// comeAndGo changes snap as a running scheduler's operations change
// between two updates: some finish (anywhere in the list), some start
// (appended, idle, in any pool or the root), some change their values; or
// a fifo pool's operations are reordered (their start times change), or
// an operation moves to the end of the list. It returns the next snapshot
// and the one to update with: the same, or (drawn) a copy with a started
// operation whose id is already listed or a pool's name, or an invalid
// one, which both updates must refuse alike. k numbers the started
// operations' ids.
func comeAndGo(t *rapid.T, snap *Snapshot, k int) (next, cur *Snapshot) {
	s := cloneSnapshot(snap)
	s.Now = snap.Now.Add(time.Second)
	no := len(s.Operations)
	switch rapid.SampledFrom([]string{"comeAndGo", "comeAndGo", "comeAndGo", "fifoKeys", "toEnd", "duplicate", "poolName", "invalid"}).Draw(t, "variation") {
	case "fifoKeys":
		for i := range s.Operations {
			o := &s.Operations[i]
			o.StartTime = o.StartTime.Add(time.Duration(rapid.IntRange(-100, 100).Draw(t, "shift")) * time.Second)
		}
		return s, s
	case "toEnd":
		if no > 1 {
			i := rapid.IntRange(0, no-2).Draw(t, "toEnd")
			o := s.Operations[i]
			s.Operations = append(slices.Delete(s.Operations, i, i+1), o)
		}
		return s, s
	case "duplicate":
		if no > 0 {
			bad := cloneSnapshot(s)
			o := s.Operations[rapid.IntRange(0, no-1).Draw(t, "duplicated")]
			o.Pool = ""
			bad.Operations = append(bad.Operations, o)
			return s, bad
		}
	case "poolName":
		if len(s.Pools) > 0 {
			bad := cloneSnapshot(s)
			bad.Operations = append(bad.Operations, Operation{ID: OperationID(s.Pools[0].Name), Demand: Resources{CPU: 1}})
			return s, bad
		}
	case "invalid":
		if no > 0 {
			bad := cloneSnapshot(s)
			bad.Operations[no-1].Demand[CPU] = -1
			return s, bad
		}
	}
	for range rapid.IntRange(0, 3).Draw(t, "finish") {
		if len(s.Operations) == 0 {
			break
		}
		i := rapid.IntRange(0, len(s.Operations)-1).Draw(t, "finished")
		s.Operations = slices.Delete(s.Operations, i, i+1)
	}
	for j := range rapid.IntRange(0, 3).Draw(t, "start") {
		o := Operation{ID: OperationID(fmt.Sprintf("started-%d-%d", k, j)), StartTime: s.Now,
			Demand:          Resources{UserSlots: 2, CPU: rapid.Float64Range(0, 40).Draw(t, "demand"), Memory: 4096},
			PendingJobCount: 2}
		if n := len(s.Pools); n > 0 {
			if i := rapid.IntRange(-1, n-1).Draw(t, "pool"); i >= 0 {
				o.Pool = s.Pools[i].Name
			}
		}
		s.Operations = append(s.Operations, o)
	}
	for range rapid.IntRange(0, 5).Draw(t, "changes") {
		if len(s.Operations) == 0 {
			break
		}
		o := &s.Operations[rapid.IntRange(0, len(s.Operations)-1).Draw(t, "changed")]
		o.Demand[CPU] = o.Usage[CPU] + rapid.Float64Range(0, 50).Draw(t, "more")
	}
	return s, s
}

// An Engine whose operations come and go between its updates (patch, and
// reshape when patch does not apply or the store drifted) gives exactly
// what a fresh update gives, errors included, and its kept pools' sums
// stay sound.
func TestPropertyOperationsComeAndGo(t *testing.T) {
	patched := 0
	rapid.Check(t, func(rt *rapid.T) {
		p := drawGenParams(rt)
		snap, prev := genSnapshot(p)
		var en Engine
		var bufs [2]Result
		prevU, prevI := prev, prev
		next := 0
		for k := range rapid.IntRange(8, 25).Draw(rt, "updates") {
			cur := snap
			if k > 0 {
				snap, cur = comeAndGo(rt, snap, k)
			}
			res := &bufs[next]
			want, differ, werr := updateBoth(&en, res, cur, prevU, prevI)
			if differ != "" {
				rt.Fatalf("update %d: errors differ: %s", k, differ)
			}
			if werr != nil {
				continue
			}
			if en.t.built == builtPatch {
				patched++
			}

			if d := resultDiff(want, res); d != "" {
				rt.Fatalf("update %d (built %d): %s", k, en.t.built, d)
			}
			if bad := keptSumsSound(&en.t); bad != "" {
				rt.Fatalf("update %d: %s", k, bad)
			}
			prevU, prevI = &want.State, &res.State
			next = 1 - next
		}
	})
	if patched == 0 {
		t.Error("no update was patched")
	}
}

// patch leaves every operation that stays in its element, with its
// function; started operations take the finished ones' elements first;
// once the store drifts too far, reshape lays it out again in pre-order.
func TestPatchKeepsElementsInPlace(t *testing.T) {
	snap, prev := genSnapshot(benchParams(100, 1000))
	var en Engine
	var res Result
	engineUpdate(t, &en, &res, snap, prev, "first")
	limit := max((len(en.t.el))/maxDrift, minDrift)
	for k := 1; ; k++ {
		elemOf := make(map[OperationID]int, len(snap.Operations))
		verOf := make(map[OperationID]uint64, len(snap.Operations))
		for oi, o := range snap.Operations {
			elemOf[o.ID] = en.t.opElem[oi]
			verOf[o.ID] = en.t.el[en.t.opElem[oi]].ver
		}
		holes := make(map[int]bool)
		s := cloneSnapshot(snap)
		// Every 97th operation finishes, then as many start.
		var finished []int
		for i := len(s.Operations) - 1 - k; i >= 0; i -= 97 {
			holes[elemOf[s.Operations[i].ID]] = true
			finished = append(finished, i)
		}
		for _, i := range finished {
			s.Operations = slices.Delete(s.Operations, i, i+1)
		}
		for j := range finished {
			s.Operations = append(s.Operations, Operation{ID: OperationID(fmt.Sprintf("started-%d-%d", k, j)),
				Pool: s.Pools[(k*7+j)%len(s.Pools)].Name, Demand: Resources{UserSlots: 1, CPU: 3, Memory: 1024}, StartTime: s.Now})
		}
		drift := en.t.drift
		snap = s
		engineUpdate(t, &en, &res, snap, prev, fmt.Sprintf("update %d", k))
		if drift+2*len(finished)+1 > limit {
			if en.t.built != builtReshape || en.t.drift != 0 || len(en.t.free) != 0 || len(en.t.el) != len(res.Elements) {
				t.Fatalf("update %d: built %d, drift %d, %d holes, %d elements for %d: want reshape's compacted store",
					k, en.t.built, en.t.drift, len(en.t.free), len(en.t.el), len(res.Elements))
			}
			return
		}
		if en.t.built != builtPatch {
			t.Fatalf("update %d: built %d, want patch", k, en.t.built)
		}
		for oi, o := range snap.Operations {
			idx := en.t.opElem[oi]
			if was, ok := elemOf[o.ID]; ok {
				if idx != was || en.t.el[idx].ver != verOf[o.ID] || en.t.el[idx].src != int32(oi) {
					t.Fatalf("update %d: %s at element %d (ver %d, src %d), want %d (ver %d, src %d)",
						k, o.ID, idx, en.t.el[idx].ver, en.t.el[idx].src, was, verOf[o.ID], oi)
				}
			} else if !holes[idx] {
				t.Fatalf("update %d: started %s at element %d, not a finished one's", k, o.ID, idx)
			}
		}
		if st := en.t.poolStats; st.restored == 0 {
			t.Fatalf("update %d: %+v, want pools kept", k, st)
		}
		if bad := keptSumsSound(&en.t); bad != "" {
			t.Fatalf("update %d: %s", k, bad)
		}
	}
}
