package scenario

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPublicScenarios runs every acceptance scenario (copied from
// shared/scenarios/public into testdata) through RunFile, the code path of
// `sharetree fairshare`, and checks every expectation within its tolerance.
func TestPublicScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/public/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 21 {
		t.Fatalf("found %d public scenarios in testdata/public, want at least 21", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := ParseFile(path)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			expectations := 0
			for _, s := range f.Steps {
				expectations += len(s.Expect)
			}
			if expectations == 0 {
				t.Fatalf("scenario has no expectations")
			}
			rep, err := RunFile(path)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			failures, err := Check(f, rep)
			if err != nil {
				t.Fatal(err)
			}
			for _, fl := range failures {
				t.Error(fl)
			}
		})
	}
}

// TestPublicScenariosMatchShared guards the copy: the testdata files must be
// identical to the shared acceptance cases when those are present.
func TestPublicScenariosMatchShared(t *testing.T) {
	shared := "../../../shared/scenarios/public"
	entries, err := os.ReadDir(shared)
	if err != nil {
		t.Skipf("shared scenarios not present: %v", err)
	}
	for _, e := range entries {
		want, err := os.ReadFile(filepath.Join(shared, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("testdata/public", e.Name()))
		if err != nil {
			t.Errorf("%s is not copied into testdata/public: %v", e.Name(), err)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("testdata/public/%s differs from shared/scenarios/public/%s", e.Name(), e.Name())
		}
	}
}
