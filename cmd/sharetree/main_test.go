package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/sharetree/sharetree/nodeagent"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFairshareJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "fairshare", "-f", "../../internal/scenario/testdata/public/seeds-project-pools.yaml")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var rep struct {
		Version int `json:"version"`
		Steps   []struct {
			Time     string                                `json:"time"`
			Elements map[string]map[string]json.RawMessage `json:"elements"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if rep.Version != 1 || len(rep.Steps) != 2 {
		t.Fatalf("version %d, %d steps; want 1 and 2", rep.Version, len(rep.Steps))
	}
	batch := rep.Steps[1].Elements["project-batch"]
	var fs struct {
		Total map[string]float64 `json:"total"`
	}
	if err := json.Unmarshal(batch["fair_share"], &fs); err != nil {
		t.Fatal(err)
	}
	if got, want := fs.Total["cpu"], 0.6363636363636364; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("project-batch fair share cpu = %v, want %v", got, want)
	}
	if len(fs.Total) != 5 {
		t.Errorf("share has %d resources, want all 5: %v", len(fs.Total), fs.Total)
	}
}

func TestFairshareTable(t *testing.T) {
	code, out, errOut := runCLI(t, "fairshare", "-o", "table", "-f", "../../internal/scenario/testdata/public/seeds-project-pools.yaml")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"ELEMENT", "FAIR cpu", "      adhoc-small", "project-batch", "0.6364"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestBadInputExitsTwoWithNothingOnStdout(t *testing.T) {
	bad := writeFile(t, "bad.yaml", "version: 1\ncluster: {resources: {cpu: 10}}\npools:\n  - {name: a, wieght: 2}\n")
	spec := writeFile(t, "spec.yaml", "pool: a\ntasks: [{name: t, job_count: 1, job_resources: {cpu: 1}, simulated_duration: 1s}]\n")
	simBad := writeFile(t, "simbad.yaml", "version: 1\ncluster: {nodes: [{resources: {cpu: 4}}]}\nworkload: [{id: a, tasks: [{jobs: 1, resources: {cpu: 8}, duration: 1s}]}]\nsimulation: {duration: 1m}\n")
	clash := writeFile(t, "clash.yaml", "version: 1\ncluster: {resources: {cpu: 10}}\npools: [{name: a}]\noperations: [{id: a, pool: a, demand: {cpu: 1}}]\n")
	cases := map[string]struct {
		args    []string
		wantErr []string
	}{
		"unknown key":               {[]string{"fairshare", "-f", bad}, []string{bad, "pools[0].wieght", `unknown key "wieght"`}},
		"sim unknown key":           {[]string{"sim", "-f", bad}, []string{bad, `missing required key "workload"`}},
		"sim job fits nowhere":      {[]string{"sim", "-f", simBad}, []string{simBad, "workload[0].tasks[0].resources", "fits on no node"}},
		"sim no -f":                 {[]string{"sim"}, []string{"sim: -f FILE is required"}},
		"sim bad resource":          {[]string{"sim", "-f", "examples/sim.yaml", "--resource", "disk"}, []string{"--resource", `"disk"`}},
		"sim missing file":          {[]string{"sim", "-f", filepath.Join(t.TempDir(), "nope.yaml")}, []string{"nope.yaml"}},
		"missing file":              {[]string{"fairshare", "-f", filepath.Join(t.TempDir(), "nope.yaml")}, []string{"nope.yaml"}},
		"no -f":                     {[]string{"fairshare"}, []string{"-f FILE is required"}},
		"-f a directory":            {[]string{"fairshare", "-f", t.TempDir()}, []string{"is a directory"}},
		"apply -f a dir":            {[]string{"apply", "-f", t.TempDir(), "--nats-url", "nats://127.0.0.1:1"}, []string{"is a directory"}},
		"submit -f a dir":           {[]string{"op", "submit", "-f", t.TempDir(), "--nats-url", "nats://127.0.0.1:1"}, []string{"is a directory"}},
		"submit bad request id":     {[]string{"op", "submit", "-f", spec, "--request-id", "a b", "--nats-url", "nats://127.0.0.1:1"}, []string{"--request-id", `"a b"`, "not a letter"}},
		"submit bad user":           {[]string{"op", "submit", "-f", spec, "--user", "a.b", "--nats-url", "nats://127.0.0.1:1"}, []string{"--user", `"a.b"`}},
		"abort bad user":            {[]string{"op", "abort", "op-1", "--user", "a.b", "--nats-url", "nats://127.0.0.1:1"}, []string{"--user", `"a.b"`}},
		"update bad user":           {[]string{"op", "update", "op-1", "--weight", "2", "--user", "a*", "--nats-url", "nats://127.0.0.1:1"}, []string{"--user", `"a*"`}},
		"engine rule":               {[]string{"fairshare", "-f", clash}, []string{clash, `operation id "a" is also a pool name`}},
		"bad -o":                    {[]string{"fairshare", "-o", "xml", "-f", bad}, []string{"-o must be json or table"}},
		"unknown flag":              {[]string{"fairshare", "--frobnicate"}, []string{"frobnicate"}},
		"demo bad -o":               {[]string{"demo", "-o", "yaml"}, []string{"-o must be json or table"}},
		"positional arg":            {[]string{"fairshare", "-f", bad, "extra"}, []string{`unexpected argument "extra"`}},
		"unknown command":           {[]string{"frobnicate"}, []string{`unexpected argument "frobnicate"`}},
		"load serve twice":          {[]string{"load", "--serve", "--server-process"}, []string{"--serve and --server-process exclude each other"}},
		"load two servers":          {[]string{"load", "--server-process", "--nats-url", "nats://127.0.0.1:1"}, []string{"--server-process and --nats-url exclude each other"}},
		"load bad port":             {[]string{"load", "--serve", "--port", "70000"}, []string{"--port 70000"}},
		"load bad journal interval": {[]string{"load", "--journal-batch-interval", "-5ms"}, []string{"--journal-batch-interval"}},
		"negative value":            {[]string{"pool", "set", "a/b", "weight", "-1"}, []string{"unknown shorthand flag", `goes after "--"`, "-- -1"}},
		"bad default tree":          {[]string{"cluster", "set", "default_tree", "a.b", "--nats-url", "nats://127.0.0.1:1"}, []string{"tree name"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, errOut)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
}

func TestDemoWhatIfRuns(t *testing.T) {
	code, out, errOut := runCLI(t, "demo", "--what-if")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"project-root", "project-batch", "burst", "relaxed", "pending"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
}

func TestLiveDemoRuns(t *testing.T) {
	code, out, errOut := runCLI(t, "demo", "--duration", "3s", "--refresh", "500ms")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"FAIR SHARE", "USAGE", "DEMAND", "project-adhoc", "project-batch", "project-backup", "burst", "relaxed", "demo finished"} {
		if !strings.Contains(out, want) {
			t.Errorf("live demo output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "8 nodes") {
		t.Errorf("the 8 agents never registered:\n%s", out)
	}
}

func TestDemoBadFlags(t *testing.T) {
	for _, args := range [][]string{{"demo", "--duration", "-1s"}, {"demo", "--agents", "0"}, {"demo", "--refresh", "0s"},
		{"demo", "--http-addr", "localhost"}, {"demo", "--http-addr", "127.0.0.1:99999"}} {
		if code, _, errOut := runCLI(t, args...); code != 2 || !strings.Contains(errOut, args[1]) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming the flag", args, code, errOut)
		}
	}
}

func TestServerBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"server", "--preemption-rate-limit", "-1"},
		{"server", "--preemption-rate-limit", "NaN"},
		{"server", "--gc-percent", "-5"},
		{"server", "--heartbeat-period", "0s"},
		{"server", "--state-persist-period", "0s"},
		{"server", "--state-persist-period", "-1m"},
		{"server", "--job-revival-timeout", "-1s"},
		{"server", "--progress-persist-period", "0s"},
		{"server", "--progress-write-rate", "0"},
		{"server", "--progress-write-rate", "+Inf"},
		{"server", "--journal-batch-interval", "-1ms"},
		{"server", "--journal-batch-interval", "2s"},
		{"server", "--port", "70000"},
		{"server", "--http-addr", "localhost"},
		{"server", "--data-dir", ""},
		{"server", "--log-level", "loud"},
		{"server", "--server-name", ""},
		{"server", "--server-name", "two words"},
		{"server", "--lease-ttl", "1s"},
		{"server", "--lease-ttl", "2500ms"},
		{"server", "--storage-probe-period", "0s"},
		{"server", "--replicas", "3"},
		{"server", "--replicas", "0"},
		{"server", "--max-store", "100"},
		{"server", "--max-store", "0"},
		{"server", "--event-max-bytes", "0"},
		{"server", "--journal-max-bytes", "-1"},
		{"server", "--dashboard-max-bytes", "0"},
		{"server", "--dashboard-pools", "0"},
		{"server", "--max-heartbeat-passes", "-1"},
		{"server", "--fair-share-event-period", "0s"},
		{"server", "--dashboard-resolution", "0s"},
		{"server", "--dashboard-window", "1s", "--dashboard-resolution", "2s"},
	} {
		if code, _, errOut := runCLI(t, args...); code != 2 || !strings.HasPrefix(errOut, "sharetree: "+args[1]) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and an error that begins with the flag", args, code, errOut)
		}
	}
}

// A --pools file that breaks a configuration rule (here a pool's
// max_running_operation_count above the tree's max_operation_count_per_pool,
// 50 by default) is bad input: exit 2 naming the file and the key, refused
// before the scheduler starts, not after it started and tried to seed.
func TestServerRefusesPoolsFileBreakingARule(t *testing.T) {
	pools := writeFile(t, "trees.yaml", "version: 1\ntrees:\n  - name: a\n    pools:\n      - {name: p, max_running_operation_count: 100}\n")
	code, out, errOut := runCLI(t, "server", "--pools", pools, "--data-dir", t.TempDir(), "--port", "-1", "--http-addr", "")
	if code != 2 || out != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and nothing on stdout", code, out, errOut)
	}
	for _, want := range []string{pools, `pool "p" max_running_operation_count`, "running_above_total"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
}

// A name holding a tab or a line break (names are free-form) is quoted in
// the table, so it moves no column or row.
func TestFairshareTableQuotesControlCharacters(t *testing.T) {
	f := writeFile(t, "ctl.yaml", "version: 1\ncluster: {resources: {cpu: 10}}\npools: [{name: \"a\\tb\"}]\n"+
		"operations: [{id: \"op\\n1\", pool: \"a\\tb\", demand: {cpu: 1}}]\n")
	code, out, errOut := runCLI(t, "fairshare", "-o", "table", "-f", f)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var rows []string
	for _, l := range lines[1:] { // after the title
		rows = append(rows, strings.Fields(l)[0])
	}
	if diff := cmp.Diff([]string{"ELEMENT", "<Root>", `"a\tb"`, `"op\n1"`}, rows); diff != "" {
		t.Errorf("first cells (-want +got):\n%s\n%s", diff, out)
	}
}

// Every bad value of a `sharetree load` flag that loadgen.Config.Validate
// checks exits 2 naming the flag, as the user wrote it, with the reason.
func TestLoadBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"load", "--agents", "0"},
		{"load", "--agents-per-connection", "0"},
		{"load", "--operations", "0"},
		{"load", "--pools", "-1"},
		{"load", "--jobs-per-operation", "-1"},
		{"load", "--job-duration", "0s"},
		{"load", "--heartbeat-period", "0s"},
		{"load", "--heartbeat-timeout", "0s"},
		{"load", "--warmup", "-1s"},
		{"load", "--duration", "0s"},
		{"load", "--fair-share-update-period", "-1s"},
		{"load", "--journal-batch-interval", "2s"},
		{"load", "--target-p99", "-1ms"},
		{"load", "--target-starts", "-1"},
		{"load", "--node-prefix", "a.b"},
		{"load", "--job-resources", "cpu=100"},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, "sharetree: "+args[1]+": ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and an error that begins with the flag", args, code, out, errOut)
		}
	}
}

// The flags the configuration errors are mapped to exist.
func TestConfigFlagMapsNameRealFlags(t *testing.T) {
	for _, c := range []struct {
		cmd   *cobra.Command
		flags map[string]string
	}{{newServerCmd(), serverFlags}, {newLoadCmd(), loadFlags}, {newAgentCmd(), agentFlagNames}} {
		for field, flag := range c.flags {
			if c.cmd.Flags().Lookup(flag) == nil {
				t.Errorf("%s: field %s maps to --%s, which is not a flag", c.cmd.Name(), field, flag)
			}
		}
	}
}

// A flag-named configuration error still wraps the configuration's
// sentinel.
func TestFlagNamedConfigErrorKeepsItsSentinel(t *testing.T) {
	f := agentFlags{nodeID: "a.b", resources: "cpu=8", period: time.Second, logLevel: "info"}
	_, _, err := f.config()
	if !errors.Is(err, nodeagent.ErrInvalidConfig) || !strings.HasPrefix(err.Error(), "agent: --node-id: ") {
		t.Errorf("error %v; want it to name --node-id and wrap nodeagent.ErrInvalidConfig", err)
	}
}
