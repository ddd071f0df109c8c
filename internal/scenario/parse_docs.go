package scenario

import (
	"bytes"

	"go.yaml.in/yaml/v3"
)

// ParseTreeDoc decodes one tree's configuration: a mapping of the keys of a
// trees file's `config` (YAML or JSON; empty input is the empty mapping),
// on top of DefaultTreeDoc. It checks each value's type and range and parses
// node_tag_filter, but not the rules that tie keys together or need the
// pools (TreeConfig.Validate, presets' main resource): the caller validates
// the tree as a whole. Every error is an *Error naming name, the key path
// and the line.
func ParseTreeDoc(name string, data []byte) (TreeDoc, error) {
	d := &decoder{file: name, live: true}
	doc := DefaultTreeDoc()
	root, err := d.docRoot(data)
	if err != nil || root == nil {
		return doc, err
	}
	if err := d.decodeTree(root, "", &doc); err != nil {
		return TreeDoc{}, err
	}
	return doc, nil
}

// PatchTreeDoc applies the keys of a mapping to a copy of doc (keys it does
// not name keep their values; a key it names replaces the value as a whole,
// except integral_guarantees, whose sub-keys are set one by one) and returns
// it. Like ParseTreeDoc it does not validate the result as a whole.
func PatchTreeDoc(name string, doc TreeDoc, data []byte) (TreeDoc, error) {
	d := &decoder{file: name, live: true}
	root, err := d.docRoot(data)
	if err != nil || root == nil {
		return doc, err
	}
	out := doc
	if p := doc.Config.InferWeightFromGuaranteesShareMultiplier; p != nil {
		v := *p
		out.Config.InferWeightFromGuaranteesShareMultiplier = &v
	}
	if err := d.decodeTree(root, "", &out); err != nil {
		return TreeDoc{}, err
	}
	return out, nil
}

// ParsePoolDoc decodes one pool's configuration: a mapping of parent and the
// pool keys of a trees file, without name (the caller knows it) and without
// accumulated_resource_volume (state, not configuration). Empty input is the
// empty mapping. Like ParseTreeDoc it checks values but not the rules that
// need the tree. Every error is an *Error naming name, the key path and the
// line.
func ParsePoolDoc(name string, data []byte) (PoolDoc, error) {
	d := &decoder{file: name, live: true}
	var doc PoolDoc
	root, err := d.docRoot(data)
	if err != nil || root == nil {
		return doc, err
	}
	fields := append([]field{d.parentField(&doc.Config)}, d.poolFields(&doc, nil)...)
	present, err := d.object(root, "", fields)
	if err != nil {
		return PoolDoc{}, err
	}
	doc.Keys = poolKeys(present)
	return doc, nil
}

// docRoot returns the root mapping of a single document, or nil for empty
// input (only whitespace, or an empty YAML document).
func (d *decoder) docRoot(data []byte) (*yaml.Node, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	root, err := d.document(data)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Path == "" && e.Msg == "empty document" {
			return nil, nil
		}
		return nil, err
	}
	return root, nil
}
