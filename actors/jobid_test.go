package actors

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler/placement"
)

func TestParseJobRef(t *testing.T) {
	for _, c := range []struct {
		ref jobRef
		id  string
	}{
		{jobRef{key: placement.JobKey{Operation: "op-3-17", Task: 2, Index: 140}, attempt: 5, epoch: 9}, "op-3-17.2.140.5.9"},
		// Without an epoch (a scheduler without one, or an id written
		// before epochs were part of ids).
		{jobRef{key: placement.JobKey{Operation: "op-3-17", Task: 2, Index: 140}, attempt: 5}, "op-3-17.2.140.5"},
		{jobRef{key: placement.JobKey{Operation: "x", Task: maxJobNumber, Index: 0}, attempt: maxJobNumber, epoch: 1<<63 - 1}, "x.2147483647.0.2147483647.9223372036854775807"},
	} {
		if got := c.ref.String(); got != c.id {
			t.Errorf("String() = %q, want %q", got, c.id)
		}
		got, ok := parseJobRef(c.id)
		if !ok {
			t.Fatalf("parseJobRef(%q) refused its own format", c.id)
		}
		if diff := cmp.Diff(c.ref, got, cmp.AllowUnexported(jobRef{})); diff != "" {
			t.Errorf("round trip of %q (-want +got):\n%s", c.id, diff)
		}
	}
	for _, bad := range []string{
		"", "op", "op.1.2", ".1.2.3", ".1.2.3.4", "a.b.1.2.3", "op.1.2.x", "op.-1.2.3", "op.1.02.3", "op.1.2.", "op.1.2.+3",
		"op.1.2.99999999999999999999", "op.1.2.3.4.5", "op.1.2.3.", "op.1.2.3.04", "op.2147483648.0.0", "op.1.2.3.9223372036854775808",
	} {
		if _, ok := parseJobRef(bad); ok {
			t.Errorf("parseJobRef(%q) accepted it", bad)
		}
	}
}
