package wire

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

func TestParseResources(t *testing.T) {
	got, err := ParseResources("cpu=8, memory=16Gi,user_slots=8,network=1.5K")
	if err != nil {
		t.Fatal(err)
	}
	want := scheduler.Resources{8, 8, 0, 16 << 30, 1500}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if v, err := ParseAmount("-0"); err != nil || math.Signbit(v) {
		t.Errorf(`ParseAmount("-0") = %v, %v; want 0`, v, err)
	}
	for _, bad := range []string{"", "cpu", "cpu=", "cpu=-1", "cpu=NaN", "cpu=inf", "disk=3", "cpu=1,cpu=2", "memory=3Gb",
		"cpu=0x10", "cpu=0x1p4", "cpu=1_000", "cpu=1e-10", "memory=2e18", "cpu=1e308T"} {
		if _, err := ParseResources(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseResources(%q) error = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestResourcesRoundTrip(t *testing.T) {
	in := scheduler.Resources{1, 2, 3, 4, 5}
	out, err := Resources("x", ToResources(in))
	if err != nil || out != in {
		t.Fatalf("round trip = %v, %v", out, err)
	}
	if _, err := Resources("spec.res", &pb.Resources{Cpu: math.NaN()}); !errors.Is(err, ErrInvalid) {
		t.Errorf("NaN accepted: %v", err)
	}
	lim := scheduler.PartialResources{}.With(scheduler.CPU, 4)
	back, err := Limits("l", ToLimits(lim))
	if err != nil || back != lim {
		t.Fatalf("limits round trip = %v, %v", back, err)
	}
	neg := -1.0
	if _, err := Limits("l", &pb.ResourceLimits{Memory: &neg}); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative limit accepted: %v", err)
	}
}
