package subjects

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// subjectSeeds are subjects of every shape the parsers know, valid and
// nearly valid, for the fuzz corpora.
var subjectSeeds = []string{
	"", ".", "..", "sharetree.v1", "sharetree.v1.", "sharetree.v2.node.n1.heartbeat",
	"sharetree.v1.node.n1.heartbeat", "sharetree.v1.node.n-1_X.signal", "sharetree.v1.node..heartbeat",
	"sharetree.v1.node.$n.heartbeat", "sharetree.v1.node.a$b.heartbeat", "sharetree.v1.node.*.heartbeat",
	"sharetree.v1.op.op-1.get", "sharetree.v1.op.op-1.abort", "sharetree.v1.op.op-1.update", "sharetree.v1.op.submit",
	"sharetree.v1.op.op 1.get", "sharetree.v1.op.op1.delete",
	"sharetree.v1.user.alice.op.submit", "sharetree.v1.user.alice.op.op-1.abort", "sharetree.v1.user.alice.op.op-1.update",
	"sharetree.v1.user.alice.op.op-1.get", "sharetree.v1.user..op.op-1.abort", "sharetree.v1.user.alice.op.*.abort",
	"sharetree.v1.events.physical.operation", "sharetree.v1.events.physical.starvation", "sharetree.v1.events.>",
	"sharetree.v1.events.gpu.fairshare", "sharetree.v1.events.gpu.bogus",
	"sharetree.v1.config.trees", "sharetree.v1.tree.physical.get", "sharetree.v1.tree.get.pools",
	"sharetree.v1.tree.physical.pool.research.set", "sharetree.v1.tree.pool.pool.pool.remove",
	"sharetree.v1.tree.t.pool.research$alice.create", "sharetree.v1.tree.t.pool.p.pools",
	"sharetree.v1.orchid.trees", "sharetree.v1.orchid.physical.tree", "sharetree.v1.orchid.physical.root",
	"sharetree.v1.orchid.physical.root.fair_share.total", "sharetree.v1.orchid.physical.pool.research",
	"sharetree.v1.orchid.physical.pool.research.fair_share.total.cpu", "sharetree.v1.orchid.t.operation.op-1.state",
	"sharetree.v1.orchid.t.operation", "sharetree.v1.orchid.t.tree.x", "sharetree.v1.orchid.trees.x",
	"sharetree.v1.orchid.tree.pool.pool", "sharetree.v1.orchid.t.pool.p..x",
	"sharetree.v1.node." + strings.Repeat("n", MaxTokenLength+1) + ".heartbeat",
	"sharetree.v1.node.n\x00.heartbeat", "sharetree.v1.node.\xff.heartbeat", "sharetree.v1.node.ü.heartbeat",
}

// keySeeds are keys of ConfigBucket, valid and nearly valid.
var keySeeds = []string{
	"", "cluster", "cluster.x", "tree", "tree.", "tree.physical", "tree.a=b", "tree.a$b", "tree.=a", "tree.$a",
	"tree.a.b", "pool.t.p", "pool.t.research=alice", "pool.t.research$alice", "pool.t", "pool..p", "pool.t.p.q",
	"pool.t=x.p", "pool.t.=", "tree." + strings.Repeat("t", MaxTokenLength+1), "tree.a b", "tree.*", "tree.>",
	"state", "state.", "state.physical", "state.a=b", "state.a$b", "state.=a", "state.a.b", "state.*", "epoch",
}

// checkRejected is the property of a parse failure: an error that wraps
// the package's sentinel and quotes the input it rejects.
func checkRejected(t *testing.T, fn, in string, err, sentinel error) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("%s(%q) error %v does not wrap %v", fn, in, err, sentinel)
	}
	if !strings.Contains(err.Error(), strconv.Quote(in)) {
		t.Fatalf("%s(%q) error %q does not name the input", fn, in, err)
	}
}

// FuzzParseSubject feeds one string to every subject parser. None may panic;
// a parser that accepts the subject returns the parts its constructor turns
// back into exactly that subject (so no two subjects parse alike and no
// parsed part is lost); a parser that rejects it returns an error wrapping
// ErrInvalidSubject that quotes the subject.
func FuzzParseSubject(f *testing.F) {
	for _, s := range subjectSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, subject string) {
		roundTrip := func(fn string, parsed any, rebuild func() (string, error)) {
			t.Helper()
			back, err := rebuild()
			if err != nil {
				t.Fatalf("%s(%q) = %+v, but its constructor rejects the parts: %v", fn, subject, parsed, err)
			}
			if back != subject {
				t.Fatalf("%s(%q) = %+v, which the constructor builds into %q", fn, subject, parsed, back)
			}
		}

		if node, err := ParseNodeHeartbeat(subject); err != nil {
			checkRejected(t, "ParseNodeHeartbeat", subject, err, ErrInvalidSubject)
		} else {
			roundTrip("ParseNodeHeartbeat", node, func() (string, error) { return NodeHeartbeat(node) })
		}

		if id, verb, err := ParseOp(subject); err != nil {
			checkRejected(t, "ParseOp", subject, err, ErrInvalidSubject)
		} else {
			roundTrip("ParseOp", []string{id, string(verb)}, func() (string, error) { return Op(id, verb) })
		}

		if user, err := ParseUserSubmit(subject); err != nil {
			checkRejected(t, "ParseUserSubmit", subject, err, ErrInvalidSubject)
		} else {
			roundTrip("ParseUserSubmit", user, func() (string, error) { return UserSubmit(user) })
		}

		if user, id, verb, err := ParseUserOp(subject); err != nil {
			checkRejected(t, "ParseUserOp", subject, err, ErrInvalidSubject)
		} else {
			roundTrip("ParseUserOp", []string{user, id, string(verb)}, func() (string, error) { return UserOp(user, id, verb) })
		}

		if user, id, verb, err := ParseAnyOp(subject); err != nil {
			checkRejected(t, "ParseAnyOp", subject, err, ErrInvalidSubject)
		} else {
			roundTrip("ParseAnyOp", []string{user, id, string(verb)}, func() (string, error) {
				if user == "" {
					return Op(id, verb)
				}
				return UserOp(user, id, verb)
			})
		}

		if tree, kind, err := ParseEvents(subject); err != nil {
			checkRejected(t, "ParseEvents", subject, err, ErrInvalidSubject)
		} else {
			roundTrip("ParseEvents", []string{tree, string(kind)}, func() (string, error) { return Events(tree, kind) })
		}

		if tree, verb, err := ParseConfigTree(subject); err != nil {
			checkRejected(t, "ParseConfigTree", subject, err, ErrInvalidSubject)
		} else {
			roundTrip("ParseConfigTree", []string{tree, string(verb)}, func() (string, error) { return ConfigTree(tree, verb) })
		}

		if tree, pool, verb, err := ParseConfigPool(subject); err != nil {
			checkRejected(t, "ParseConfigPool", subject, err, ErrInvalidSubject)
		} else {
			roundTrip("ParseConfigPool", []string{tree, pool, string(verb)}, func() (string, error) { return ConfigPool(tree, pool, verb) })
		}

		if p, err := ParseOrchid(subject); err != nil {
			checkRejected(t, "ParseOrchid", subject, err, ErrInvalidSubject)
		} else {
			roundTrip("ParseOrchid", p, func() (string, error) { return Orchid(p) })
			// The parsed path is also what a caller building the subject
			// would have written: no empty attribute list stands for none.
			if p.Attribute != nil && len(p.Attribute) == 0 {
				t.Fatalf("ParseOrchid(%q) = %+v: empty, non-nil attribute path", subject, p)
			}
		}
	})
}

// FuzzParseConfigKey checks ParseConfigKey: no panic; a key it accepts is
// rebuilt exactly by the matching constructor (ConfigClusterKey,
// ConfigTreeKey, ConfigPoolKey) and by ConfigKey.String, so the mapping
// between keys and parsed keys is one to one; a key it rejects gives an
// error wrapping ErrInvalidKey that quotes the key.
func FuzzParseConfigKey(f *testing.F) {
	for _, s := range keySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		k, err := ParseConfigKey(key)
		show := fmt.Sprintf("{Kind:%s Tree:%q Pool:%q}", k.Kind, k.Tree, k.Pool)
		if err != nil {
			checkRejected(t, "ParseConfigKey", key, err, ErrInvalidKey)
			return
		}
		var back string
		switch k.Kind {
		case ConfigKeyCluster:
			if k != (ConfigKey{Kind: ConfigKeyCluster}) {
				t.Fatalf("ParseConfigKey(%q) = %s: a cluster key with names", key, show)
			}
			back = ConfigClusterKey
		case ConfigKeyTree:
			if k.Pool != "" {
				t.Fatalf("ParseConfigKey(%q) = %s: a tree key with a pool", key, show)
			}
			back, err = ConfigTreeKey(k.Tree)
		case ConfigKeyPool:
			back, err = ConfigPoolKey(k.Tree, k.Pool)
		default:
			t.Fatalf("ParseConfigKey(%q) = %s: unknown kind", key, show)
		}
		if err != nil {
			t.Fatalf("ParseConfigKey(%q) = %s, but its constructor rejects the names: %v", key, show, err)
		}
		if diff := cmp.Diff(key, back); diff != "" {
			t.Fatalf("ParseConfigKey(%q) = %s, rebuilt differently (-input +rebuilt):\n%s", key, show, diff)
		}
		if s := k.String(); s != key {
			t.Fatalf("ParseConfigKey(%q) = %s, whose String is %q", key, show, s)
		}
	})
}

// FuzzParseTreeStateKey checks ParseTreeStateKey: no panic; a key it
// accepts is rebuilt exactly by TreeStateKey (one key per tree); a key it
// rejects gives an error wrapping ErrInvalidStateKey that quotes the key.
func FuzzParseTreeStateKey(f *testing.F) {
	for _, s := range keySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		tree, err := ParseTreeStateKey(key)
		if err != nil {
			checkRejected(t, "ParseTreeStateKey", key, err, ErrInvalidStateKey)
			return
		}
		back, err := TreeStateKey(tree)
		if err != nil {
			t.Fatalf("ParseTreeStateKey(%q) = %q, which TreeStateKey rejects: %v", key, tree, err)
		}
		if back != key {
			t.Fatalf("ParseTreeStateKey(%q) = %q, which TreeStateKey builds into %q", key, tree, back)
		}
	})
}
