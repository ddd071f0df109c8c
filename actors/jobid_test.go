package actors

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler/placement"
)

func TestParseJobRef(t *testing.T) {
	ref := jobRef{key: placement.JobKey{Operation: "op-3-17", Task: 2, Index: 140}, attempt: 5}
	got, ok := parseJobRef(ref.String())
	if !ok {
		t.Fatalf("parseJobRef(%q) refused its own format", ref)
	}
	if diff := cmp.Diff(ref, got, cmp.AllowUnexported(jobRef{})); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for _, bad := range []string{
		"", "op", "op.1.2", ".1.2.3", "a.b.1.2.3", "op.1.2.x", "op.-1.2.3", "op.1.02.3", "op.1.2.", "op.1.2.+3",
		"op.1.2.99999999999999999999",
	} {
		if _, ok := parseJobRef(bad); ok {
			t.Errorf("parseJobRef(%q) accepted it", bad)
		}
	}
}
