package tagfilter

import (
	"slices"
	"strings"
)

// op is the kind of a node of the expression tree.
type op int

const (
	opTag op = iota
	opNot
	opAnd
	opOr
)

// node is one node of the expression tree: a tag, a negation (one arg) or an
// n-ary conjunction or disjunction (two or more args).
type node struct {
	op   op
	tag  string
	args []*node
}

// Filter is a parsed node_tag_filter. The zero Filter is the empty
// expression, which matches every node. A Filter is immutable and safe for
// concurrent use.
type Filter struct {
	root *node
}

// IsEmpty reports whether the filter is the empty expression (every node
// matches).
func (f Filter) IsEmpty() bool { return f.root == nil }

// Match reports whether a node with these tags belongs to the tree.
func (f Filter) Match(tags []string) bool {
	if f.root == nil {
		return true
	}
	return f.root.eval(tags)
}

func (n *node) eval(tags []string) bool {
	switch n.op {
	case opTag:
		return slices.Contains(tags, n.tag)
	case opNot:
		return !n.args[0].eval(tags)
	case opAnd:
		for _, a := range n.args {
			if !a.eval(tags) {
				return false
			}
		}
		return true
	default:
		for _, a := range n.args {
			if a.eval(tags) {
				return true
			}
		}
		return false
	}
}

// Tags returns the tags the expression mentions, sorted and without
// duplicates.
func (f Filter) Tags() []string {
	var out []string
	var walk func(n *node)
	walk = func(n *node) {
		if n.op == opTag {
			out = append(out, n.tag)
		}
		for _, a := range n.args {
			walk(a)
		}
	}
	if f.root != nil {
		walk(f.root)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// String returns the canonical text: operators surrounded by single spaces,
// parentheses only where precedence needs them ("a & (b | c)", "!(a | b)").
// The empty filter prints as "".
func (f Filter) String() string {
	if f.root == nil {
		return ""
	}
	var b strings.Builder
	f.root.write(&b, opOr)
	return b.String()
}

// write prints n; ctx is the operator of the enclosing node, and n is
// parenthesised when it binds more loosely than that.
func (n *node) write(b *strings.Builder, ctx op) {
	switch n.op {
	case opTag:
		b.WriteString(n.tag)
	case opNot:
		b.WriteByte('!')
		n.args[0].write(b, opNot)
	default:
		paren := n.op > ctx
		if paren {
			b.WriteByte('(')
		}
		sep := " & "
		if n.op == opOr {
			sep = " | "
		}
		for i, a := range n.args {
			if i > 0 {
				b.WriteString(sep)
			}
			a.write(b, n.op)
		}
		if paren {
			b.WriteByte(')')
		}
	}
}
