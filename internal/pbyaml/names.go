package pbyaml

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// enumPrefix is the prefix an enum's values may be written without: the
// zero value's name without UNSPECIFIED (OPERATION_TYPE_ of
// OPERATION_TYPE_UNSPECIFIED), or "" when the zero value is not so named.
func enumPrefix(ed protoreflect.EnumDescriptor) string {
	zero := ed.Values().ByNumber(0)
	if zero == nil {
		return ""
	}
	name := string(zero.Name())
	if p, ok := strings.CutSuffix(name, "UNSPECIFIED"); ok {
		return p
	}
	return ""
}

// enumValue reads scalar n as a value of ed: a name, full or short, in any
// case, or the number of a declared value.
func enumValue(n *yaml.Node, ed protoreflect.EnumDescriptor) (protoreflect.EnumNumber, bool) {
	if n.Tag == "!!int" {
		var i int32
		if err := n.Decode(&i); err != nil {
			return 0, false
		}
		if v := ed.Values().ByNumber(protoreflect.EnumNumber(i)); v != nil {
			return v.Number(), true
		}
		return 0, false
	}
	name := strings.ToUpper(strings.TrimSpace(n.Value))
	if v := ed.Values().ByName(protoreflect.Name(name)); v != nil {
		return v.Number(), true
	}
	if p := enumPrefix(ed); p != "" {
		if v := ed.Values().ByName(protoreflect.Name(p + name)); v != nil {
			return v.Number(), true
		}
	}
	return 0, false
}

// enumChoices lists ed's values as a user writes them: short and lower
// case when the enum has a prefix.
func enumChoices(ed protoreflect.EnumDescriptor) string {
	p := enumPrefix(ed)
	vals := ed.Values()
	names := make([]string, 0, vals.Len())
	for i := range vals.Len() {
		name := string(vals.Get(i).Name())
		if p != "" {
			name = strings.ToLower(strings.TrimPrefix(name, p))
		}
		names = append(names, name)
	}
	return strings.Join(names, ", ")
}

// suggest returns `; did you mean "x"?` for the field name nearest to name,
// when one is near enough to be a likely typo, else "".
func suggest(name string, fields protoreflect.FieldDescriptors) string {
	best, bestDist := "", 0
	for i := range fields.Len() {
		for _, cand := range []string{string(fields.Get(i).Name()), fields.Get(i).JSONName()} {
			dist := editDistance(strings.ToLower(name), strings.ToLower(cand))
			if best == "" || dist < bestDist {
				best, bestDist = string(fields.Get(i).Name()), dist
			}
		}
	}
	if best != "" && bestDist <= max(2, len(name)/4) {
		return `; did you mean "` + best + `"?`
	}
	// A part of a longer name ("trees" of pool_trees).
	for i := range fields.Len() {
		if slices.Contains(strings.Split(string(fields.Get(i).Name()), "_"), strings.ToLower(name)) {
			return `; did you mean "` + string(fields.Get(i).Name()) + `"?`
		}
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
