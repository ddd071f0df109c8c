package treeconf

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// RequestTimeout bounds the work of one request (reads and writes of the
// bucket, with retries).
const RequestTimeout = 15 * time.Second

// NewService starts the configuration API (subjects.ConfigService) on nc:
// the endpoints of subjects.Config, ConfigTree and ConfigPool, each in the
// micro service's queue group, so several processes may serve it (but see
// WithLeading). counter may be nil (no scheduler: no operations); logger
// may be nil. When it returns, the endpoints are subscribed at the server.
// Stop the returned service to stop serving.
func NewService(nc *nats.Conn, store *Store, counter OperationCounter, logger *slog.Logger, opts ...ServiceOption) (micro.Service, error) {
	return NewAdminService(nc, NewAdmin(store, counter, logger), logger, opts...)
}

// ServiceOption changes how the configuration API is served.
type ServiceOption func(*handlers)

// WithLeading serves the API from the leading scheduler only (see
// wire.Leader): leading reports whether this process leads.
func WithLeading(leading func() bool) ServiceOption {
	return func(h *handlers) { h.leading = leading }
}

// NewAdminService is NewService over an existing Admin (to share its
// in-process serialisation with other users of it).
func NewAdminService(nc *nats.Conn, admin *Admin, logger *slog.Logger, opts ...ServiceOption) (micro.Service, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	h := &handlers{admin: admin, logger: logger.With("component", "treeconf-service"), nc: nc}
	for _, o := range opts {
		o(h)
	}
	svc, err := micro.AddService(nc, micro.Config{
		Name:        subjects.ConfigService,
		Version:     "1.0.0",
		Description: "sharetree live pool-tree configuration",
	})
	if err != nil {
		return nil, fmt.Errorf("treeconf: add service: %w", err)
	}
	type ep struct {
		name, subject string
		h             micro.HandlerFunc
	}
	var eps []ep
	for _, v := range []struct {
		verb subjects.ConfigVerb
		h    micro.HandlerFunc
	}{{subjects.ConfigTrees, h.listTrees}, {subjects.ConfigApply, h.apply}, {subjects.ConfigGet, h.getCluster}, {subjects.ConfigSet, h.setCluster}} {
		subj, err := subjects.Config(v.verb)
		if err != nil {
			return nil, err
		}
		eps = append(eps, ep{"config-" + string(v.verb), subj, v.h})
	}
	for _, v := range []struct {
		verb subjects.TreeVerb
		h    micro.HandlerFunc
	}{{subjects.TreeCreate, h.createTree}, {subjects.TreeGet, h.getTree}, {subjects.TreeSet, h.setTree}, {subjects.TreeRemove, h.removeTree}, {subjects.TreePools, h.listPools}} {
		eps = append(eps, ep{"tree-" + string(v.verb), subjects.ConfigTreeAll(v.verb), v.h})
	}
	for _, v := range []struct {
		verb subjects.PoolVerb
		h    micro.HandlerFunc
	}{{subjects.PoolCreate, h.createPool}, {subjects.PoolGet, h.getPool}, {subjects.PoolSet, h.setPool}, {subjects.PoolRemove, h.removePool}} {
		eps = append(eps, ep{"pool-" + string(v.verb), subjects.ConfigPoolAll(v.verb), v.h})
	}
	for _, e := range eps {
		var err error
		if h.leading != nil {
			err = (wire.Leader{NC: h.nc, Leading: h.leading}).AddEndpoint(svc, e.name, e.subject, e.h)
		} else {
			err = svc.AddEndpoint(e.name, e.h, micro.WithEndpointSubject(e.subject))
		}
		if err != nil {
			_ = svc.Stop()
			return nil, fmt.Errorf("treeconf: endpoint %s: %w", e.name, err)
		}
	}
	// Once NewService returns, the server knows the subscriptions: a
	// request from another connection finds a responder.
	if err := nc.Flush(); err != nil {
		_ = svc.Stop()
		return nil, fmt.Errorf("treeconf: flush subscriptions: %w", err)
	}
	return svc, nil
}

// handlers decode a request, check it against its subject, call the Admin
// and reply with protobuf or a typed Error.
type handlers struct {
	admin  *Admin
	logger *slog.Logger
	// nc and leading: see WithLeading (leading nil: always serve).
	nc      *nats.Conn
	leading func() bool
}

func (h *handlers) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), RequestTimeout)
}

// decode unmarshals the payload strictly: bytes that do not parse, or
// fields the message does not define (another message, or a newer client
// whose field would be silently ignored), are refused.
func (h *handlers) decode(req micro.Request, m proto.Message) bool {
	err := proto.Unmarshal(req.Data(), m)
	if err == nil && len(m.ProtoReflect().GetUnknown()) > 0 {
		err = errors.New("it has fields the message does not define")
	}
	if err != nil {
		h.fail(req, &pb.Error{Code: pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, Field: "payload",
			Message: fmt.Sprintf("payload on %s is not a %s: %v", req.Subject(), m.ProtoReflect().Descriptor().FullName(), err)})
		return false
	}
	return true
}

func (h *handlers) fail(req micro.Request, e *pb.Error) {
	if e.GetCode() == pb.ErrorCode_ERROR_CODE_INTERNAL || e.GetCode() == pb.ErrorCode_ERROR_CODE_UNAVAILABLE {
		h.logger.Warn("request failed", "subject", req.Subject(), "code", e.GetCode().String(), "err", e.GetMessage())
	} else {
		h.logger.Debug("request refused", "subject", req.Subject(), "code", e.GetCode().String(), "rule", e.GetRule(), "err", e.GetMessage())
	}
	_ = wire.RespondError(req, e)
}

// errAnswered is returned by a handler step that has already answered the
// request (with a typed error); reply then sends nothing more.
var errAnswered = errors.New("treeconf: request already answered")

func (h *handlers) reply(req micro.Request, m proto.Message, err error) {
	if errors.Is(err, errAnswered) {
		return
	}
	if err != nil {
		h.fail(req, ErrorProto(err))
		return
	}
	data, err := proto.Marshal(m)
	if err != nil {
		h.fail(req, &pb.Error{Code: pb.ErrorCode_ERROR_CODE_INTERNAL, Message: fmt.Sprintf("encode reply: %v", err)})
		return
	}
	_ = req.Respond(data)
}

// ErrorProto maps an error of this package to the wire's typed Error:
// rule errors to INVALID_ARGUMENT (FAILED_PRECONDITION for removals refused
// because the object is in use, ALREADY_EXISTS for duplicate names) with
// the rule and the key as field, conflicts to CONFLICT, missing objects to
// NOT_FOUND, a store that cannot be reached to UNAVAILABLE.
func ErrorProto(err error) *pb.Error {
	msg := strings.TrimPrefix(err.Error(), "treeconf: ")
	var re *RuleError
	switch {
	case errors.As(err, &re):
		code := pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT
		switch {
		case errors.Is(err, ErrInUse):
			code = pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION
		case errors.Is(err, ErrExists):
			code = pb.ErrorCode_ERROR_CODE_ALREADY_EXISTS
		}
		return &pb.Error{Code: code, Message: msg, Field: re.Key, Rule: string(re.Rule)}
	case errors.Is(err, ErrConflict):
		return &pb.Error{Code: pb.ErrorCode_ERROR_CODE_CONFLICT, Message: msg}
	case errors.Is(err, ErrNotFound):
		return &pb.Error{Code: pb.ErrorCode_ERROR_CODE_NOT_FOUND, Message: msg}
	case errors.Is(err, ErrExists):
		return &pb.Error{Code: pb.ErrorCode_ERROR_CODE_ALREADY_EXISTS, Message: msg}
	case errors.Is(err, ErrStore), errors.Is(err, context.DeadlineExceeded):
		return &pb.Error{Code: pb.ErrorCode_ERROR_CODE_UNAVAILABLE, Message: msg}
	}
	return &pb.Error{Code: pb.ErrorCode_ERROR_CODE_INTERNAL, Message: msg}
}

// name returns the name the subject gives, checking that the payload's
// (when not empty) agrees.
func (h *handlers) name(req micro.Request, field, fromSubject, fromPayload string) (string, bool) {
	if fromPayload != "" && fromPayload != fromSubject {
		h.fail(req, &pb.Error{Code: pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, Field: field,
			Message: fmt.Sprintf("payload names %s %q but the subject names %q", field, fromPayload, fromSubject)})
		return "", false
	}
	return fromSubject, true
}

func (h *handlers) treeSubject(req micro.Request, payloadTree string) (string, bool) {
	tree, _, err := subjects.ParseConfigTree(req.Subject())
	if err != nil {
		h.fail(req, &pb.Error{Code: pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, Field: "subject", Message: err.Error()})
		return "", false
	}
	return h.name(req, "tree", tree, payloadTree)
}

func (h *handlers) poolSubject(req micro.Request, payloadTree, payloadPool string) (string, string, bool) {
	tree, pool, _, err := subjects.ParseConfigPool(req.Subject())
	if err != nil {
		h.fail(req, &pb.Error{Code: pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, Field: "subject", Message: err.Error()})
		return "", "", false
	}
	if _, ok := h.name(req, "tree", tree, payloadTree); !ok {
		return "", "", false
	}
	if _, ok := h.name(req, "pool", pool, payloadPool); !ok {
		return "", "", false
	}
	return tree, pool, true
}
