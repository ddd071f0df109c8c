package scenario

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
)

func TestParseTrees(t *testing.T) {
	f, err := ParseTrees("trees.yaml", []byte(`
version: 1
default_tree: gpu
trees:
  - name: physical
    config: {main_resource: cpu, fair_share_update_period: 500ms}
    pools:
      - {name: project-root, strong_guarantee_resources: {cpu: 10}}
      - {name: adhoc, parent: project-root, weight: 2}
  - name: gpu
`))
	if err != nil {
		t.Fatal(err)
	}
	got := []string{f.DefaultTree, f.Trees[0].Name, f.Trees[1].Name, f.Trees[0].Config.FairShareUpdatePeriod.String()}
	if diff := cmp.Diff([]string{"gpu", "physical", "gpu", "500ms"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if n := len(f.Trees[0].Pools); n != 2 || f.Trees[0].Pools[1].Parent != "project-root" {
		t.Errorf("pools = %+v", f.Trees[0].Pools)
	}
	if f.Trees[1].Config.MainResource != scheduler.DefaultTreeConfig().MainResource {
		t.Errorf("second tree lost its defaults")
	}
}

func TestParseTreesErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"no version", "trees: [{name: a}]", "version"},
		{"no trees", "version: 1", "trees"},
		{"empty trees", "version: 1\ntrees: []", "at least one tree"},
		{"bad tree name", "version: 1\ntrees: [{name: a.b}]", "trees[0].name"},
		{"dup tree", "version: 1\ntrees: [{name: a}, {name: a}]", "duplicate tree name"},
		{"unknown default", "version: 1\ndefault_tree: b\ntrees: [{name: a}]", "default_tree"},
		{"unknown key", "version: 1\ntrees: [{name: a, colour: red}]", "colour"},
		{"bad parent", "version: 1\ntrees: [{name: a, pools: [{name: x, parent: y}]}]", "trees[0].pools[0].parent"},
		{"bad weight", "version: 1\ntrees: [{name: a, pools: [{name: x, weight: -1}]}]", "weight"},
		{"bad period", "version: 1\ntrees: [{name: a, config: {fair_share_update_period: soon}}]", "fair_share_update_period"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTrees("t.yaml", []byte(tc.in))
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrInvalidScenario) {
				t.Fatalf("error = %v, want *Error", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "t.yaml") {
				t.Errorf("error %q does not name %q and the file", err, tc.want)
			}
		})
	}
}

func TestSubmitACLOption(t *testing.T) {
	doc, err := ParsePoolDoc("pool.yaml", []byte(`{submit_acl: [alice, "*"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"alice", "*"}, doc.Options.SubmitACL); diff != "" {
		t.Errorf("submit_acl (-want +got):\n%s", diff)
	}
	// An empty list admits nobody: it is not "no list".
	if doc, err := ParsePoolDoc("pool.yaml", []byte(`{submit_acl: []}`)); err != nil || doc.Options.SubmitACL == nil {
		t.Errorf("empty submit_acl: %v, %#v; want an empty, non-nil list", err, doc.Options.SubmitACL)
	}
	if doc, _ := ParsePoolDoc("pool.yaml", []byte(`{weight: 2}`)); doc.Options.SubmitACL != nil {
		t.Errorf("no submit_acl: %#v, want nil", doc.Options.SubmitACL)
	}
	// The canonical document keeps it, and reads back the same.
	back, err := ParsePoolDoc("back.yaml", mustJSON(t, EncodePoolDoc(doc)))
	if err != nil || !cmp.Equal(back.Options.SubmitACL, doc.Options.SubmitACL) {
		t.Errorf("round trip: %v, %v", back.Options.SubmitACL, err)
	}
	for in, want := range map[string]string{
		`{submit_acl: [bob, bob]}`: `user "bob" is listed twice`,
		`{submit_acl: [b.c]}`:      "submit_acl[0]",
		`{submit_acl: bob}`:        "submit_acl",
	} {
		if _, err := ParsePoolDoc("pool.yaml", []byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", in, err, want)
		}
	}
	// What-if scenarios do not take it.
	if _, err := Parse("s.yaml", []byte("version: 1\ncluster: {resources: {cpu: 1}}\npools: [{name: a, submit_acl: [x]}]\n")); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("a scenario with submit_acl: %v, want ErrUnknownKey", err)
	}
}
