package wire

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
)

// amountSeeds are resource amounts, valid and nearly valid.
var amountSeeds = []string{
	"", "0", "1", "8", "0.5", "1.5K", "16Gi", "1Ki", "3Ti", "2T", "1e3", "1e-3", "1E3M", ".5", "5.", "-0", "-1", "+1",
	"NaN", "nan", "Inf", "+Inf", "-Inf", "infinity", "1e308", "1e309", "1e308T", "1e300Ti", "Ki", "K", "1KiB", "1 K",
	" 1", "1 ", "0x10", "0x1p4", "1_000", "1e", "1..2", "１",
}

// listSeeds are name=amount lists, valid and nearly valid.
var listSeeds = []string{
	"cpu=8", "cpu=8,memory=16Gi,user_slots=8", " cpu = 8 , memory=16Gi", "cpu=8, memory=16Gi,user_slots=8,network=1.5K",
	"gpu=0", "cpu=1,gpu=2,memory=3,network=4,user_slots=5", "", " ", ",", "cpu=8,", ",cpu=8", "cpu=8,,gpu=1", "cpu=1,cpu=2", "cpu", "cpu=", "=8", "cpu==8",
	"CPU=1", "disk=3", "memory=3Gb", "cpu=-1", "cpu=NaN", "cpu=inf",
	"cpu=1e308T", "memory=1e300Ti",
	"cpu=8;memory=1", "cpu=\x00",
}

// checkAmount is the property of an accepted amount: a finite number >= 0.
func checkAmount(t *testing.T, fn, in string, v float64) {
	t.Helper()
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		t.Fatalf("%s(%q) accepted %g; want a finite number >= 0", fn, in, v)
	}
}

// checkRejected is the property of a failure: an error wrapping ErrInvalid
// whose message quotes the input, so a flag's error names the value given.
func checkRejected(t *testing.T, fn, in string, err error) {
	t.Helper()
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("%s(%q) error %v does not wrap ErrInvalid", fn, in, err)
	}
	if !strings.Contains(err.Error(), strconv.Quote(in)) {
		t.Fatalf("%s(%q) error %q does not name the input", fn, in, err)
	}
}

// FuzzParseAmount checks ParseAmount: no panic; an accepted amount is a
// finite number >= 0 (as documented); a rejected one gives an error wrapping
// ErrInvalid that quotes the input.
func FuzzParseAmount(f *testing.F) {
	for _, s := range amountSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseAmount(s)
		if err != nil {
			checkRejected(t, "ParseAmount", s, err)
			return
		}
		checkAmount(t, "ParseAmount", s, v)
	})
}

// FuzzParseLimits checks ParseLimits and ParseResources on the same input:
// no panic; both accept or both reject it; an accepted list sets exactly one
// resource per item, each a finite number >= 0 that ParseAmount gives for
// the item's amount, and ParseResources returns the same values with the
// others 0; the wire forms round-trip (Limits of ToLimits, Resources of
// ToResources give the values back); a rejected list gives an error wrapping
// ErrInvalid that quotes the whole input.
func FuzzParseLimits(f *testing.F) {
	for _, s := range listSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lim, err := ParseLimits(s)
		res, rerr := ParseResources(s)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("ParseLimits(%q) error %v but ParseResources error %v", s, err, rerr)
		}
		if err != nil {
			checkRejected(t, "ParseLimits", s, err)
			checkRejected(t, "ParseResources", s, rerr)
			return
		}
		items := strings.Split(s, ",")
		var want scheduler.PartialResources
		for _, item := range items {
			name, amount, _ := strings.Cut(strings.TrimSpace(item), "=")
			r, err := scheduler.ParseResourceType(strings.TrimSpace(name))
			if err != nil {
				t.Fatalf("ParseLimits(%q) accepted item %q whose name is not a resource: %v", s, item, err)
			}
			v, err := ParseAmount(strings.TrimSpace(amount))
			if err != nil {
				t.Fatalf("ParseLimits(%q) accepted item %q whose amount ParseAmount rejects: %v", s, item, err)
			}
			want = want.With(r, v)
		}
		if diff := cmp.Diff(want, lim); diff != "" {
			t.Fatalf("ParseLimits(%q) (-items +got):\n%s", s, diff)
		}
		set := 0
		for r := range scheduler.NumResources {
			rt := scheduler.ResourceType(r)
			if lim.Set.Has(rt) {
				set++
				checkAmount(t, "ParseLimits", s, lim.Values[r])
			} else if lim.Values[r] != 0 {
				t.Fatalf("ParseLimits(%q) = %v: unset %s has value %g", s, lim, rt, lim.Values[r])
			}
		}
		if set != len(items) {
			t.Fatalf("ParseLimits(%q) sets %d resources for %d items", s, set, len(items))
		}
		if diff := cmp.Diff(lim.Values, res); diff != "" {
			t.Fatalf("ParseResources(%q) differs from ParseLimits (-limits +resources):\n%s", s, diff)
		}
		back, err := Limits("limits", ToLimits(lim))
		if err != nil {
			t.Fatalf("Limits(ToLimits(ParseLimits(%q))): %v", s, err)
		}
		if diff := cmp.Diff(lim, back); diff != "" {
			t.Fatalf("ParseLimits(%q): wire round trip (-parsed +back):\n%s", s, diff)
		}
		backRes, err := Resources("resources", ToResources(res))
		if err != nil {
			t.Fatalf("Resources(ToResources(ParseResources(%q))): %v", s, err)
		}
		if diff := cmp.Diff(res, backRes); diff != "" {
			t.Fatalf("ParseResources(%q): wire round trip (-parsed +back):\n%s", s, diff)
		}
	})
}
