package failpoint

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPointsFireAtTheirHitOnce(t *testing.T) {
	var fired, lasts []string
	if err := Enable("journal-before-write@3, starts-after-reply", func(name string) { fired = append(fired, name) }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Enable("", nil) })
	last := func(name string) func() { return func() { lasts = append(lasts, name) } }
	for range 5 {
		Hit(JournalBeforeWrite, last(JournalBeforeWrite))
		Hit(StartsAfterReply, last(StartsAfterReply))
		Hit(StartsBeforeReply, last(StartsBeforeReply)) // not armed
	}
	want := []string{StartsAfterReply, JournalBeforeWrite}
	if diff := cmp.Diff(want, fired); diff != "" {
		t.Errorf("fired (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, lasts); diff != "" {
		t.Errorf("last steps run (-want +got):\n%s", diff)
	}
	if !Armed() {
		t.Error("not armed")
	}
	if err := Enable("", nil); err != nil || Armed() {
		t.Errorf("disarming: %v, armed %v", err, Armed())
	}
	Hit(JournalBeforeWrite, func() { t.Error("an unarmed point ran its last step") })
}

// A point armed "=panic" panics in its caller, at its hit, after its
// last step; the others still run the action.
func TestPanicPointsPanic(t *testing.T) {
	var fired []string
	if err := Enable("starts-before-reply@2=panic, journal-after-write=kill", func(name string) { fired = append(fired, name) }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Enable("", nil) })
	hit := func(name string) (recovered any, lastRan bool) {
		defer func() { recovered = recover() }()
		Hit(name, func() { lastRan = true })
		return nil, lastRan
	}
	if r, _ := hit(StartsBeforeReply); r != nil {
		t.Fatalf("the first hit panicked: %v", r)
	}
	r, lastRan := hit(StartsBeforeReply)
	if r != "failpoint starts-before-reply" || !lastRan {
		t.Errorf("the second hit: recovered %v, last step run %v; want the point's panic after its last step", r, lastRan)
	}
	if r, _ := hit(JournalAfterWrite); r != nil {
		t.Errorf("a kill point panicked: %v", r)
	}
	if diff := cmp.Diff([]string{JournalAfterWrite}, fired); diff != "" {
		t.Errorf("actions run (-want +got):\n%s", diff)
	}
}

func TestEnableNamesWhatIsWrong(t *testing.T) {
	for spec, says := range map[string]string{
		"crash-somewhere":                         `unknown point "crash-somewhere"`,
		"journal-after-write@0":                   "positive integer",
		"journal-after-write@x":                   `got "x"`,
		"journal-after-write,journal-after-write": "given twice",
		"journal-after-write=explode":             `unknown action "explode"`,
		"journal-after-write@2=":                  `unknown action ""`,
	} {
		err := Enable(spec, func(string) {})
		if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), says) {
			t.Errorf("%q: %v, want ErrBadSpec saying %q", spec, err, says)
		}
		if Armed() {
			t.Errorf("%q armed points", spec)
		}
	}
}

// FuzzEnable: any specification is armed or refused with ErrBadSpec,
// never a panic, and a refused one arms nothing.
func FuzzEnable(f *testing.F) {
	for _, s := range []string{"", "journal-after-write@3", "starts-before-reply, starts-after-reply@1", "starts-before-reply@2=panic", "x=kill", "x@", "@", ",,", "journal-after-write@-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		defer func() { _ = Enable("", nil) }()
		err := Enable(spec, func(string) {})
		if err != nil && (!errors.Is(err, ErrBadSpec) || Armed()) {
			t.Fatalf("%q: %v (armed %v)", spec, err, Armed())
		}
		if err == nil && strings.TrimSpace(spec) != "" && !Armed() {
			t.Fatalf("%q accepted but nothing armed", spec)
		}
	})
}
