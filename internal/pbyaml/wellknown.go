package pbyaml

import (
	"time"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// wellKnown decode the well-known types written as scalars; the others
// are refused (nothing sharetree reads from YAML uses them).
var wellKnown = map[protoreflect.FullName]func(d *decoder, n *yaml.Node, path string, m protoreflect.Message) error{
	"google.protobuf.Duration":  decodeDuration,
	"google.protobuf.Timestamp": decodeTimestamp,
	"google.protobuf.Any":       refuseWellKnown,
	"google.protobuf.Struct":    refuseWellKnown,
	"google.protobuf.Value":     refuseWellKnown,
	"google.protobuf.ListValue": refuseWellKnown,
	"google.protobuf.FieldMask": refuseWellKnown,
	"google.protobuf.Empty":     refuseWellKnown,
	// The wrappers: protojson writes them as bare values, which a field of
	// sharetree's would declare as optional instead.
	"google.protobuf.BoolValue":   refuseWellKnown,
	"google.protobuf.BytesValue":  refuseWellKnown,
	"google.protobuf.DoubleValue": refuseWellKnown,
	"google.protobuf.FloatValue":  refuseWellKnown,
	"google.protobuf.Int32Value":  refuseWellKnown,
	"google.protobuf.Int64Value":  refuseWellKnown,
	"google.protobuf.StringValue": refuseWellKnown,
	"google.protobuf.UInt32Value": refuseWellKnown,
	"google.protobuf.UInt64Value": refuseWellKnown,
}

// setSecondsNanos sets a Duration's or Timestamp's two fields.
func setSecondsNanos(m protoreflect.Message, secs int64, nanos int32) {
	f := m.Descriptor().Fields()
	m.Set(f.ByName("seconds"), protoreflect.ValueOfInt64(secs))
	m.Set(f.ByName("nanos"), protoreflect.ValueOfInt32(nanos))
}

func decodeDuration(d *decoder, n *yaml.Node, path string, m protoreflect.Message) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if dur, err := time.ParseDuration(n.Value); err == nil {
			secs, nanos := int64(dur/time.Second), int32(dur%time.Second)
			setSecondsNanos(m, secs, nanos)
			return nil
		}
	}
	return d.fail(n, path, "want a duration such as 30s, 250ms or 1h30m, got %s", describe(n))
}

func decodeTimestamp(d *decoder, n *yaml.Node, path string, m protoreflect.Message) error {
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!str" || n.Tag == "!!timestamp") {
		if t, err := time.Parse(time.RFC3339Nano, n.Value); err == nil {
			setSecondsNanos(m, t.Unix(), int32(t.Nanosecond()))
			return nil
		}
	}
	return d.fail(n, path, "want an RFC 3339 time such as 2026-11-22T10:00:00Z, got %s", describe(n))
}

func refuseWellKnown(d *decoder, n *yaml.Node, path string, m protoreflect.Message) error {
	return d.fail(n, path, "%s is not supported in YAML", m.Descriptor().FullName())
}
