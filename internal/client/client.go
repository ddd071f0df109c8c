package client

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"google.golang.org/protobuf/proto"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// ErrTransport is wrapped when a request got no valid answer (timeout, no
// scheduler, undecodable reply).
var ErrTransport = errors.New("client: request failed")

// APIError is a request the scheduler refused.
type APIError struct {
	Err *pb.Error
}

func (e *APIError) Error() string {
	code := e.Err.GetCode().String()
	if e.Err.GetField() != "" {
		return fmt.Sprintf("%s (%s): %s", code, e.Err.GetField(), e.Err.GetMessage())
	}
	return fmt.Sprintf("%s: %s", code, e.Err.GetMessage())
}

// Code returns the typed error code.
func (e *APIError) Code() pb.ErrorCode { return e.Err.GetCode() }

// Client sends requests over one NATS connection.
type Client struct {
	nc      *nats.Conn
	timeout time.Duration
	// user, when set, is the user submissions, aborts and updates go as
	// (on its own subjects, see WithUser).
	user string
}

// New returns a client; timeout bounds each request (default 5s when <= 0).
func New(nc *nats.Conn, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	return &Client{nc: nc, timeout: timeout}
}

// WithUser returns a copy of c whose submissions, aborts and updates go
// on user's own subjects (subjects.UserSubmit, subjects.UserOp): the
// scheduler takes the user from the subject (and lets only an operation's
// owner abort or update it), and a secured NATS server accepts them only
// from that user's credential.
// It fails for a name that is not a subject token.
func (c *Client) WithUser(user string) (*Client, error) {
	if _, err := subjects.UserSubmit(user); err != nil {
		return nil, err
	}
	cc := *c
	cc.user = user
	return &cc, nil
}

// Call sends req on subject and decodes the reply into resp.
func (c *Client) Call(ctx context.Context, subject string, req, resp proto.Message) error {
	data, err := proto.Marshal(req)
	if err != nil {
		return fmt.Errorf("%w: encode %T: %w", ErrTransport, req, err)
	}
	return c.CallRaw(ctx, subject, data, resp)
}

// CallRaw sends raw bytes (tests use it for malformed payloads).
func (c *Client) CallRaw(ctx context.Context, subject string, data []byte, resp proto.Message) error {
	body, err := c.Request(ctx, subject, data)
	if err != nil {
		return err
	}
	if err := proto.Unmarshal(body, resp); err != nil {
		return fmt.Errorf("%w: %s: decode %T: %w", ErrTransport, subject, resp, err)
	}
	return nil
}

// Request sends raw bytes and returns the reply's body as it came (the
// orchid answers JSON); a refusal is an *APIError.
func (c *Client) Request(ctx context.Context, subject string, data []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	msg, err := c.nc.RequestWithContext(ctx, subject, data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrTransport, subject, err)
	}
	if code := msg.Header.Get(micro.ErrorCodeHeader); code != "" {
		e := &pb.Error{}
		if uerr := proto.Unmarshal(msg.Data, e); uerr != nil || e.GetCode() == pb.ErrorCode_ERROR_CODE_UNSPECIFIED {
			e = &pb.Error{Code: pb.ErrorCode_ERROR_CODE_INTERNAL, Message: fmt.Sprintf("error %s: %s", code, msg.Header.Get(micro.ErrorHeader))}
		}
		return nil, &APIError{Err: e}
	}
	return msg.Data, nil
}

// submitTries is how many times Submit sends a submission that gets no
// answer (and Get and ListPage their request), and submitBackoff the wait
// before the second try (doubling).
const (
	submitTries   = 3
	submitBackoff = 200 * time.Millisecond
)

// Submit starts an operation and returns its id. The submission carries a
// request id of its own (NewRequestID) and is sent again with it, up to
// submitTries times, when no answer comes (a timeout, no scheduler yet) or
// the scheduler could not store it (UNAVAILABLE): the scheduler starts one
// operation however many of the tries reach it.
func (c *Client) Submit(ctx context.Context, spec *pb.OperationSpec) (string, error) {
	return c.SubmitRequest(ctx, spec, NewRequestID())
}

// SubmitRequest is Submit with the caller's request id
// (StartOperationRequest.request_id): a caller that retries a submission
// itself, across runs, passes the same one each time.
func (c *Client) SubmitRequest(ctx context.Context, spec *pb.OperationSpec, requestID string) (string, error) {
	req := &pb.StartOperationRequest{Spec: spec, RequestId: requestID}
	resp := &pb.StartOperationResponse{}
	subject := subjects.OpSubmit()
	if c.user != "" {
		subject, _ = subjects.UserSubmit(c.user) // checked by WithUser
	}
	if err := retried(ctx, func() error { return c.Call(ctx, subject, req, resp) }); err != nil {
		return "", err
	}
	return resp.GetOperationId(), nil
}

// retried calls call up to submitTries times, waiting submitBackoff
// (doubling) between tries, while it gets no answer (ErrTransport: a
// timeout, no scheduler listening, as during a leader's failover) or
// UNAVAILABLE (the scheduler could not store it, or is not the leader);
// it returns the last error.
func retried(ctx context.Context, call func() error) error {
	wait := submitBackoff
	for try := 1; ; try++ {
		err := call()
		if err == nil {
			return nil
		}
		var api *APIError
		again := errors.Is(err, ErrTransport) || errors.As(err, &api) && api.Code() == pb.ErrorCode_ERROR_CODE_UNAVAILABLE
		if !again || try == submitTries {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// RetriedDuration is the longest a call that asks again (Submit, Get,
// List, Abort, Update) takes on a client whose requests time out after
// timeout: every try, and the waits between them.
func RetriedDuration(timeout time.Duration) time.Duration {
	d := time.Duration(submitTries) * timeout
	for k, wait := 1, submitBackoff; k < submitTries; k, wait = k+1, wait*2 {
		d += wait
	}
	return d
}

// NewRequestID returns a random request id: crypto/rand.Text, 26 base32
// characters (128 bits).
func NewRequestID() string { return rand.Text() }

// Get returns an operation's status, asking again (as Submit does) when
// no answer comes or the answer is UNAVAILABLE.
func (c *Client) Get(ctx context.Context, id string) (*pb.OperationStatus, error) {
	subj, err := subjects.Op(id, subjects.OpGet)
	if err != nil {
		return nil, err
	}
	resp := &pb.OperationStatus{}
	if err := retried(ctx, func() error { return c.Call(ctx, subj, &pb.GetOperationRequest{OperationId: id}, resp) }); err != nil {
		return nil, err
	}
	return resp, nil
}

// List returns the operations req asks for (all that match, or the first
// req.Limit), following the pages of a listing too large for one reply.
// (req.PageToken starts it after an operation, as in ListPage.)
func (c *Client) List(ctx context.Context, req *pb.ListOperationsRequest) ([]*pb.OperationStatus, error) {
	page := proto.Clone(req).(*pb.ListOperationsRequest)
	var out []*pb.OperationStatus
	for {
		if req.GetLimit() > 0 {
			page.Limit = req.GetLimit() - int32(len(out))
		}
		resp, err := c.ListPage(ctx, page)
		if err != nil {
			return nil, err
		}
		out = append(out, resp.GetOperations()...)
		if resp.GetNextPageToken() == "" || req.GetLimit() > 0 && len(out) >= int(req.GetLimit()) {
			return out, nil
		}
		if len(resp.GetOperations()) == 0 {
			return nil, fmt.Errorf("%w: a page of the listing holds no operation but names a next page", ErrTransport)
		}
		page.PageToken = resp.GetNextPageToken()
	}
}

// ListPage returns one page of a listing: the operations that fit in one
// reply, and the token of the next page (empty on the last). It asks again
// as Get does.
func (c *Client) ListPage(ctx context.Context, req *pb.ListOperationsRequest) (*pb.ListOperationsResponse, error) {
	resp := &pb.ListOperationsResponse{}
	if err := retried(ctx, func() error { return c.Call(ctx, subjects.OpList(), req, resp) }); err != nil {
		return nil, err
	}
	return resp, nil
}

// Abort aborts an operation, asking again (as Submit does) when no answer
// comes or the answer is UNAVAILABLE. When an earlier try may have
// aborted it (its answer lost, or the abort not stored yet) and a later
// one finds it already ended, the operation's status is returned if it
// is ABORTED: the abort took.
func (c *Client) Abort(ctx context.Context, id, reason string) (*pb.OperationStatus, error) {
	subj, err := c.opSubject(id, subjects.OpAbort)
	if err != nil {
		return nil, err
	}
	resp := &pb.AbortOperationResponse{}
	uncertain := false // an earlier try failed without a refusal
	err = retried(ctx, func() error {
		err := c.Call(ctx, subj, &pb.AbortOperationRequest{OperationId: id, Reason: reason}, resp)
		var api *APIError
		if uncertain && errors.As(err, &api) && api.Code() == pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION {
			if st, gerr := c.Get(ctx, id); gerr == nil && st.GetState() == pb.OperationState_OPERATION_STATE_ABORTED {
				resp.Status = st
				return nil
			}
		}
		uncertain = uncertain || err != nil
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp.GetStatus(), nil
}

// Update changes an operation's runtime parameters (the fields set in req;
// its operation_id is filled in) and returns the stored status.
func (c *Client) Update(ctx context.Context, id string, req *pb.UpdateOperationRequest) (*pb.OperationStatus, error) {
	subj, err := c.opSubject(id, subjects.OpUpdate)
	if err != nil {
		return nil, err
	}
	req = proto.Clone(req).(*pb.UpdateOperationRequest)
	req.OperationId = id
	resp := &pb.UpdateOperationResponse{}
	// Asked again (as Submit does) when no answer comes or the answer is
	// UNAVAILABLE: an update sets values, so one that took already takes
	// again the same.
	if err := retried(ctx, func() error { return c.Call(ctx, subj, req, resp) }); err != nil {
		return nil, err
	}
	return resp.GetStatus(), nil
}

// opSubject is the subject of verb for operation id: the user's own when
// the client has one (see WithUser).
func (c *Client) opSubject(id string, verb subjects.OpVerb) (string, error) {
	if c.user != "" {
		return subjects.UserOp(c.user, id, verb)
	}
	return subjects.Op(id, verb)
}

// Terminal reports whether a state is final.
func Terminal(s pb.OperationState) bool {
	switch s {
	case pb.OperationState_OPERATION_STATE_COMPLETED, pb.OperationState_OPERATION_STATE_FAILED, pb.OperationState_OPERATION_STATE_ABORTED:
		return true
	}
	return false
}

// Wait polls an operation until it is in a final state or ctx is done.
func (c *Client) Wait(ctx context.Context, id string, poll time.Duration) (*pb.OperationStatus, error) {
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		st, err := c.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if Terminal(st.GetState()) {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-t.C:
		}
	}
}
