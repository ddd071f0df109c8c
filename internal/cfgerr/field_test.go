package cfgerr

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	errInner = errors.New("inner: bad config")
	errOuter = errors.New("outer: bad config")
)

func TestFieldErrorNamesFieldAndWrapsSentinels(t *testing.T) {
	err := New(errInner, "HeartbeatPeriod", "must be positive, got %s", "0s")
	if d := cmp.Diff("inner: bad config: HeartbeatPeriod: must be positive, got 0s", err.Error()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if !errors.Is(err, errInner) {
		t.Error("does not wrap its sentinel")
	}

	outer := Within(errOuter, "Actors", err)
	if d := cmp.Diff("outer: bad config: inner: bad config: Actors.HeartbeatPeriod: must be positive, got 0s", outer.Error()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if !errors.Is(outer, errOuter) || !errors.Is(outer, errInner) {
		t.Error("the nested error does not wrap both sentinels")
	}
	fe, ok := Field(outer)
	if !ok || fe.Field != "Actors.HeartbeatPeriod" || fe.Reason != "must be positive, got 0s" {
		t.Errorf("Field = %+v, %v", fe, ok)
	}
	if f, _ := Field(err); f.Field != "HeartbeatPeriod" {
		t.Errorf("Within changed the inner error's field to %q", f.Field)
	}

	plain := Within(errOuter, "Actors", errors.New("no field"))
	if _, ok := Field(plain); ok || !errors.Is(plain, errOuter) || plain.Error() != "outer: bad config: no field" {
		t.Errorf("plain error wrapped as %v", plain)
	}
}

func TestWrapKeepsTheCauseAndBaseDropsTheIndex(t *testing.T) {
	cause := errors.New("tag is empty")
	err := Wrap(errInner, "Tags[1]", cause)
	if !errors.Is(err, errInner) || !errors.Is(err, cause) {
		t.Error("Wrap does not wrap both the sentinel and the cause")
	}
	fe, _ := Field(err)
	if d := cmp.Diff("inner: bad config: Tags[1]: tag is empty", err.Error()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for field, want := range map[string]string{"Tags[1]": "Tags", "Tags": "Tags", "A.B[2][3]": "A.B[2]", "[1]": "[1]"} {
		fe.Field = field
		if got := fe.Base(); got != want {
			t.Errorf("Base of %q = %q, want %q", field, got, want)
		}
	}
}
