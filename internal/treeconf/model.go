package treeconf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/internal/treeconf/tagfilter"
	"github.com/sharetree/sharetree/scheduler"
)

// Tree is one pool tree's configuration as stored: its name, and the
// engine's TreeConfig with the options only the scheduler process reads
// (node_tag_filter, max_ephemeral_pool_per_user,
// forbid_immediate_operations_in_root, pool_config_presets) and the keys
// given, from the embedded scenario.TreeDoc.
type Tree struct {
	Name string
	scenario.TreeDoc
}

// Pool is one pool's own configuration as stored (before the tree's
// presets): Config holds name, parent and the engine's keys, Options the
// keys only the scheduler process reads (forbid_immediate_operations,
// create_ephemeral_subpools, ephemeral_subpool_config, offloading_settings,
// config_presets, enable_lightweight_operations).
type Pool struct {
	scenario.PoolDoc
}

// Name returns the pool's name.
func (p Pool) Name() string { return string(p.Config.Name) }

// Parent returns the parent's name ("" for the root).
func (p Pool) Parent() string { return string(p.Config.Parent) }

// Cluster holds the cluster attributes.
type Cluster struct {
	// DefaultTree receives operations that name no pool tree.
	DefaultTree string
}

// NodeFilter returns the tree's parsed node_tag_filter. Stored filters are
// canonical; one that does not parse (written around the service) gives
// an error.
func (t Tree) NodeFilter() (tagfilter.Filter, error) {
	return tagfilter.Parse(t.Options.NodeTagFilter)
}

// Keys returns the tree's canonical key map (only the keys given).
func (t Tree) Keys() map[string]any { return scenario.EncodeTreeDoc(t.TreeDoc) }

// JSON returns the tree's canonical document: the JSON object of Keys
// (object keys sorted).
func (t Tree) JSON() ([]byte, error) { return canonicalJSON(t.Keys()) }

// Keys returns the pool's canonical key map: parent (unless the root) and
// the keys given.
func (p Pool) Keys() map[string]any { return scenario.EncodePoolDoc(p.PoolDoc) }

// JSON returns the pool's canonical document.
func (p Pool) JSON() ([]byte, error) { return canonicalJSON(p.Keys()) }

// Keys returns the cluster's canonical key map.
func (c Cluster) Keys() map[string]any {
	if c.DefaultTree == "" {
		return map[string]any{}
	}
	return map[string]any{keyDefaultTree: c.DefaultTree}
}

// JSON returns the cluster's canonical document.
func (c Cluster) JSON() ([]byte, error) { return canonicalJSON(c.Keys()) }

// DecodeTree parses a tree document (JSON or YAML keys of a trees file's
// `config`). Errors are *RuleErrors naming the key.
func DecodeTree(name string, data []byte) (Tree, error) {
	doc, err := scenario.ParseTreeDoc(fmt.Sprintf("tree %q", name), data)
	if err != nil {
		return Tree{}, fromScenario(err, name, "")
	}
	return Tree{Name: name, TreeDoc: doc}, nil
}

// DecodePool parses a pool document (JSON or YAML: parent and the pool
// keys of a trees file, without name). Errors are *RuleErrors naming the
// key.
func DecodePool(tree, name string, data []byte) (Pool, error) {
	doc, err := scenario.ParsePoolDoc(fmt.Sprintf("pool %q", name), data)
	if err != nil {
		return Pool{}, fromScenario(err, tree, name)
	}
	doc.Config.Name = scheduler.PoolID(name)
	return Pool{PoolDoc: doc}, nil
}

// canonicalJSON marshals a canonical key map (object keys sorted). Decoded
// documents always marshal; a value that does not (a non-finite number set
// in code) is an invalid_value error.
// Characters such as '&' (node_tag_filter) are not escaped, so the stored
// document reads as written; the characters the YAML reader refuses or
// reads as a line break when they appear as such are (yamlEscape).
func canonicalJSON(m map[string]any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, ruleErr(RuleInvalidValue, "", "", "", "document does not encode as JSON: %v", err)
	}
	return yamlEscape(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}

// yamlEscape writes as \uXXXX escapes the characters encoding/json leaves
// as they are but the YAML reader, which decodes stored documents, does not
// read back: DEL and the C1 controls (refused as control characters, but
// for U+0085, which is a line break and folds to a space inside a quoted
// string) and the noncharacters U+FFFE and U+FFFF (refused). A document
// can hold them only inside strings (its structure is ASCII), where the
// escape reads back as the character.
func yamlEscape(data []byte) []byte {
	if !bytes.ContainsFunc(data, yamlUnreadable) {
		return data
	}
	out := make([]byte, 0, len(data)+16)
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if yamlUnreadable(r) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, data[:size]...)
		}
		data = data[size:]
	}
	return out
}

func yamlUnreadable(r rune) bool {
	return r >= 0x7f && r <= 0x9f || r == 0xfffe || r == 0xffff
}
