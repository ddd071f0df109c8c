package orchid

import (
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// Version is the orchid service's micro version.
const Version = "1.0.0"

// MaxInFlight bounds the requests answered at once, separately for the
// NATS service and for the HTTP handler; more are refused with UNAVAILABLE
// (HTTP 503) rather than queued behind a slow tree.
const MaxInFlight = 64

// ContentType is the header every orchid answer carries.
const ContentType = "application/json"

// NewService serves the orchid on nc (subjects.OrchidService, one endpoint
// on subjects.OrchidAll). The payload of a request is ignored: the subject
// says everything. An answer is the JSON document (Content-Type header
// application/json); a refusal is a micro error whose body is the typed
// protobuf Error, as for every sharetree service. Each request is answered
// on its own goroutine, so a tree that is slow to answer holds up only the
// requests about it. Stop the returned service to stop serving.
//
// Only the leader answers (wire.Leader): leading reports whether this
// scheduler is the leader (nil: always).
func NewService(nc *nats.Conn, o *Orchid, leading func() bool) (micro.Service, error) {
	svc, err := micro.AddService(nc, micro.Config{
		Name: subjects.OrchidService, Version: Version,
		Description: "sharetree orchid: live attributes of pools and operations (JSON)",
	})
	if err != nil {
		return nil, fmt.Errorf("orchid: add service: %w", err)
	}
	h := &handler{o: o, nc: nc, slots: make(chan struct{}, MaxInFlight)}
	if err := (wire.Leader{NC: nc, Leading: leading}).AddEndpoint(svc, "orchid", subjects.OrchidAll(), h.serve); err != nil {
		_ = svc.Stop()
		return nil, fmt.Errorf("orchid: endpoint: %w", err)
	}
	if err := nc.Flush(); err != nil {
		_ = svc.Stop()
		return nil, fmt.Errorf("orchid: flush subscriptions: %w", err)
	}
	return svc, nil
}

type handler struct {
	o     *Orchid
	nc    *nats.Conn
	slots chan struct{}
}

// serve parses the subject and answers on another goroutine. The answer is
// published on the reply subject directly: micro.Request's Respond may not
// be called once the handler has returned.
func (h *handler) serve(req micro.Request) {
	p, err := subjects.ParseOrchid(req.Subject())
	if err != nil {
		h.fail(req, ErrorProto(err))
		return
	}
	select {
	case h.slots <- struct{}{}:
	default:
		h.fail(req, &pb.Error{Code: pb.ErrorCode_ERROR_CODE_UNAVAILABLE,
			Message: fmt.Sprintf("the orchid is answering %d requests already; retry", MaxInFlight)})
		return
	}
	reply := req.Reply()
	go func() {
		defer func() { <-h.slots }()
		doc, err := h.o.Answer(p)
		var e *pb.Error
		if err != nil {
			e = ErrorProto(err)
			if e.GetCode() == pb.ErrorCode_ERROR_CODE_INTERNAL || e.GetCode() == pb.ErrorCode_ERROR_CODE_UNAVAILABLE {
				h.o.logger.Warn("orchid request failed", "subject", req.Subject(), "err", err)
			}
		}
		_ = wire.PublishReply(h.nc, &nats.Msg{Subject: reply, Data: doc, Header: nats.Header{"Content-Type": []string{ContentType}}}, e)
	}()
}

func (h *handler) fail(req micro.Request, e *pb.Error) {
	_ = wire.RespondError(req, e)
}
