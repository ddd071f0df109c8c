package tagfilter

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every parse error.
var ErrInvalid = errors.New("tagfilter: invalid node tag filter")

// Limits that keep a filter cheap to parse and evaluate.
const (
	// MaxLength is the longest expression accepted, in bytes.
	MaxLength = 4096
	// MaxDepth bounds nesting of parentheses and negations.
	MaxDepth = 64
)

// Parse parses a node_tag_filter expression. The error wraps ErrInvalid and
// names the byte offset and what was expected there. Both the expression
// and its canonical text ([Filter.String], which puts spaces around the
// operators) must be at most MaxLength bytes, so the canonical text parses
// again.
func Parse(s string) (Filter, error) {
	if len(s) > MaxLength {
		return Filter{}, fmt.Errorf("%w: expression is %d bytes, at most %d allowed", ErrInvalid, len(s), MaxLength)
	}
	p := &parser{src: s}
	p.skip()
	if p.pos == len(s) {
		return Filter{}, nil
	}
	n, err := p.or(0)
	if err != nil {
		return Filter{}, err
	}
	if p.pos != len(s) {
		return Filter{}, p.fail("unexpected %q; want \"&\", \"|\" or the end", s[p.pos])
	}
	f := Filter{root: n}
	if c := f.String(); len(c) > MaxLength {
		return Filter{}, fmt.Errorf("%w: expression is %d bytes in canonical form (%.20q…), at most %d allowed", ErrInvalid, len(c), c, MaxLength)
	}
	return f, nil
}

// MustParse is Parse for expressions known to be valid (tests, constants);
// it panics on an error.
func MustParse(s string) Filter {
	f, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return f
}

type parser struct {
	src string
	pos int
}

func (p *parser) fail(format string, args ...any) error {
	return fmt.Errorf("%w: %q at byte %d: %s", ErrInvalid, p.src, p.pos, fmt.Sprintf(format, args...))
}

func (p *parser) skip() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n' || p.src[p.pos] == '\r') {
		p.pos++
	}
}

// eat consumes c (after whitespace) when it is next.
func (p *parser) eat(c byte) bool {
	if p.pos < len(p.src) && p.src[p.pos] == c {
		p.pos++
		p.skip()
		return true
	}
	return false
}

func (p *parser) or(depth int) (*node, error) {
	return p.nary(depth, opOr, '|', p.and)
}

func (p *parser) and(depth int) (*node, error) {
	return p.nary(depth, opAnd, '&', p.unary)
}

// nary parses operands joined by sep into one n-ary node (flattening nested
// nodes of the same operator, which parenthesised input can produce).
func (p *parser) nary(depth int, o op, sep byte, next func(int) (*node, error)) (*node, error) {
	first, err := next(depth)
	if err != nil {
		return nil, err
	}
	args := []*node{first}
	for p.eat(sep) {
		a, err := next(depth)
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	if len(args) == 1 {
		return first, nil
	}
	flat := make([]*node, 0, len(args))
	for _, a := range args {
		if a.op == o {
			flat = append(flat, a.args...)
		} else {
			flat = append(flat, a)
		}
	}
	return &node{op: o, args: flat}, nil
}

func (p *parser) unary(depth int) (*node, error) {
	if depth >= MaxDepth {
		return nil, p.fail("nested deeper than %d", MaxDepth)
	}
	switch {
	case p.eat('!'):
		a, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return &node{op: opNot, args: []*node{a}}, nil
	case p.eat('('):
		n, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if !p.eat(')') {
			if p.pos == len(p.src) {
				return nil, p.fail("missing \")\"")
			}
			return nil, p.fail("unexpected %q; want \")\"", p.src[p.pos])
		}
		return n, nil
	}
	start := p.pos
	for p.pos < len(p.src) && tagByte(p.src[p.pos]) {
		p.pos++
	}
	if p.pos == start {
		if p.pos == len(p.src) {
			return nil, p.fail("expression ends where a tag, \"!\" or \"(\" is expected")
		}
		return nil, p.fail("unexpected %q; want a tag, \"!\" or \"(\"", p.src[p.pos])
	}
	tag := p.src[start:p.pos]
	p.skip()
	return &node{op: opTag, tag: tag}, nil
}

// CheckTag reports whether tag is one a filter can name (one or more of
// [A-Za-z0-9_-./:]); the error wraps ErrInvalid and names the first byte
// that is not. A node tag that fails it matches no filter's TAG.
func CheckTag(tag string) error {
	if tag == "" {
		return fmt.Errorf("%w: tag is empty", ErrInvalid)
	}
	for i := 0; i < len(tag); i++ {
		if !tagByte(tag[i]) {
			return fmt.Errorf("%w: tag %q has %q at byte %d; a tag is letters, digits, '_', '-', '.', '/' and ':'", ErrInvalid, tag, tag[i], i)
		}
	}
	return nil
}

func tagByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	case c == '_', c == '-', c == '.', c == '/', c == ':':
		return true
	}
	return false
}
