package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/treeconf"
)

// startConfig starts a real nats-server and the configuration service and
// returns the server's URL.
func startConfig(t *testing.T) string {
	t.Helper()
	srv := testutil.StartNATS(t)
	nc := testutil.Connect(t, srv)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	store, err := treeconf.OpenStore(t.Context(), js, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := treeconf.NewService(nc, store, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	return srv.ClientURL()
}

func TestConfigCLIRoundTrip(t *testing.T) {
	url := startConfig(t)
	cli := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, append(args, "--nats-url", url)...)
		if code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
		return out
	}
	out := cli("apply", "-f", "examples/pool-trees.yaml", "--dry-run")
	for _, want := range []string{"create  tree physical", "pool physical/project-batch", "weight: 10", "dry run: 6 changes, nothing written"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if out := cli("tree", "list"); strings.Contains(out, "physical") {
		t.Fatalf("dry run wrote:\n%s", out)
	}
	out = cli("apply", "-f", "examples/pool-trees.yaml")
	if !strings.Contains(out, "applied 6 changes") {
		t.Errorf("apply:\n%s", out)
	}
	if out := cli("apply", "-f", "examples/pool-trees.yaml"); !strings.Contains(out, "no changes") {
		t.Errorf("second apply:\n%s", out)
	}
	out = cli("pool", "set", "physical/project-backup", "integral_guarantees",
		"{guarantee_type: burst, resource_flow: {cpu: 1000}, burst_guarantee_resources: {cpu: 2000}}", "-o", "json")
	var doc struct {
		Tree, Pool string
		Revision   uint64
		Config     map[string]any
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	ig, _ := doc.Config["integral_guarantees"].(map[string]any)
	if doc.Tree != "physical" || doc.Pool != "project-backup" || doc.Revision == 0 || ig["guarantee_type"] != "burst" {
		t.Errorf("pool set -o json = %+v", doc)
	}
	out = cli("pool", "get", "physical/project-backup", "-o", "yaml")
	if !strings.Contains(out, "guarantee_type: burst") || !strings.Contains(out, "pool: project-backup") {
		t.Errorf("pool get -o yaml:\n%s", out)
	}
	out = cli("pool", "get", "physical/project-backup")
	if !strings.Contains(out, "# tree physical, pool project-backup, revision") || !strings.Contains(out, "weight") {
		t.Errorf("pool get:\n%s", out)
	}
	cli("pool", "create", "physical/research", "--config", "{weight: 2}")
	cli("pool", "create", "physical/research$alice", "--parent", "research")
	out = cli("pool", "list", "physical")
	if !strings.Contains(out, "research$alice  research") {
		t.Errorf("pool list:\n%s", out)
	}
	cli("pool", "set", "physical/research", "weight", "null")
	cli("tree", "create", "cloud", "--config", "{node_tag_filter: 'cloud & !spot'}")
	cli("tree", "set", "cloud", "max_running_operation_count_per_pool", "5")
	out = cli("tree", "get", "cloud", "-o", "json")
	if !strings.Contains(out, `"node_tag_filter":"cloud & !spot"`) {
		t.Errorf("tree get -o json:\n%s", out)
	}
	cli("cluster", "set", "default_tree", "cloud")
	if out := cli("cluster", "get"); !strings.Contains(out, "default_tree  cloud") {
		t.Errorf("cluster get:\n%s", out)
	}
	if out := cli("tree", "list"); !strings.Contains(out, "cloud     *") {
		t.Errorf("tree list:\n%s", out)
	}
	cli("pool", "remove", "physical/research$alice")
	out = cli("apply", "-f", "examples/pool-trees.yaml", "--prune", "--dry-run", "-o", "json")
	var res struct {
		Applied bool
		Changes []struct{ Action, Kind, Tree, Pool string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range res.Changes {
		got = append(got, c.Action+" "+c.Kind+" "+c.Tree+"/"+c.Pool)
	}
	want := "update pool physical/project-backup,update cluster /,remove pool physical/research,remove tree cloud/"
	if strings.Join(got, ",") != want {
		t.Errorf("prune dry run = %v, want %s", got, want)
	}
	cli("cluster", "set", "default_tree", "physical")
	if out := cli("tree", "remove", "cloud", "-o", "yaml"); !strings.Contains(out, "removed: true") {
		t.Errorf("tree remove -o yaml:\n%s", out)
	}
}

func TestConfigCLIRefusals(t *testing.T) {
	url := startConfig(t)
	if code, _, errOut := runCLI(t, "apply", "-f", "examples/pool-trees.yaml", "--nats-url", url); code != 0 {
		t.Fatal(errOut)
	}
	badApply := writeFile(t, "bad.yaml", "version: 1\ntrees: [{name: physical, pools: [{name: a, wieght: 2}]}]\n")
	cases := map[string]struct {
		args    []string
		code    int
		wantErr []string
	}{
		"rule":                 {[]string{"pool", "set", "physical/project-backup", "strong_guarantee_resources", "{cpu: 30}"}, 1, []string{"guarantee_sum", "sum to 110"}},
		"in use":               {[]string{"pool", "remove", "physical/project-root"}, 1, []string{"FAILED_PRECONDITION", "pool_has_children"}},
		"not found":            {[]string{"tree", "get", "nope"}, 1, []string{"NOT_FOUND"}},
		"conflict":             {[]string{"pool", "set", "physical/project-backup", "weight", "2", "--revision", "1"}, 1, []string{"CONFLICT", "expected revision 1"}},
		"bad TREE/POOL":        {[]string{"pool", "get", "physical"}, 2, []string{`"physical" is not TREE/POOL`}},
		"bad pool name":        {[]string{"pool", "get", "physical/a.b"}, 2, []string{"pool name", `"a.b"`}},
		"missing value":        {[]string{"pool", "set", "physical/project-root", "weight"}, 2, []string{"give KEY VALUE"}},
		"too many args":        {[]string{"tree", "get", "a", "b"}, 2, []string{"want NAME, got 2"}},
		"bad output":           {[]string{"tree", "list", "-o", "xml"}, 2, []string{`--output "xml"`}},
		"file and config":      {[]string{"tree", "create", "x", "-f", badApply, "--config", "{}"}, 2, []string{"not both"}},
		"bad local document":   {[]string{"pool", "create", "physical/x", "--config", "{wieght: 2}"}, 2, []string{"--config", `unknown key "wieght"`}},
		"apply without -f":     {[]string{"apply"}, 2, []string{"-f TREES.yaml is required"}},
		"apply bad file":       {[]string{"apply", "-f", badApply}, 2, []string{badApply, "trees[0].pools[0].wieght", "line 2"}},
		"apply missing file":   {[]string{"apply", "-f", badApply + ".nope"}, 2, []string{".nope"}},
		"unknown cluster key":  {[]string{"cluster", "set", "colour", "red"}, 2, []string{`unknown key "colour"`}},
		"bad parent flag":      {[]string{"pool", "create", "physical/x", "--parent", "a b"}, 2, []string{"--parent"}},
		"set with both":        {[]string{"tree", "set", "physical", "k", "v", "--config", "{}"}, 2, []string{"give KEY VALUE"}},
		"unknown flag":         {[]string{"tree", "list", "--frobnicate"}, 2, []string{"frobnicate"}},
		"empty value is null?": {[]string{"pool", "set", "physical/project-root", "weight", ""}, 1, []string{"value is empty"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append(tc.args, "--nats-url", url)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
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
