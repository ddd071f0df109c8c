package actors

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/placement"
	"github.com/sharetree/sharetree/scheduler/preemption"
)

// The tree's kept per-operation sums of the interrupting jobs are, after
// any change (an interruption, a job leaving, an operation removed), what
// summing the interrupting jobs again gives.
func TestPreemptStateKeepsLeavingSumsInStep(t *testing.T) {
	cfg := DefaultConfig()
	s := newPreemptState(&cfg)
	key := func(op string, i int) placement.JobKey {
		return placement.JobKey{Operation: scheduler.OperationID(op), Index: i}
	}
	cpu := func(v float64) scheduler.Resources { return scheduler.Resources{scheduler.CPU: v} }
	steps := []struct {
		name   string
		change func()
	}{
		{"a.0 interrupted", func() { s.interrupt(key("a", 0), cpu(1)) }},
		{"a.1 and b.0 interrupted", func() { s.interrupt(key("a", 1), cpu(0.1)); s.interrupt(key("b", 0), cpu(2)) }},
		{"a.0 left", func() { s.left(key("a", 0)) }},
		{"c.0, never interrupted, left", func() { s.left(key("c", 0)) }},
		{"a.1 interrupted again with other resources", func() { s.interrupt(key("a", 1), cpu(0.2)) }},
		{"b removed", func() { s.forgetOperation("b") }},
		{"a.1 left", func() { s.left(key("a", 1)) }},
	}
	opts := cmp.AllowUnexported(preemption.Leaving{})
	for _, st := range steps {
		s.leavingSums() // kept from before the change
		st.change()
		if d := cmp.Diff(preemption.SumLeaving(s.interrupting), s.leavingSums(), opts); d != "" {
			t.Fatalf("after %s: kept sums differ (-summed +kept):\n%s", st.name, d)
		}
	}
	if len(s.interrupting) != 0 {
		t.Fatalf("%d interruptions left, want none", len(s.interrupting))
	}
}
