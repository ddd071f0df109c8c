package registry

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRegisterListUnregister(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []Instance{{"op.0.1.0", "127.0.0.1:2"}, {"op.0.0.0", "127.0.0.1:1"}} {
		if err := Register(dir, r.ID, r.Addr); err != nil {
			t.Fatal(err)
		}
	}
	// Noise: a temporary file, a foreign file, an empty entry, a directory.
	for name, content := range map[string]string{".op.0.2.0.addr.tmp-1": "127.0.0.1:3\n", "notes.txt": "x", "empty.addr": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "d.addr"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Instance{{"op.0.0.0", "127.0.0.1:1"}, {"op.0.1.0", "127.0.0.1:2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if err := Register(dir, "op.0.0.0", "127.0.0.1:9"); err != nil {
		t.Fatal(err)
	}
	if addr, ok, err := Lookup(dir, "op.0.0.0"); err != nil || !ok || addr != "127.0.0.1:9" {
		t.Errorf("Lookup after re-register = %q, %v, %v", addr, ok, err)
	}
	if err := Unregister(dir, "op.0.0.0"); err != nil {
		t.Fatal(err)
	}
	if err := Unregister(dir, "op.0.0.0"); err != nil {
		t.Errorf("second Unregister: %v", err)
	}
	if _, ok, err := Lookup(dir, "op.0.0.0"); err != nil || ok {
		t.Errorf("Lookup after unregister: %v, %v", ok, err)
	}
	// No temporary file is left behind by Register.
	matches, _ := filepath.Glob(filepath.Join(dir, ".op.0.0.0*"))
	if len(matches) != 0 {
		t.Errorf("temporary files left: %v", matches)
	}
}

func TestInvalidIDsAndAddrs(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"", ".hidden", "a/b", `a\b`} {
		if err := Register(dir, id, "127.0.0.1:1"); !errors.Is(err, ErrInvalidID) {
			t.Errorf("Register(%q): %v", id, err)
		}
		if err := Unregister(dir, id); !errors.Is(err, ErrInvalidID) {
			t.Errorf("Unregister(%q): %v", id, err)
		}
	}
	for _, addr := range []string{"", "a\nb"} {
		if err := Register(dir, "x", addr); !errors.Is(err, ErrInvalidAddr) {
			t.Errorf("Register addr %q: %v", addr, err)
		}
	}
	if _, err := List(filepath.Join(dir, "missing")); err == nil {
		t.Error("List of a missing directory succeeded")
	}
}
