package subjects

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOrchidRoundTrip(t *testing.T) {
	cases := []struct {
		path OrchidPath
		want string
	}{
		{OrchidPath{Kind: OrchidTrees}, "sharetree.v1.orchid.trees"},
		{OrchidPath{Kind: OrchidTree, Tree: "physical"}, "sharetree.v1.orchid.physical.tree"},
		{OrchidPath{Kind: OrchidTree, Tree: "trees"}, "sharetree.v1.orchid.trees.tree"},
		{OrchidPath{Kind: OrchidRoot, Tree: "physical"}, "sharetree.v1.orchid.physical.root"},
		{OrchidPath{Kind: OrchidRoot, Tree: "root", Attribute: []string{"fair_share", "total"}}, "sharetree.v1.orchid.root.root.fair_share.total"},
		{OrchidPath{Kind: OrchidPool, Tree: "physical", Name: "research"}, "sharetree.v1.orchid.physical.pool.research"},
		{OrchidPath{Kind: OrchidPool, Tree: "pool", Name: "tree"}, "sharetree.v1.orchid.pool.pool.tree"},
		{OrchidPath{Kind: OrchidPool, Tree: "physical", Name: "research$alice", Attribute: []string{"operation_count"}},
			"sharetree.v1.orchid.physical.pool.research$alice.operation_count"},
		{OrchidPath{Kind: OrchidOperation, Tree: "physical", Name: "op-1"}, "sharetree.v1.orchid.physical.operation.op-1"},
		{OrchidPath{Kind: OrchidOperation, Tree: "operation", Name: "operation", Attribute: []string{"pending_reason"}},
			"sharetree.v1.orchid.operation.operation.operation.pending_reason"},
	}
	for _, tc := range cases {
		s, err := Orchid(tc.path)
		if err != nil {
			t.Fatalf("Orchid(%+v): %v", tc.path, err)
		}
		if s != tc.want {
			t.Errorf("Orchid(%+v) = %q, want %q", tc.path, s, tc.want)
		}
		got, err := ParseOrchid(s)
		if err != nil {
			t.Fatalf("ParseOrchid(%q): %v", s, err)
		}
		if diff := cmp.Diff(tc.path, got); diff != "" {
			t.Errorf("round trip of %s (-want +got):\n%s", s, diff)
		}
		if !matches(OrchidAll(), s) {
			t.Errorf("%s does not match the endpoint %s", s, OrchidAll())
		}
	}
}

func TestOrchidRejects(t *testing.T) {
	for name, p := range map[string]OrchidPath{
		"unknown kind":         {Kind: "pools", Tree: "t"},
		"trees with a tree":    {Kind: OrchidTrees, Tree: "t"},
		"tree with attribute":  {Kind: OrchidTree, Tree: "t", Attribute: []string{"fair_share"}},
		"tree with a name":     {Kind: OrchidTree, Tree: "t", Name: "p"},
		"no tree":              {Kind: OrchidRoot},
		"bad tree":             {Kind: OrchidRoot, Tree: "a.b"},
		"root as pool":         {Kind: OrchidPool, Tree: "t", Name: "<Root>"},
		"pool without name":    {Kind: OrchidPool, Tree: "t"},
		"bad operation":        {Kind: OrchidOperation, Tree: "t", Name: "op*"},
		"wildcard attribute":   {Kind: OrchidPool, Tree: "t", Name: "p", Attribute: []string{">"}},
		"empty attribute step": {Kind: OrchidPool, Tree: "t", Name: "p", Attribute: []string{"fair_share", ""}},
	} {
		if _, err := Orchid(p); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: Orchid(%+v) error = %v, want ErrInvalidToken", name, p, err)
		}
	}
	for _, s := range []string{
		"sharetree.v1.orchid", "sharetree.v1.orchid.physical", "sharetree.v2.orchid.trees", "sharetree.v1.orchid.trees.x.y.z",
		"sharetree.v1.orchid.t.tree.fair_share", "sharetree.v1.orchid.t.pool", "sharetree.v1.orchid.t.operation",
		"sharetree.v1.orchid.t.pools.p", "sharetree.v1.orchid.$t.tree", "sharetree.v1.orchid.t.pool.p..x",
	} {
		if _, err := ParseOrchid(s); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("ParseOrchid(%q) error = %v, want ErrInvalidSubject", s, err)
		}
	}
}
