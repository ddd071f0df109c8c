package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sharetree/sharetree/scheduler"
)

// YAML 1.2 core-schema tags as yaml.Node.ShortTag reports them.
const (
	tagStr   = "!!str"
	tagInt   = "!!int"
	tagFloat = "!!float"
	tagBool  = "!!bool"
	tagNull  = "!!null"
	tagMerge = "!!merge"
)

// Limits that keep a scenario's expansion bounded.
const (
	maxNodes         = 1_000_000     // nodes after expanding every group
	maxJobCount      = 1_000_000_000 // jobs in one job group
	maxOpRunningJobs = 1_000_000     // running jobs of one operation
	maxRepeat        = 1_000_000     // update.repeat
)

// maxRunningJobs bounds the running jobs (one Job each) a scenario holds
// in all: every operation's, counted again each time a step sets its jobs,
// and each step's copy of the operations present. Without it a short file
// (a million running jobs and a hundred empty steps, or ten such
// operations) expanded to gigabytes; with it one operation of a million
// running jobs still fits in three steps. A variable so that tests can
// lower it.
var maxRunningJobs = 4_000_000

// decoder walks a scenario's node tree; file is the name used in errors.
// A live decoder (trees files and the live configuration) also accepts the
// tree and pool keys only the scheduler process reads; a scenario file
// rejects them as unknown keys.
//
// A decoder with noEngine set (DecodeTrees) checks values but leaves the
// engine's rules (TreeConfig.Validate, PoolConfig.Validate, presets, the
// pools' parents) to its caller.
type decoder struct {
	file     string
	live     bool
	noEngine bool
	// jobs counts the running jobs built so far (see maxRunningJobs).
	jobs int
}

// fail returns an *Error at path; n, when it has a line, prefixes the message
// with "line N: ".
func (d *decoder) fail(path string, n *yaml.Node, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if n != nil && n.Line > 0 {
		msg = fmt.Sprintf("line %d: %s", n.Line, msg)
	}
	return &Error{File: d.file, Path: path, Msg: msg}
}

// deref follows aliases to the node they stand for.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// describe names a node's type for "want X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case tagStr:
			return fmt.Sprintf("a string (%q)", n.Value)
		case tagInt, tagFloat:
			return "a number (" + n.Value + ")"
		case tagBool:
			return "a boolean (" + n.Value + ")"
		case tagNull:
			return "null"
		default:
			return "a value tagged " + n.ShortTag()
		}
	default:
		return "an unsupported node"
	}
}

// joinKey is the path of key inside the mapping at path.
func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// joinIndex is the path of item i of the list at path.
func joinIndex(path string, i int) string {
	return fmt.Sprintf("%s[%d]", path, i)
}

// isScalar reports whether n is a scalar with one of the tags.
func isScalar(n *yaml.Node, tags ...string) bool {
	if n.Kind != yaml.ScalarNode {
		return false
	}
	tag := n.ShortTag()
	for _, t := range tags {
		if tag == t {
			return true
		}
	}
	return false
}

// str decodes a string.
func (d *decoder) str(n *yaml.Node, path string) (string, error) {
	n = deref(n)
	if !isScalar(n, tagStr) {
		return "", d.fail(path, n, "want a string, got %s", describe(n))
	}
	return n.Value, nil
}

// stringList decodes a list of strings.
func (d *decoder) stringList(n *yaml.Node, path string) ([]string, error) {
	items, err := d.sequence(n, path)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, err := d.str(it, joinIndex(path, i))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// sequence returns the items of a list.
func (d *decoder) sequence(n *yaml.Node, path string) ([]*yaml.Node, error) {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		return nil, d.fail(path, n, "want a list, got %s", describe(n))
	}
	return n.Content, nil
}

// number decodes a finite number (a YAML int or float, not a string).
func (d *decoder) number(n *yaml.Node, path string) (float64, error) {
	n = deref(n)
	if !isScalar(n, tagInt, tagFloat) {
		return 0, d.fail(path, n, "want a number, got %s", describe(n))
	}
	var v float64
	if err := n.Decode(&v); err != nil {
		return 0, d.fail(path, n, "bad number %q: %v", n.Value, err)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, d.fail(path, n, "want a finite number, got %s", n.Value)
	}
	return unsignedZero(v), nil
}

// unsignedZero returns v with the sign of a zero dropped. -0 equals 0, but
// its JSON is "-0", which reads back as the integer 0 and encodes as "0":
// a stored document with -0 would not be canonical.
func unsignedZero(v float64) float64 {
	if v == 0 {
		return 0
	}
	return v
}

// numberOrNumericString decodes a finite number that may also be written as
// a string ("1e-6"), for keys where YAML readers disagree on the type.
func (d *decoder) numberOrNumericString(n *yaml.Node, path string) (float64, error) {
	n = deref(n)
	if isScalar(n, tagStr) {
		v, ok := parseDecimal(n.Value)
		if !ok {
			return 0, d.fail(path, n, "want a number, got %s", describe(n))
		}
		return v, nil
	}
	return d.number(n, path)
}

// integer decodes an integer; a float with an integral value (10.0) is
// accepted too, since JSON writers often produce one.
func (d *decoder) integer(n *yaml.Node, path string) (int, error) {
	n = deref(n)
	if isScalar(n, tagInt) {
		var v int64
		if err := n.Decode(&v); err != nil || int64(int(v)) != v {
			return 0, d.fail(path, n, "integer %s is out of range", n.Value)
		}
		return int(v), nil
	}
	f, err := d.number(n, path)
	if err != nil {
		return 0, d.fail(path, n, "want an integer, got %s", describe(n))
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, d.fail(path, n, "want an integer, got %s", n.Value)
	}
	return int(f), nil
}

// boolean decodes true or false.
func (d *decoder) boolean(n *yaml.Node, path string) (bool, error) {
	n = deref(n)
	if !isScalar(n, tagBool) {
		return false, d.fail(path, n, "want true or false, got %s", describe(n))
	}
	var v bool
	if err := n.Decode(&v); err != nil {
		return false, d.fail(path, n, "bad boolean %q: %v", n.Value, err)
	}
	return v, nil
}

// duration decodes a non-negative duration: a string time.ParseDuration
// accepts ("500ms", "0.5s", "24h") or a number of seconds.
func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, error) {
	n = deref(n)
	var v time.Duration
	switch {
	case isScalar(n, tagStr):
		p, err := time.ParseDuration(n.Value)
		if err != nil {
			return 0, d.fail(path, n, "bad duration %q: want a duration such as \"60s\" or \"500ms\", or a number of seconds", n.Value)
		}
		v = p
	case isScalar(n, tagInt, tagFloat):
		secs, err := d.number(n, path)
		if err != nil {
			return 0, err
		}
		// float64(math.MaxInt64) is 2^63, one past the largest Duration: a
		// number of nanoseconds that reaches it does not convert.
		ns := math.Round(secs * float64(time.Second))
		if math.Abs(ns) >= float64(math.MaxInt64) {
			return 0, d.fail(path, n, "duration %s s is out of range", n.Value)
		}
		v = time.Duration(ns)
	default:
		return 0, d.fail(path, n, "want a duration (\"60s\") or a number of seconds, got %s", describe(n))
	}
	if v < 0 {
		return 0, d.fail(path, n, "duration %s must not be negative", n.Value)
	}
	return v, nil
}

// parseDecimal parses a plain decimal number ("10", "0.5", "1e-6"); it
// rejects Go's other spellings (hex, "inf", "nan", underscores).
func parseDecimal(s string) (float64, bool) {
	if s == "" || strings.IndexFunc(s, func(r rune) bool {
		return (r < '0' || r > '9') && !strings.ContainsRune(".eE+-", r)
	}) >= 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// cutBinarySuffix splits a resource amount into its number and the factor
// of its binary suffix (Ki, Mi, Gi, Ti; 1 without one).
func cutBinarySuffix(s string) (string, float64) {
	if len(s) < 2 {
		return s, 1
	}
	var factor float64
	switch s[len(s)-2:] {
	case "Ki":
		factor = 1 << 10
	case "Mi":
		factor = 1 << 20
	case "Gi":
		factor = 1 << 30
	case "Ti":
		factor = 1 << 40
	default:
		return s, 1
	}
	return s[:len(s)-2], factor
}

// resourceValue decodes one resource amount: a non-negative finite number,
// or a string holding one, optionally with a binary suffix ("1000Mi").
func (d *decoder) resourceValue(n *yaml.Node, path string) (float64, error) {
	return d.resourceValueIn(n, path, scheduler.ValidAmount, "resource amount", scheduler.AmountRule)
}

// resourceValueIn is resourceValue for values that valid accepts (what
// and rule name them in the error).
func (d *decoder) resourceValueIn(n *yaml.Node, path string, valid func(float64) bool, what, rule string) (float64, error) {
	n = deref(n)
	var v float64
	switch {
	case isScalar(n, tagStr):
		mantissa, factor := cutBinarySuffix(n.Value)
		f, ok := parseDecimal(mantissa)
		if !ok {
			return 0, d.fail(path, n, "bad resource amount %q: want a number, optionally with a binary suffix Ki, Mi, Gi or Ti", n.Value)
		}
		v = f * factor
	case isScalar(n, tagInt, tagFloat):
		f, err := d.number(n, path)
		if err != nil {
			return 0, err
		}
		v = f
	default:
		return 0, d.fail(path, n, "want a resource amount (a number or a string such as \"10Gi\"), got %s", describe(n))
	}
	if !valid(v) {
		return 0, d.fail(path, n, "%s %s %s", what, n.Value, rule)
	}
	return unsignedZero(v), nil
}

// resources decodes a resource map ({cpu: 10, memory: 1Gi}); Set marks the
// resources it names.
func (d *decoder) resources(n *yaml.Node, path string) (scheduler.PartialResources, error) {
	return d.resourcesIn(n, path, d.resourceValue)
}

// volumes decodes an accumulated volume per resource (resource·seconds,
// in [0, scheduler.MaxVolume]: a volume may be far above any amount, a
// day of an exabyte flow say).
func (d *decoder) volumes(n *yaml.Node, path string) (scheduler.PartialResources, error) {
	return d.resourcesIn(n, path, func(n *yaml.Node, path string) (float64, error) {
		return d.resourceValueIn(n, path, scheduler.ValidVolume, "accumulated volume", scheduler.VolumeRule)
	})
}

// resourcesIn is resources with each value decoded by value.
func (d *decoder) resourcesIn(n *yaml.Node, path string, value func(*yaml.Node, string) (float64, error)) (scheduler.PartialResources, error) {
	var out scheduler.PartialResources
	entries, err := d.entries(n, path)
	if err != nil {
		return out, err
	}
	for _, e := range entries {
		r, err := scheduler.ParseResourceType(e.key)
		if err != nil {
			return out, d.fail(e.path, e.keyNode, "%s", strings.TrimPrefix(err.Error(), "scheduler: "))
		}
		v, err := value(e.val, e.path)
		if err != nil {
			return out, err
		}
		out = out.With(r, v)
	}
	return out, nil
}

// resourceName decodes a resource name ("cpu").
func (d *decoder) resourceName(n *yaml.Node, path string) (scheduler.ResourceType, error) {
	s, err := d.str(n, path)
	if err != nil {
		return 0, err
	}
	r, err := scheduler.ParseResourceType(s)
	if err != nil {
		return 0, d.fail(path, deref(n), "%s", strings.TrimPrefix(err.Error(), "scheduler: "))
	}
	return r, nil
}

// Field constructors: each decodes a key's value into dst.

func (d *decoder) numberTo(key string, dst *float64) field {
	return field{key: key, set: func(v *yaml.Node, p string) (err error) {
		*dst, err = d.number(v, p)
		return err
	}}
}

func (d *decoder) numberPtrTo(key string, dst **float64) field {
	return field{key: key, set: func(v *yaml.Node, p string) error {
		x, err := d.number(v, p)
		*dst = &x
		return err
	}}
}

func (d *decoder) intTo(key string, dst *int) field {
	return field{key: key, set: func(v *yaml.Node, p string) (err error) {
		*dst, err = d.integer(v, p)
		return err
	}}
}

func (d *decoder) intPtrTo(key string, dst **int) field {
	return field{key: key, set: func(v *yaml.Node, p string) error {
		x, err := d.integer(v, p)
		*dst = &x
		return err
	}}
}

func (d *decoder) boolTo(key string, dst *bool) field {
	return field{key: key, set: func(v *yaml.Node, p string) (err error) {
		*dst, err = d.boolean(v, p)
		return err
	}}
}

func (d *decoder) boolPtrTo(key string, dst **bool) field {
	return field{key: key, set: func(v *yaml.Node, p string) error {
		x, err := d.boolean(v, p)
		*dst = &x
		return err
	}}
}

func (d *decoder) durationTo(key string, dst *time.Duration) field {
	return field{key: key, set: func(v *yaml.Node, p string) (err error) {
		*dst, err = d.duration(v, p)
		return err
	}}
}

func (d *decoder) durationPtrTo(key string, dst **time.Duration) field {
	return field{key: key, set: func(v *yaml.Node, p string) error {
		x, err := d.duration(v, p)
		*dst = &x
		return err
	}}
}

func (d *decoder) resourcesTo(key string, dst *scheduler.PartialResources) field {
	return field{key: key, set: func(v *yaml.Node, p string) (err error) {
		*dst, err = d.resources(v, p)
		return err
	}}
}

func (d *decoder) resourcesPtrTo(key string, dst **scheduler.PartialResources) field {
	return field{key: key, set: func(v *yaml.Node, p string) error {
		x, err := d.resources(v, p)
		*dst = &x
		return err
	}}
}
