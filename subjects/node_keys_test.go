package subjects

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNodeKeys(t *testing.T) {
	for _, node := range []string{"node-0", "rack1_n2", "a$b"} {
		key, err := NodeKey(node)
		if err != nil {
			t.Fatalf("NodeKey(%q): %v", node, err)
		}
		got, err := ParseNodeKey(key)
		if err != nil {
			t.Fatalf("ParseNodeKey(%q): %v", key, err)
		}
		if diff := cmp.Diff(node, got); diff != "" {
			t.Fatalf("round trip of %q through %q (-want +got):\n%s", node, key, diff)
		}
	}
	if key, _ := NodeKey("a$b"); key != "node.a=b" {
		t.Fatalf("NodeKey(a$b) = %q, want node.a=b ('$' is not allowed in keys)", key)
	}
	for _, node := range []string{"", "a.b", "$sys", "a b", "a*"} {
		if _, err := NodeKey(node); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("NodeKey(%q) error %v, want ErrInvalidToken", node, err)
		}
	}
	for _, key := range []string{"", "node", "node.", "node.a.b", "state.a", "node.a$b", "epoch", "node.=x", "node.*"} {
		_, err := ParseNodeKey(key)
		checkRejected(t, "ParseNodeKey", key, err, ErrInvalidNodeKey)
	}
}
