package placement

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
)

// ample is more free resources than any test job needs: a caller that made
// room for the job (by preemption) passes it.
var ample = scheduler.Resources{1e6, 1e6, 1e6, 1e6, 1e6}

// With ample free resources only the limits and the pending jobs decide.
func TestStartNextWithinAmple(t *testing.T) {
	p := New()
	p.SetTotal(res(10, 10, 100))
	if err := p.SetPools([]PoolSpec{{Name: "capped", ResourceLimits: limits(map[scheduler.ResourceType]float64{scheduler.CPU: 3})}}); err != nil {
		t.Fatal(err)
	}
	if err := p.AddOperation(op("x", "capped", 1, 5, res(1, 1, 1))); err != nil {
		t.Fatal(err)
	}
	// The node's free resources are ample: the caller made room.
	for i := range 3 {
		a, ok := p.StartNextWithin("x", "n1", ample)
		want := Assignment{Job: JobKey{Operation: "x", Task: 0, Index: i}, Resources: res(1, 1, 1)}
		if !ok || !cmp.Equal(a, want) {
			t.Fatalf("start %d: %+v, %v; want %+v", i, a, ok, want)
		}
	}
	// The pool's cpu limit of 3 is reached.
	if _, ok := p.StartNextWithin("x", "n1", ample); ok {
		t.Error("started beyond the pool's limit")
	}
	if _, ok := p.StartNextWithin("y", "n1", ample); ok {
		t.Error("started a job of an unknown operation")
	}
	if s := p.Stats(); s.RunningJobs != 3 || s.PendingJobs != 2 {
		t.Errorf("stats %+v", s)
	}
	if got := p.RunningJobs("x"); len(got) != 3 || got[2].Node != "n1" || got[0].Seq >= got[2].Seq {
		t.Errorf("running jobs %+v", got)
	}
	if err := p.AddOperation(op("z", "", 2, 1, res(1, 1, 1))); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.StartNextWithin("z", "n2", ample); !ok {
		t.Fatal("z did not start")
	}
	if _, ok := p.StartNextWithin("z", "n2", ample); ok {
		t.Error("started a job of an operation with nothing pending")
	}
}

// StartNextWithin starts only a job that fits the free resources given, the
// first task (in spec order) whose job does.
func TestStartNextWithin(t *testing.T) {
	p := New()
	p.SetTotal(res(10, 10, 100))
	spec := OperationSpec{ID: "w", Order: 1, Tasks: []TaskSpec{
		{Name: "big", JobCount: 1, JobResources: res(1, 4, 1)},
		{Name: "small", JobCount: 1, JobResources: res(1, 1, 1)},
	}}
	if err := p.AddOperation(spec); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.StartNextWithin("w", "n1", res(0, 4, 1)); ok {
		t.Fatal("started a job without a free user slot")
	}
	a, ok := p.StartNextWithin("w", "n1", res(1, 2, 1))
	if want := (Assignment{Job: JobKey{Operation: "w", Task: 1, Index: 0}, Resources: res(1, 1, 1)}); !ok || !cmp.Equal(a, want) {
		t.Fatalf("with 2 cpu free: %+v, %v; want %+v", a, ok, want)
	}
	if _, ok := p.StartNextWithin("w", "n1", res(1, 3, 1)); ok {
		t.Fatal("started the 4-cpu job in 3 free cpus")
	}
	a, ok = p.StartNextWithin("w", "n1", res(1, 4, 1))
	if want := (Assignment{Job: JobKey{Operation: "w", Task: 0, Index: 0}, Resources: res(1, 4, 1)}); !ok || !cmp.Equal(a, want) {
		t.Fatalf("with 4 cpu free: %+v, %v; want %+v", a, ok, want)
	}
	if s := p.Stats(); s.RunningJobs != 2 || s.PendingJobs != 0 {
		t.Errorf("stats %+v", s)
	}
}
