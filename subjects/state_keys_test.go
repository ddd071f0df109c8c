package subjects

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTreeStateKeys(t *testing.T) {
	for _, tree := range []string{"physical", "gpu-a_1", "a$b"} {
		key, err := TreeStateKey(tree)
		if err != nil {
			t.Fatalf("TreeStateKey(%q): %v", tree, err)
		}
		got, err := ParseTreeStateKey(key)
		if err != nil {
			t.Fatalf("ParseTreeStateKey(%q): %v", key, err)
		}
		if diff := cmp.Diff(tree, got); diff != "" {
			t.Fatalf("round trip of %q through %q (-want +got):\n%s", tree, key, diff)
		}
	}
	if key, _ := TreeStateKey("a$b"); key != "state.a=b" {
		t.Fatalf("TreeStateKey(a$b) = %q, want state.a=b ('$' is not allowed in keys)", key)
	}
	for _, tree := range []string{"", "a.b", "$sys", "a b"} {
		if _, err := TreeStateKey(tree); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("TreeStateKey(%q) error %v, want ErrInvalidToken", tree, err)
		}
	}
	for _, key := range []string{"", "state", "state.", "state.a.b", "tree.a", "state.a$b", "epoch", "state.=x", "state.*"} {
		_, err := ParseTreeStateKey(key)
		checkRejected(t, "ParseTreeStateKey", key, err, ErrInvalidStateKey)
	}
}
