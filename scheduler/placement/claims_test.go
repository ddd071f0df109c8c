package placement

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/sharetree/sharetree/scheduler"
)

// testClaims is a JobClaims over a map, with an optional cap on how many
// jobs each tree may claim.
type testClaims struct {
	owner map[jobID]int
	count map[int]int
	limit map[int]int
}

func newTestClaims() *testClaims {
	return &testClaims{owner: map[jobID]int{}, count: map[int]int{}, limit: map[int]int{}}
}

// view is tree's side of the claims.
type claimView struct {
	c    *testClaims
	tree int
}

func (v claimView) Claim(task, index int) bool {
	id := jobID{task, index}
	if _, taken := v.c.owner[id]; taken {
		return false
	}
	if l, ok := v.c.limit[v.tree]; ok && v.c.count[v.tree] >= l {
		return false
	}
	v.c.owner[id] = v.tree
	v.c.count[v.tree]++
	return true
}

func TestClaimsShareJobsBetweenTrees(t *testing.T) {
	c := newTestClaims()
	spec := OperationSpec{ID: "op", Tasks: []TaskSpec{{Name: "a", JobCount: 3, JobResources: res(1, 1, 0)}, {Name: "b", JobCount: 2, JobResources: res(1, 2, 0)}}}
	trees := [2]*Placement{New(), New()}
	for i, p := range trees {
		p.SetTotal(res(100, 100, 100))
		s := spec
		s.Claims = claimView{c, i}
		if err := p.AddOperation(s); err != nil {
			t.Fatal(err)
		}
	}
	// Tree 0 starts two jobs; tree 1 has not heard of it yet and still
	// counts them pending, but cannot start them: it drops them and starts
	// the next free ones.
	got0 := trees[0].Schedule("n0", res(2, 2, 0), 0)
	got1 := trees[1].Schedule("n1", res(2, 2, 0), 0)
	keys := func(as []Assignment) []JobKey {
		var out []JobKey
		for _, a := range as {
			out = append(out, a.Job)
		}
		return out
	}
	if d := gocmp.Diff([]JobKey{{"op", 0, 0}, {"op", 0, 1}}, keys(got0)); d != "" {
		t.Errorf("tree 0 (-want +got):\n%s", d)
	}
	if d := gocmp.Diff([]JobKey{{"op", 0, 2}}, keys(got1)); d != "" {
		t.Errorf("tree 1 (-want +got):\n%s", d)
	}
	// Forget is how the other tree learns early: its demand shrinks.
	if !trees[0].Forget(JobKey{"op", 0, 2}) || trees[0].Forget(JobKey{"op", 0, 2}) {
		t.Error("Forget of a pending job must succeed once")
	}
	u, _ := trees[0].Operation("op")
	if u.PendingJobCount != 2 || u.RunningJobCount != 2 {
		t.Errorf("tree 0 after forget: pending %d running %d, want 2 and 2", u.PendingJobCount, u.RunningJobCount)
	}
	// A job tree 0 ran and requeues stays tree 0's: it needs no new claim.
	if !trees[0].JobFinished(JobKey{"op", 0, 0}, true) {
		t.Fatal("finish")
	}
	again := trees[0].Schedule("n0", res(1, 1, 0), 0)
	if d := gocmp.Diff([]JobKey{{"op", 0, 0}}, keys(again)); d != "" {
		t.Errorf("retry (-want +got):\n%s", d)
	}
	// StartNextWithin claims as well.
	a, ok := trees[1].StartNextWithin("op", "n1", ample)
	if !ok || a.Job != (JobKey{"op", 1, 0}) {
		t.Errorf("StartNextWithin = %v %v, want job b/0", a.Job, ok)
	}
	if c.owner[jobID{1, 0}] != 1 {
		t.Error("StartNextWithin did not claim")
	}
}

// TestClaimsPropertyEveryJobOnce: whatever the interleaving of passes,
// forgets (delivered late or never), failures and a per-tree cap, no job
// runs in two trees, a tree never claims beyond its cap, and once the
// trees stop failing jobs every job runs exactly once.
func TestClaimsPropertyEveryJobOnce(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nTrees := rapid.IntRange(2, 3).Draw(rt, "trees")
		c := newTestClaims()
		if rapid.Bool().Draw(rt, "capped") {
			c.limit[1] = rapid.IntRange(0, 5).Draw(rt, "cap")
		}
		var spec OperationSpec
		spec.ID = "op"
		total := 0
		for ti := range rapid.IntRange(1, 3).Draw(rt, "tasks") {
			n := rapid.IntRange(1, 8).Draw(rt, fmt.Sprintf("jobs%d", ti))
			total += n
			spec.Tasks = append(spec.Tasks, TaskSpec{Name: fmt.Sprint(ti), JobCount: n, JobResources: res(1, float64(1+ti), 0)})
		}
		trees := make([]*Placement, nTrees)
		for i := range trees {
			trees[i] = New()
			trees[i].SetTotal(res(100, 100, 100))
			s := spec
			s.Claims = claimView{c, i}
			if err := trees[i].AddOperation(s); err != nil {
				rt.Fatal(err)
			}
		}
		runningIn := map[jobID]int{}
		done := map[jobID]bool{}
		var late []JobKey // forgets not yet delivered
		step := func(i int, fail bool) {
			for _, a := range trees[i].Schedule(scheduler.NodeID(fmt.Sprint("n", i)), res(2, 3, 0), 0) {
				id := jobID{a.Job.Task, a.Job.Index}
				if owner, dup := runningIn[id]; dup || done[id] {
					rt.Fatalf("job %v started in tree %d while running in %d or done", id, i, owner)
				}
				if c.owner[id] != i {
					rt.Fatalf("job %v started in tree %d but claimed by %d", id, i, c.owner[id])
				}
				runningIn[id] = i
				late = append(late, a.Job)
			}
			// Finish what this tree runs: some fail and are requeued.
			ids := make([]jobID, 0, len(runningIn))
			for id, owner := range runningIn {
				if owner == i {
					ids = append(ids, id)
				}
			}
			slices.SortFunc(ids, func(a, b jobID) int { return cmp.Or(a.task-b.task, a.index-b.index) })
			for _, id := range ids {
				requeue := fail && rapid.Bool().Draw(rt, "fail")
				trees[i].JobFinished(JobKey{"op", id.task, id.index}, requeue)
				delete(runningIn, id)
				if !requeue {
					done[id] = true
				}
			}
		}
		for range rapid.IntRange(0, 20).Draw(rt, "steps") {
			step(rapid.IntRange(0, nTrees-1).Draw(rt, "tree"), true)
			if len(late) > 0 && rapid.Bool().Draw(rt, "deliver") {
				k := late[0]
				late = late[1:]
				// The claimer tells the other trees.
				for i, p := range trees {
					if i != c.owner[jobID{k.Task, k.Index}] {
						p.Forget(k) // a no-op where the job is not pending
					}
				}
			}
		}
		for range 4 * total {
			for i := range trees {
				step(i, false)
			}
		}
		if len(done) != total {
			rt.Fatalf("%d of %d jobs done", len(done), total)
		}
		if l, ok := c.limit[1]; ok && c.count[1] > l {
			rt.Fatalf("tree 1 claimed %d jobs, cap %d", c.count[1], l)
		}
		for i, p := range trees {
			if u, _ := p.Operation("op"); u.PendingJobCount != 0 || u.RunningJobCount != 0 {
				rt.Fatalf("tree %d still has %d pending, %d running", i, u.PendingJobCount, u.RunningJobCount)
			}
		}
	})
}
