package subjects

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// verbLike are names spelled like fixed tokens of the subject space.
var verbLike = []string{"get", "set", "create", "remove", "pools", "pool", "tree", "trees", "apply", "config", "cluster", "a$b", "x-1_Y"}

func TestConfigTreeRoundTrip(t *testing.T) {
	for _, tree := range verbLike {
		for _, verb := range TreeVerbs {
			s, err := ConfigTree(tree, verb)
			if err != nil {
				t.Fatal(err)
			}
			gt, gv, err := ParseConfigTree(s)
			if err != nil {
				t.Fatalf("ParseConfigTree(%q): %v", s, err)
			}
			if gt != tree || gv != verb {
				t.Errorf("round trip of %s gave %s/%s", s, gt, gv)
			}
		}
	}
}

func TestConfigPoolRoundTrip(t *testing.T) {
	for _, tree := range verbLike {
		for _, pool := range verbLike {
			for _, verb := range PoolVerbs {
				s, err := ConfigPool(tree, pool, verb)
				if err != nil {
					t.Fatal(err)
				}
				gt, gp, gv, err := ParseConfigPool(s)
				if err != nil {
					t.Fatalf("ParseConfigPool(%q): %v", s, err)
				}
				if diff := cmp.Diff([]string{tree, pool, string(verb)}, []string{gt, gp, string(gv)}); diff != "" {
					t.Errorf("round trip of %s (-want +got):\n%s", s, diff)
				}
			}
		}
	}
}

// matches reports whether a subject matches a pattern with * and >.
func matches(pattern, subject string) bool {
	p, s := strings.Split(pattern, "."), strings.Split(subject, ".")
	for i, tok := range p {
		if tok == ">" {
			return len(s) > i
		}
		if i >= len(s) || (tok != "*" && tok != s[i]) {
			return false
		}
	}
	return len(p) == len(s)
}

// TestConfigSubjectsMatchOneEndpoint checks that every request subject, for
// names spelled like verbs, matches exactly the endpoint that serves it.
func TestConfigSubjectsMatchOneEndpoint(t *testing.T) {
	endpoints := map[string]string{}
	for _, v := range ConfigVerbs {
		s, err := Config(v)
		if err != nil {
			t.Fatal(err)
		}
		endpoints[s] = "config." + string(v)
	}
	for _, v := range TreeVerbs {
		endpoints[ConfigTreeAll(v)] = "tree." + string(v)
	}
	for _, v := range PoolVerbs {
		endpoints[ConfigPoolAll(v)] = "pool." + string(v)
	}
	check := func(subject, want string) {
		t.Helper()
		var got []string
		for pat, name := range endpoints {
			if matches(pat, subject) {
				got = append(got, name)
			}
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s matches %v, want only %s", subject, got, want)
		}
	}
	for _, v := range ConfigVerbs {
		s, _ := Config(v)
		check(s, "config."+string(v))
	}
	for _, name := range verbLike {
		for _, v := range TreeVerbs {
			s, _ := ConfigTree(name, v)
			check(s, "tree."+string(v))
		}
		for _, v := range PoolVerbs {
			s, _ := ConfigPool(name, name, v)
			check(s, "pool."+string(v))
		}
	}
}

func TestConfigFixedSubjects(t *testing.T) {
	apply, _ := Config(ConfigApply)
	got := []string{apply, ConfigTreeAll(TreeGet), ConfigPoolAll(PoolSet)}
	want := []string{"sharetree.v1.config.apply", "sharetree.v1.tree.*.get", "sharetree.v1.tree.*.pool.*.set"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestConfigSubjectsReject(t *testing.T) {
	for _, tok := range []string{"", "a.b", "a*", ">", "$x", "a b"} {
		if _, err := ConfigTree(tok, TreeGet); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("ConfigTree(%q): %v", tok, err)
		}
		if _, err := ConfigPool("t", tok, PoolGet); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("ConfigPool(t, %q): %v", tok, err)
		}
	}
	if _, err := ConfigTree("t", "list"); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("unknown tree verb accepted: %v", err)
	}
	if _, err := ConfigPool("t", "p", "pools"); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("unknown pool verb accepted: %v", err)
	}
	if _, err := Config("remove"); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("unknown config verb accepted: %v", err)
	}
	for _, s := range []string{"sharetree.v1.tree.t", "sharetree.v1.tree.t.list", "sharetree.v1.tree.t.pool.p.get", "sharetree.v2.tree.t.get", "sharetree.v1.tree..get"} {
		if _, _, err := ParseConfigTree(s); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("ParseConfigTree(%q): %v", s, err)
		}
	}
	for _, s := range []string{"sharetree.v1.tree.t.get", "sharetree.v1.tree.t.pools.p.get", "sharetree.v1.tree.t.pool.p.pools", "sharetree.v1.tree.t.pool.$p.get"} {
		if _, _, _, err := ParseConfigPool(s); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("ParseConfigPool(%q): %v", s, err)
		}
	}
}

func TestConfigKeysRoundTrip(t *testing.T) {
	cases := []struct {
		key  ConfigKey
		want string
	}{
		{ConfigKey{Kind: ConfigKeyCluster}, "cluster"},
		{ConfigKey{Kind: ConfigKeyTree, Tree: "physical"}, "tree.physical"},
		{ConfigKey{Kind: ConfigKeyTree, Tree: "cluster"}, "tree.cluster"},
		{ConfigKey{Kind: ConfigKeyPool, Tree: "physical", Pool: "research$alice"}, "pool.physical.research=alice"},
		{ConfigKey{Kind: ConfigKeyPool, Tree: "a$b", Pool: "tree"}, "pool.a=b.tree"},
	}
	for _, tc := range cases {
		if got := tc.key.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.key, got, tc.want)
		}
		back, err := ParseConfigKey(tc.want)
		if err != nil {
			t.Fatal(err)
		}
		if back != tc.key {
			t.Errorf("ParseConfigKey(%q) = %+v, want %+v", tc.want, back, tc.key)
		}
	}
	k, err := ConfigPoolKey("t", "p$u")
	if err != nil || k != "pool.t.p=u" {
		t.Errorf("ConfigPoolKey = %q, %v", k, err)
	}
	k, err = ConfigTreeKey("t")
	if err != nil || k != "tree.t" {
		t.Errorf("ConfigTreeKey = %q, %v", k, err)
	}
	f, err := ConfigPoolKeys("a$b")
	if err != nil || f != "pool.a=b.*" {
		t.Errorf("ConfigPoolKeys = %q, %v", f, err)
	}
	for _, bad := range []string{"", "tree", "tree.", "tree.a.b", "pool.a", "pool.a.b.c", "pool.=a.b", "other.a", "clusterx"} {
		if _, err := ParseConfigKey(bad); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ParseConfigKey(%q): %v, want ErrInvalidKey", bad, err)
		}
	}
	if _, err := ConfigPoolKey("t", "$p"); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("ConfigPoolKey accepted a leading $: %v", err)
	}
}
