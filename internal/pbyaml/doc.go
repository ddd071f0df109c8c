// Package pbyaml decodes a YAML (or JSON) document into a protobuf message
// by the message's descriptor, and names what is wrong by file, line,
// column and the path to the key ("spec.yaml:6:24: tasks[0].job_count:
// want an integer, got \"ten\"").
//
// The CLI used to decode YAML into Go values, encode them as JSON and hand
// that to protojson; protojson's errors then pointed into the intermediate
// JSON ("line 1:61") and used its camelCase names. Walking the YAML nodes
// keeps their positions. buf.build/go/protoyaml does the same, but it
// imports protovalidate and with it the CEL interpreter (about 7 MB more
// binary and nine more modules for a validator sharetree does not use), so
// this package is the small part that is needed.
//
// # What it accepts
//
//   - Field names as in the .proto file (job_count) or in their JSON form
//     (jobCount); an unknown one is refused, with the nearest known name.
//   - Integers as YAML integers, or as floats or strings holding one in the
//     field's range (protojson writes int64 fields as strings).
//   - Floats as YAML numbers or numeric strings; NaN and infinities are
//     refused.
//   - Strings as any scalar: `title: 1.10` is "1.10", as written.
//   - Enum values by full name (PREEMPTION_MODE_GRACEFUL), in any case, or
//     without their type's prefix (graceful): the prefix is the zero
//     value's name without UNSPECIFIED. Numbers of declared values too.
//   - google.protobuf.Duration in Go's notation ("1h30m", "250ms"), which
//     includes protobuf's ("5400s", "0.25s"); google.protobuf.Timestamp in
//     RFC 3339. Other well-known types are refused.
//   - null for any field: it stays unset.
//   - Anchors, aliases and merge keys (<<); a document that expands through
//     aliases to far more nodes than it holds is refused.
//
// At most one field of a oneof may be given, and a field at most once
// (by either of its names); a file holds one document. Decoding stops at
// the first problem.
package pbyaml
