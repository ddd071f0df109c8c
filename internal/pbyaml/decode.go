package pbyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Options are Unmarshal's settings.
type Options struct {
	// File names the document in errors ("spec.yaml"); may be empty.
	File string
}

// Unmarshal decodes the YAML or JSON document data into m, which it resets
// first. An empty document leaves m empty. Every error is an *Error
// wrapping ErrInvalid; m's contents are then unspecified.
func (o Options) Unmarshal(data []byte, m proto.Message) error {
	proto.Reset(m)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil
	} else if err != nil {
		return o.syntaxError(err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return o.syntaxError(err)
		}
		return &Error{File: o.File, Line: next.Line, Column: next.Column, Reason: "a second document; a file holds one"}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil
	}
	d := &decoder{file: o.File, budget: aliasBudget(&doc)}
	return d.message(doc.Content[0], "", m.ProtoReflect())
}

// Unmarshal decodes data into m with default Options.
func Unmarshal(data []byte, m proto.Message) error { return Options{}.Unmarshal(data, m) }

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// syntaxError turns yaml.v3's parse error into an *Error with its line.
func (o Options) syntaxError(err error) error {
	msg := err.Error()
	e := &Error{File: o.File}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	e.Reason = "not YAML: " + strings.TrimPrefix(msg, "yaml: ")
	return e
}

// decoder walks one document.
type decoder struct {
	file string
	// budget is how many more nodes the walk may visit (aliases let a small
	// document name a huge one).
	budget int
}

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) error {
	e := &Error{File: d.file, Path: path, Reason: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	return e
}

// visit resolves aliases and charges the walk for n.
func (d *decoder) visit(n *yaml.Node, path string) (*yaml.Node, error) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	d.budget--
	if d.budget < 0 {
		return nil, d.fail(n, path, "the document expands through aliases to far more values than it holds")
	}
	return n, nil
}

// message decodes n into m.
func (d *decoder) message(n *yaml.Node, path string, m protoreflect.Message) error {
	n, err := d.visit(n, path)
	if err != nil || isNull(n) {
		return err
	}
	if wkt, ok := wellKnown[m.Descriptor().FullName()]; ok {
		return wkt(d, n, path, m)
	}
	if n.Kind != yaml.MappingNode {
		return d.fail(n, path, "want a mapping of %s's fields, got %s", m.Descriptor().Name(), describe(n))
	}
	pairs, err := d.pairs(n, path)
	if err != nil {
		return err
	}
	fields := m.Descriptor().Fields()
	given := map[protoreflect.FieldNumber]*yaml.Node{}
	oneofs := map[protoreflect.FullName]string{}
	for _, p := range pairs {
		name := p.key.Value
		if p.key.Tag != "!!str" {
			return d.fail(p.key, path, "key %s is not a string", name)
		}
		fd := fields.ByName(protoreflect.Name(name))
		if fd == nil {
			fd = fields.ByJSONName(name)
		}
		if fd == nil {
			return d.fail(p.key, path, "unknown field %q in %s%s", name, m.Descriptor().Name(), suggest(name, fields))
		}
		if at := given[fd.Number()]; at != nil {
			return d.fail(p.key, path, "field %s given twice (also at line %d)", fd.Name(), at.Line)
		}
		given[fd.Number()] = p.key
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() && !isNull(p.value) {
			if other, ok := oneofs[od.FullName()]; ok {
				return d.fail(p.key, path, "%s and %s are alternatives (one of %s): give one", other, fd.Name(), od.Name())
			}
			oneofs[od.FullName()] = string(fd.Name())
		}
		if err := d.field(p.value, join(path, name), m, fd); err != nil {
			return err
		}
	}
	return nil
}

// field decodes n into field fd of m.
func (d *decoder) field(n *yaml.Node, path string, m protoreflect.Message, fd protoreflect.FieldDescriptor) error {
	n, err := d.visit(n, path)
	if err != nil || isNull(n) {
		return err
	}
	switch {
	case fd.IsMap():
		return d.mapField(n, path, m.Mutable(fd).Map(), fd)
	case fd.IsList():
		if n.Kind != yaml.SequenceNode {
			return d.fail(n, path, "want a list, got %s", describe(n))
		}
		list := m.Mutable(fd).List()
		for i, el := range n.Content {
			p := path + "[" + strconv.Itoa(i) + "]"
			if fd.Message() != nil {
				v := list.NewElement()
				el, err := d.visit(el, p)
				if err != nil {
					return err
				}
				if isNull(el) {
					return d.fail(el, p, "want a mapping of %s's fields, got null", fd.Message().Name())
				}
				if err := d.message(el, p, v.Message()); err != nil {
					return err
				}
				list.Append(v)
				continue
			}
			v, err := d.scalar(el, p, fd)
			if err != nil {
				return err
			}
			list.Append(v)
		}
		return nil
	case fd.Message() != nil:
		return d.message(n, path, m.Mutable(fd).Message())
	}
	v, err := d.scalar(n, path, fd)
	if err != nil {
		return err
	}
	m.Set(fd, v)
	return nil
}

// mapField decodes mapping n into map field fd.
func (d *decoder) mapField(n *yaml.Node, path string, mp protoreflect.Map, fd protoreflect.FieldDescriptor) error {
	if n.Kind != yaml.MappingNode {
		return d.fail(n, path, "want a mapping, got %s", describe(n))
	}
	pairs, err := d.pairs(n, path)
	if err != nil {
		return err
	}
	kd, vd := fd.MapKey(), fd.MapValue()
	for _, p := range pairs {
		if kd.Kind() == protoreflect.StringKind && p.key.Tag != "!!str" {
			return d.fail(p.key, path, "key %s is not a string", p.key.Value)
		}
		k, err := d.scalar(p.key, path, kd)
		if err != nil {
			return err
		}
		mk := k.MapKey()
		if mp.Has(mk) {
			return d.fail(p.key, path, "key %s given twice", p.key.Value)
		}
		vp := join(path, p.key.Value)
		if vd.Message() != nil {
			v := mp.NewValue()
			if err := d.message(p.value, vp, v.Message()); err != nil {
				return err
			}
			mp.Set(mk, v)
			continue
		}
		vn, err := d.visit(p.value, vp)
		if err != nil {
			return err
		}
		v, err := d.scalar(vn, vp, vd)
		if err != nil {
			return err
		}
		mp.Set(mk, v)
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
