package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimRunsTheExampleAndWritesItsReport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report")
	code, stdout, stderr := runCLI(t, "sim", "-f", "examples/sim.yaml", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"sharetree sim: production, research, a burst pool and a graceful service on 160 cores",
		"2h0m0s of virtual time, 10 nodes, 8 operations",
		"research-sweep", "prod-etl-5", "search-frontend  services  running",
		"MEAN FAIR SHARE", "  burst", "wrote " + filepath.Join(out, "report.html"),
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	for name, want := range map[string]string{
		"report.html":    "Accumulated volume (cpu·s)",
		"pools.csv":      "time_seconds,pool,usage_user_slots",
		"operations.csv": "prod-etl-1,prod,completed,600,600,",
	} {
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), want) {
			t.Errorf("%s lacks %q", name, want)
		}
	}
	// The same file, the same output.
	if _, again, _ := runCLI(t, "sim", "-f", "examples/sim.yaml", "--out", out); again != stdout {
		t.Errorf("a second run printed something else:\n%s\nthen\n%s", stdout, again)
	}
}
