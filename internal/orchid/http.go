package orchid

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// Handler serves the orchid as JSON over HTTP (GET only):
//
//	/orchid/trees                                   the live trees
//	/orchid/trees/{tree}                            a whole tree
//	/orchid/trees/{tree}/root[/{attribute…}]         the root element
//	/orchid/trees/{tree}/pools/{pool}[/{attribute…}] a pool ("<Root>" is the root)
//	/orchid/trees/{tree}/operations/{id}[/{attribute…}] an operation in one tree
//	/orchid/operations/{id}[/{attribute…}]          an operation in all its trees
//
// An attribute path is written with '/' or '.' between its steps
// (fair_share/total or fair_share.total). A refusal has the status of its
// typed error (404 for an unknown tree, pool, operation or an attribute the
// element does not have, 400 for an unknown attribute or a bad name, 503
// when the scheduler does not answer in time or when MaxInFlight requests
// are being answered already) and the body an ErrorBody.
func (o *Orchid) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /orchid/trees", func(w http.ResponseWriter, _ *http.Request) {
		o.writeJSON(w, o.Trees())
	})
	element := func(kind subjects.OrchidKind) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			p := subjects.OrchidPath{Kind: kind, Tree: r.PathValue("tree"), Name: r.PathValue("name"), Attribute: attributePath(r.PathValue("attr"))}
			if p.Kind == subjects.OrchidPool && p.Name == scheduler.RootID {
				p.Kind, p.Name = subjects.OrchidRoot, ""
			}
			if _, err := subjects.Orchid(p); err != nil {
				o.writeError(w, err)
				return
			}
			doc, err := o.Answer(p)
			if err != nil {
				o.writeError(w, err)
				return
			}
			o.writeJSON(w, doc)
		}
	}
	mux.HandleFunc("GET /orchid/trees/{tree}", element(subjects.OrchidTree))
	for _, route := range []struct {
		path string
		kind subjects.OrchidKind
	}{
		{"/orchid/trees/{tree}/root", subjects.OrchidRoot},
		{"/orchid/trees/{tree}/pools/{name}", subjects.OrchidPool},
		{"/orchid/trees/{tree}/operations/{name}", subjects.OrchidOperation},
	} {
		mux.HandleFunc("GET "+route.path, element(route.kind))
		mux.HandleFunc("GET "+route.path+"/{attr...}", element(route.kind))
	}
	operation := func(w http.ResponseWriter, r *http.Request) {
		v, err := o.Operation(r.Context(), r.PathValue("id"), attributePath(r.PathValue("attr")))
		if err != nil {
			o.writeError(w, err)
			return
		}
		o.writeJSON(w, v)
	}
	mux.HandleFunc("GET /orchid/operations/{id}", operation)
	mux.HandleFunc("GET /orchid/operations/{id}/{attr...}", operation)
	mux.HandleFunc("/orchid/", func(w http.ResponseWriter, r *http.Request) {
		o.writeErrorProto(w, &pb.Error{Code: pb.ErrorCode_ERROR_CODE_NOT_FOUND, Field: "path",
			Message: fmt.Sprintf("%s %s is not an orchid path (see /orchid/trees)", r.Method, r.URL.Path)})
	})
	return o.limitInFlight(mux, MaxInFlight)
}

// attributePath splits "fair_share/total" or "fair_share.total".
func attributePath(s string) []string {
	s = strings.Trim(s, "/")
	if s == "" {
		return nil
	}
	return strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '.' })
}

func (o *Orchid) writeJSON(w http.ResponseWriter, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		o.writeError(w, fmt.Errorf("orchid: encode: %w", err))
		return
	}
	w.Header().Set("Content-Type", ContentType)
	_, _ = w.Write(append(data, '\n'))
}

func (o *Orchid) writeError(w http.ResponseWriter, err error) {
	e := ErrorProto(err)
	if e.GetCode() == pb.ErrorCode_ERROR_CODE_INTERNAL || e.GetCode() == pb.ErrorCode_ERROR_CODE_UNAVAILABLE {
		o.logger.Warn("orchid request failed", "err", err)
	}
	o.writeErrorProto(w, e)
}

// ErrorBody is the body of a refused HTTP request.
type ErrorBody struct {
	Error struct {
		// Code is the ErrorCode's name ("ERROR_CODE_NOT_FOUND").
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field,omitempty"`
	} `json:"error"`
}

func (o *Orchid) writeErrorProto(w http.ResponseWriter, e *pb.Error) {
	var b ErrorBody
	b.Error.Code, b.Error.Message, b.Error.Field = e.GetCode().String(), e.GetMessage(), e.GetField()
	data, _ := json.Marshal(b)
	w.Header().Set("Content-Type", ContentType)
	w.WriteHeader(wire.StatusCode(e.GetCode()))
	_, _ = w.Write(append(data, '\n'))
}
