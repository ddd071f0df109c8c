package placement

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
)

func TestStartNext(t *testing.T) {
	p := New()
	p.SetTotal(res(10, 10, 100))
	if err := p.SetPools([]PoolSpec{{Name: "capped", ResourceLimits: limits(map[scheduler.ResourceType]float64{scheduler.CPU: 3})}}); err != nil {
		t.Fatal(err)
	}
	if err := p.AddOperation(op("x", "capped", 1, 5, res(1, 1, 1))); err != nil {
		t.Fatal(err)
	}
	// The node's free resources are not consulted: the caller made room.
	for i := range 3 {
		a, ok := p.StartNext("x", "n1")
		want := Assignment{Job: JobKey{Operation: "x", Task: 0, Index: i}, Resources: res(1, 1, 1)}
		if !ok || !cmp.Equal(a, want) {
			t.Fatalf("start %d: %+v, %v; want %+v", i, a, ok, want)
		}
	}
	// The pool's cpu limit of 3 is reached.
	if _, ok := p.StartNext("x", "n1"); ok {
		t.Error("started beyond the pool's limit")
	}
	if _, ok := p.StartNext("y", "n1"); ok {
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
	if _, ok := p.StartNext("z", "n2"); !ok {
		t.Fatal("z did not start")
	}
	if _, ok := p.StartNext("z", "n2"); ok {
		t.Error("started a job of an operation with nothing pending")
	}
}
