package placement

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The O(1) lookups agree with the listings.
func TestLookupsAgreeWithListings(t *testing.T) {
	p := New()
	p.SetTotal(res(10, 10, 100))
	if err := p.SetPools([]PoolSpec{{Name: "a"}, {Name: "b", Parent: "a"}}); err != nil {
		t.Fatal(err)
	}
	if err := p.AddOperation(op("x", "b", 1, 3, res(1, 2, 10))); err != nil {
		t.Fatal(err)
	}
	if err := p.AddOperation(op("y", "a", 2, 2, res(1, 1, 5))); err != nil {
		t.Fatal(err)
	}
	p.Schedule("n1", res(3, 4, 40), 0)
	for _, u := range p.Operations() {
		got, ok := p.Operation(u.ID)
		if !ok {
			t.Fatalf("Operation(%s) not found", u.ID)
		}
		if diff := cmp.Diff(u, got); diff != "" {
			t.Errorf("Operation(%s) (-listing +lookup):\n%s", u.ID, diff)
		}
		for _, j := range p.RunningJobs(u.ID) {
			got, ok := p.Job(j.Key)
			if !ok || !cmp.Equal(j, got) {
				t.Errorf("Job(%v) = %v, %v; want %v", j.Key, got, ok, j)
			}
		}
	}
	a, _ := p.PoolUsage("a")
	b, _ := p.PoolUsage("b")
	x, _ := p.Operation("x")
	y, _ := p.Operation("y")
	if a != x.Usage.Add(y.Usage) || b != x.Usage {
		t.Errorf("pool usage a=%s b=%s, operations x=%s y=%s", a, b, x.Usage, y.Usage)
	}
	if _, ok := p.Operation("z"); ok {
		t.Error("unknown operation found")
	}
	if _, ok := p.PoolUsage("z"); ok {
		t.Error("unknown pool found")
	}
	if _, ok := p.Job(JobKey{Operation: "x", Task: 0, Index: 2}); ok {
		t.Error("a pending job reported running")
	}
	if _, ok := p.Job(JobKey{Operation: "x", Task: 0, Index: 0}); !ok {
		t.Error("a running job not found")
	}
	p.JobFinished(JobKey{Operation: "x", Task: 0, Index: 0}, false)
	if _, ok := p.Job(JobKey{Operation: "x", Task: 0, Index: 0}); ok {
		t.Error("a finished job reported running")
	}
}
