package orchid

import (
	"context"
	"encoding/json"

	"github.com/sharetree/sharetree/internal/client"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// Client reads the orchid over NATS. A refused request is a
// *client.APIError carrying the typed Error.
type Client struct {
	c *client.Client
}

// NewClient returns a client over c's connection and timeout.
func NewClient(c *client.Client) *Client { return &Client{c: c} }

// Get returns the JSON document of one orchid request.
func (c *Client) Get(ctx context.Context, p subjects.OrchidPath) (json.RawMessage, error) {
	subj, err := subjects.Orchid(p)
	if err != nil {
		return nil, err
	}
	return c.c.Request(ctx, subj, nil)
}

// Operation returns an operation across its trees, as the HTTP API's
// /orchid/operations/<id> does: its status from the scheduler's operation
// service, then its element in each of its trees from the orchid.
func (c *Client) Operation(ctx context.Context, id string, attribute []string) (*OperationView, error) {
	if err := subjects.ValidateToken("operation id", id); err != nil {
		return nil, err
	}
	if err := CheckAttribute(attribute); err != nil {
		return nil, err
	}
	st, err := c.c.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return operationView(id, st, func(tree string) (json.RawMessage, error) {
		return c.Get(ctx, subjects.OrchidPath{Kind: subjects.OrchidOperation, Tree: tree, Name: id, Attribute: attribute})
	})
}

// operationView gathers an operation's element from each of its trees;
// trees it has left since the status was read are skipped.
func operationView(id string, st *pb.OperationStatus, element func(tree string) (json.RawMessage, error)) (*OperationView, error) {
	out := &OperationView{ID: id, State: StateWord(st.GetState()), Trees: map[string]json.RawMessage{}}
	for _, tr := range st.GetTrees() {
		doc, err := element(tr.GetTree())
		if err != nil {
			if e := ErrorProto(err); e.GetCode() == pb.ErrorCode_ERROR_CODE_NOT_FOUND && e.GetField() != "attribute" {
				continue
			}
			return nil, err
		}
		out.Trees[tr.GetTree()] = doc
	}
	return out, nil
}
