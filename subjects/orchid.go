package subjects

import (
	"fmt"
	"slices"
	"strings"
)

// The orchid's subject space: live attributes of pools and operations,
// read-only. The token after the tree says what is asked for, so a tree,
// pool or operation named like a fixed token ("tree", "pool", "root") can
// never be mistaken for one; an attribute path follows the element's name,
// one token per step:
//
//	sharetree.v1.orchid.trees                                    4 tokens: the live trees
//	sharetree.v1.orchid.<tree>.tree                              5 tokens: the whole tree
//	sharetree.v1.orchid.<tree>.root[.<attribute>…]               5+ tokens: the root element
//	sharetree.v1.orchid.<tree>.pool.<pool>[.<attribute>…]        6+ tokens: one pool
//	sharetree.v1.orchid.<tree>.operation.<id>[.<attribute>…]     6+ tokens: one operation

// OrchidService is the micro service name of the orchid.
const OrchidService = "sharetree-orchid"

// OrchidKind is what an orchid request asks for.
type OrchidKind string

// The orchid's kinds of requests.
const (
	// OrchidTrees lists the live trees.
	OrchidTrees OrchidKind = "trees"
	// OrchidTree is a whole tree: every pool and operation.
	OrchidTree OrchidKind = "tree"
	// OrchidRoot is a tree's root element.
	OrchidRoot OrchidKind = "root"
	// OrchidPool is one pool.
	OrchidPool OrchidKind = "pool"
	// OrchidOperation is one operation in one tree.
	OrchidOperation OrchidKind = "operation"
)

// OrchidKinds lists every OrchidKind, in a fixed order.
var OrchidKinds = []OrchidKind{OrchidTrees, OrchidTree, OrchidRoot, OrchidPool, OrchidOperation}

// OrchidPath is one orchid request: what it asks for, the tree (except for
// OrchidTrees), the pool or operation (OrchidPool, OrchidOperation) and an
// attribute path (OrchidRoot, OrchidPool, OrchidOperation; empty: every
// attribute), e.g. ["fair_share", "total"].
type OrchidPath struct {
	Kind      OrchidKind
	Tree      string
	Name      string
	Attribute []string
}

// named reports whether the kind names a pool or an operation.
func (k OrchidKind) named() bool { return k == OrchidPool || k == OrchidOperation }

// element reports whether the kind is an element (which may take an
// attribute path).
func (k OrchidKind) element() bool { return k == OrchidRoot || k.named() }

// check validates a path's tokens for its kind.
func (p OrchidPath) check() error {
	if !member(p.Kind, OrchidKinds) {
		return fmt.Errorf("%w: orchid kind %q is not one of %v", ErrInvalidToken, p.Kind, OrchidKinds)
	}
	if p.Kind == OrchidTrees {
		if p.Tree != "" || p.Name != "" || len(p.Attribute) > 0 {
			return fmt.Errorf("%w: the orchid's tree list takes no tree, name or attribute", ErrInvalidToken)
		}
		return nil
	}
	if err := ValidateToken("tree name", p.Tree); err != nil {
		return err
	}
	switch {
	case p.Kind.named():
		what := "pool name"
		if p.Kind == OrchidOperation {
			what = "operation id"
		}
		if err := ValidateToken(what, p.Name); err != nil {
			return err
		}
	case p.Name != "":
		return fmt.Errorf("%w: orchid %s request takes no name, got %q", ErrInvalidToken, p.Kind, p.Name)
	}
	if !p.Kind.element() && len(p.Attribute) > 0 {
		return fmt.Errorf("%w: orchid %s request takes no attribute", ErrInvalidToken, p.Kind)
	}
	for _, a := range p.Attribute {
		if err := ValidateToken("attribute", a); err != nil {
			return err
		}
	}
	return nil
}

// Orchid is the subject of an orchid request.
func Orchid(p OrchidPath) (string, error) {
	if err := p.check(); err != nil {
		return "", err
	}
	tokens := []string{Prefix, "orchid"}
	switch {
	case p.Kind == OrchidTrees:
		tokens = append(tokens, string(OrchidTrees))
	case p.Kind.named():
		tokens = append(tokens, p.Tree, string(p.Kind), p.Name)
	default:
		tokens = append(tokens, p.Tree, string(p.Kind))
	}
	return join(append(tokens, p.Attribute...)...), nil
}

// OrchidAll matches every orchid subject (the service endpoint).
func OrchidAll() string { return join(Prefix, "orchid", ">") }

// ParseOrchid returns the request an orchid subject makes.
func ParseOrchid(subject string) (OrchidPath, error) {
	bad := func(why string) (OrchidPath, error) {
		return OrchidPath{}, fmt.Errorf("%w: %q is not an orchid subject (%s.orchid.trees, .<tree>.tree, .<tree>.root[.<attribute>…], "+
			".<tree>.pool.<pool>[.<attribute>…] or .<tree>.operation.<id>[.<attribute>…]): %s", ErrInvalidSubject, subject, Prefix, why)
	}
	t := strings.Split(subject, ".")
	if len(t) < 4 || join(t[0], t[1]) != Prefix || t[2] != "orchid" {
		return bad("wrong prefix or too short")
	}
	var p OrchidPath
	switch {
	case len(t) == 4:
		if t[3] != string(OrchidTrees) {
			return bad(fmt.Sprintf("4 tokens must end in %q", OrchidTrees))
		}
		p.Kind = OrchidTrees
	default:
		p.Tree, p.Kind = t[3], OrchidKind(t[4])
		rest := t[5:]
		switch {
		case p.Kind == OrchidTree && len(rest) == 0, p.Kind == OrchidRoot:
		case p.Kind.named() && len(rest) > 0:
			p.Name, rest = rest[0], rest[1:]
		default:
			return bad(fmt.Sprintf("%q after the tree must be one of tree, root, pool <pool>, operation <id>", strings.Join(t[4:], ".")))
		}
		if len(rest) > 0 {
			p.Attribute = slices.Clone(rest)
		}
	}
	if err := p.check(); err != nil {
		return OrchidPath{}, fmt.Errorf("%w: in %q: %w", ErrInvalidSubject, subject, err)
	}
	return p, nil
}
