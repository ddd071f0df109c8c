package orchid

import (
	"fmt"
	"net/http"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// limitInFlight serves at most n requests of next at once. A request that
// finds every slot taken is refused at once with 503 and an ErrorBody
// (ERROR_CODE_UNAVAILABLE) instead of queueing: each orchid request may
// wait on a tree actor for up to the request timeout, and a client that
// retries in a loop against a slow tree would otherwise pile up goroutines
// and tree-actor messages without bound. The NATS service applies the same
// bound (MaxInFlight) with its own slots.
func (o *Orchid) limitInFlight(next http.Handler, n int) http.Handler {
	slots := make(chan struct{}, n)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
		default:
			o.writeErrorProto(w, &pb.Error{Code: pb.ErrorCode_ERROR_CODE_UNAVAILABLE,
				Message: fmt.Sprintf("the orchid is answering %d requests already; retry", n)})
			return
		}
		defer func() { <-slots }()
		next.ServeHTTP(w, r)
	})
}
