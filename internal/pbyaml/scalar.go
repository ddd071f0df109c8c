package pbyaml

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// scalar decodes scalar n as a value of field (or map key or value) fd.
func (d *decoder) scalar(n *yaml.Node, path string, fd protoreflect.FieldDescriptor) (protoreflect.Value, error) {
	var zero protoreflect.Value
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return zero, d.fail(n, path, "want %s, got %s", want(fd), describe(n))
	}
	switch k := fd.Kind(); k {
	case protoreflect.BoolKind:
		if n.Tag == "!!bool" {
			var b bool
			if err := n.Decode(&b); err == nil {
				return protoreflect.ValueOfBool(b), nil
			}
		}
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(n.Value), nil
	case protoreflect.BytesKind:
		if n.Tag == "!!str" || n.Tag == "!!binary" {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
				if b, err := enc.DecodeString(strings.Join(strings.Fields(n.Value), "")); err == nil {
					return protoreflect.ValueOfBytes(b), nil
				}
			}
		}
	case protoreflect.EnumKind:
		if v, ok := enumValue(n, fd.Enum()); ok {
			return protoreflect.ValueOfEnum(v), nil
		}
		return zero, d.fail(n, path, "want one of %s, got %s", enumChoices(fd.Enum()), describe(n))
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		f, ok := number(n)
		if !ok {
			break
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return zero, d.fail(n, path, "want a finite number, got %g", f)
		}
		if k == protoreflect.FloatKind {
			if math.Abs(f) > math.MaxFloat32 {
				return zero, d.fail(n, path, "%s is out of range for a 32-bit float", n.Value)
			}
			return protoreflect.ValueOfFloat32(float32(f)), nil
		}
		return protoreflect.ValueOfFloat64(f), nil
	default:
		return d.integer(n, path, fd)
	}
	return zero, d.fail(n, path, "want %s, got %s", want(fd), describe(n))
}

// integer decodes scalar n as an integer field's value, in its range.
func (d *decoder) integer(n *yaml.Node, path string, fd protoreflect.FieldDescriptor) (protoreflect.Value, error) {
	if n.Tag != "!!int" && n.Tag != "!!float" && n.Tag != "!!str" {
		return protoreflect.Value{}, d.fail(n, path, "want %s, got %s", want(fd), describe(n))
	}
	outOfRange := func() (protoreflect.Value, error) {
		return protoreflect.Value{}, d.fail(n, path, "%s is out of range for %s", n.Value, want(fd))
	}
	var lo, hi int64 // a signed kind's range
	var uhi uint64   // an unsigned kind's upper bound
	signed, is32 := true, false
	switch fd.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		lo, hi, is32 = math.MinInt32, math.MaxInt32, true
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		lo, hi = math.MinInt64, math.MaxInt64
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		signed, uhi, is32 = false, math.MaxUint32, true
	default:
		signed, uhi = false, math.MaxUint64
	}
	ofInt := func(i int64) (protoreflect.Value, error) {
		switch {
		case i < lo || i > hi:
			return outOfRange()
		case is32:
			return protoreflect.ValueOfInt32(int32(i)), nil
		}
		return protoreflect.ValueOfInt64(i), nil
	}
	ofUint := func(u uint64) (protoreflect.Value, error) {
		switch {
		case u > uhi:
			return outOfRange()
		case is32:
			return protoreflect.ValueOfUint32(uint32(u)), nil
		}
		return protoreflect.ValueOfUint64(u), nil
	}
	// Integers: YAML's forms (0x1f, 0o17, 1_000) through yaml.v3, strings
	// through strconv. Not floats: yaml.v3 would truncate them.
	if n.Tag != "!!float" {
		text := strings.TrimSpace(n.Value)
		if signed {
			var i int64
			err := n.Decode(&i)
			if n.Tag == "!!str" {
				i, err = strconv.ParseInt(text, 10, 64)
			}
			if err == nil {
				return ofInt(i)
			}
		} else {
			var u uint64
			err := n.Decode(&u)
			if n.Tag == "!!str" {
				u, err = strconv.ParseUint(text, 10, 64)
			}
			if err == nil {
				return ofUint(u)
			}
		}
	}
	// A float with no fraction (1e6), or an integer beyond 64 bits. Floats
	// at or above 2^63 (2^64) are out of range, whatever they round to.
	f, ok := number(n)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) {
		return protoreflect.Value{}, d.fail(n, path, "want %s, got %s", want(fd), describe(n))
	}
	switch {
	case signed && (f < float64(lo) || f >= -float64(lo)):
		return outOfRange()
	case signed:
		return ofInt(int64(f))
	case f < 0 || f >= math.MaxUint64:
		return outOfRange()
	}
	return ofUint(uint64(f))
}

// number reads n as a float: a YAML number, or a string holding one.
func number(n *yaml.Node) (float64, bool) {
	switch n.Tag {
	case "!!int", "!!float":
		var f float64
		if err := n.Decode(&f); err == nil {
			return f, true
		}
		// yaml.v3 refuses ints beyond 64 bits as floats; strconv reads them.
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		return f, err == nil
	case "!!str":
		f, err := strconv.ParseFloat(strings.TrimSpace(n.Value), 64)
		return f, err == nil
	}
	return 0, false
}

// want says what a field of fd's kind takes, for errors.
func want(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return "true or false"
	case protoreflect.StringKind:
		return "a string"
	case protoreflect.BytesKind:
		return "base64 bytes"
	case protoreflect.EnumKind:
		return "one of " + enumChoices(fd.Enum())
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return "a number"
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return "a 32-bit integer"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return "an unsigned 32-bit integer"
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return "an unsigned integer"
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return "a mapping of " + string(fd.Message().Name()) + "'s fields"
	}
	return "an integer"
}
