package orchid

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/internal/scenario"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// Source is the running scheduler (*actors.System).
type Source interface {
	// Trees names the live trees in configuration order.
	Trees() []string
	// Introspect snapshots one tree with the operations scope selects; it
	// waits, bounded, for the tree actor.
	Introspect(tree string, scope actors.Scope) (*actors.TreeIntrospection, error)
	// Get asks for an operation's status; the reply comes later.
	Get(m *actors.GetOperation)
}

var _ Source = (*actors.System)(nil)

// DefaultTimeout bounds one query.
const DefaultTimeout = 5 * time.Second

// Orchid answers orchid queries from a Source.
type Orchid struct {
	src     Source
	timeout time.Duration
	logger  *slog.Logger
}

// New returns an Orchid; timeout bounds each query (DefaultTimeout when <=
// 0) and logger may be nil.
func New(src Source, timeout time.Duration, logger *slog.Logger) *Orchid {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Orchid{src: src, timeout: timeout, logger: logger.With("component", "orchid")}
}

// Tree returns one tree's document.
func (o *Orchid) Tree(tree string) (*TreeView, error) {
	in, err := o.src.Introspect(tree, actors.Scope{AllOperations: true})
	if err != nil {
		return nil, err
	}
	defer in.Release()
	return BuildTree(in), nil
}

// Trees lists the live trees with their counts.
func (o *Orchid) Trees() *TreeList {
	out := &TreeList{Trees: []TreeSummary{}}
	for _, name := range o.src.Trees() {
		s := TreeSummary{Tree: name}
		in, err := o.src.Introspect(name, actors.Scope{})
		if err != nil {
			s.Error = ErrorProto(err).GetMessage()
			out.Trees = append(out.Trees, s)
			continue
		}
		s.UpdateTime, s.Reviving = updateTime(in.Result), in.Reviving
		in.Release()
		s.PoolCount = len(in.Pools) - 1
		c := in.Pools[0].Counts
		s.OperationCount, s.RunningOperationCount, s.LightweightRunningOperationCount = c.Operations, c.Running, c.LightweightRunning
		s.PendingOperationCount = c.Operations - c.Running - c.LightweightRunning
		out.Trees = append(out.Trees, s)
	}
	return out
}

// Answer answers one orchid request with the JSON document it asks for:
// the tree list, a tree, or an element or one of its attributes.
func (o *Orchid) Answer(p subjects.OrchidPath) (json.RawMessage, error) {
	if p.Kind == subjects.OrchidTrees {
		return json.Marshal(o.Trees())
	}
	if err := CheckAttribute(p.Attribute); err != nil {
		return nil, err
	}
	// Only the whole tree needs every operation copied and described; a
	// pool or an operation is built alone.
	var (
		e   *scenario.ElementReport
		in  *actors.TreeIntrospection
		err error
	)
	switch p.Kind {
	case subjects.OrchidTree:
		v, err := o.Tree(p.Tree)
		if err != nil {
			return nil, err
		}
		return json.Marshal(v)
	case subjects.OrchidRoot, subjects.OrchidPool:
		name := p.Name
		if p.Kind == subjects.OrchidRoot {
			name = scheduler.RootID
		}
		if in, err = o.src.Introspect(p.Tree, actors.Scope{}); err == nil {
			e, err = BuildPool(in, name)
			in.Release()
		}
	case subjects.OrchidOperation:
		if in, err = o.src.Introspect(p.Tree, actors.Scope{Operation: scheduler.OperationID(p.Name)}); err == nil {
			e, err = BuildOperation(in, p.Name)
			in.Release()
		}
	default:
		err = fmt.Errorf("%w: orchid kind %q", subjects.ErrInvalidToken, p.Kind)
	}
	if err != nil {
		return nil, err
	}
	return Attribute(e, fmt.Sprintf("%s %s of tree %s", e.Kind, e.Name, p.Tree), p.Attribute)
}

// OperationView is an operation across its trees: its state and, per tree
// it is admitted in, its element (or one attribute of it).
type OperationView struct {
	ID    string `json:"id"`
	State string `json:"state"`
	// Trees maps each tree to the operation's element there.
	Trees map[string]json.RawMessage `json:"trees"`
}

// StateWord is an operation state as the orchid writes it ("running").
func StateWord(s pb.OperationState) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "OPERATION_STATE_"))
}

// Operation answers for one operation in every tree it is admitted in
// (attribute, when given, selects one attribute). A finished operation has
// its state and no trees.
func (o *Orchid) Operation(ctx context.Context, id string, attribute []string) (*OperationView, error) {
	if err := subjects.ValidateToken("operation id", id); err != nil {
		return nil, err
	}
	if err := CheckAttribute(attribute); err != nil {
		return nil, err
	}
	st, err := o.status(ctx, id)
	if err != nil {
		return nil, err
	}
	return operationView(id, st, func(tree string) (json.RawMessage, error) {
		return o.Answer(subjects.OrchidPath{Kind: subjects.OrchidOperation, Tree: tree, Name: id, Attribute: attribute})
	})
}

// status asks the scheduler for an operation's status.
func (o *Orchid) status(ctx context.Context, id string) (*pb.OperationStatus, error) {
	type answer struct {
		st *pb.OperationStatus
		e  *pb.Error
	}
	ch := make(chan answer, 1)
	o.src.Get(&actors.GetOperation{ID: id, Reply: func(st *pb.OperationStatus, e *pb.Error) { ch <- answer{st, e} }})
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	select {
	case a := <-ch:
		switch {
		case a.e.GetCode() == pb.ErrorCode_ERROR_CODE_NOT_FOUND:
			return nil, fmt.Errorf("%w: %q", ErrUnknownOperation, id)
		case a.e != nil:
			return nil, fmt.Errorf("orchid: operation %s: %s", id, a.e.GetMessage())
		}
		return a.st, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: operation %s: %w", actors.ErrUnavailable, id, ctx.Err())
	}
}
