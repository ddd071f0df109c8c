package actors

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// A listing of many operations comes in pages: one reply must fit in a
// NATS message (1 MiB by default on a NATS server, 8 MiB on the embedded
// one), and every status carries its operation's spec. The operations are
// sorted by submit time, then id; a page token names the last operation
// of its page by both, and the next page starts after it in that order,
// so operations submitted, finished or forgotten between two pages make a
// listing neither repeat nor skip the others.

// list returns one page of the operations req asks for, at most maxBytes
// of encoded reply when maxBytes > 0 (but at least one operation).
func (r *rootActor) list(req *pb.ListOperationsRequest, maxBytes int) (*pb.ListOperationsResponse, *pb.Error) {
	var after pageKey
	if tok := req.GetPageToken(); tok != "" {
		var ok bool
		if after, ok = parsePageToken(tok); !ok {
			return nil, invalidArg("page_token", "%q is not a page token of this scheduler (pass next_page_token unchanged)", tok)
		}
	}
	var matching []*pb.OperationStatus
	for _, op := range r.ops {
		st := op.status
		if st == nil || (len(req.GetStates()) > 0 && !slices.Contains(req.GetStates(), st.GetState())) {
			continue
		}
		if req.GetPool() != "" && !slices.ContainsFunc(st.GetTrees(), func(t *pb.TreeRuntime) bool { return t.GetPool() == req.GetPool() }) {
			continue
		}
		if req.GetPageToken() != "" && comparePageKey(keyOf(st), after) <= 0 {
			continue
		}
		matching = append(matching, st)
	}
	slices.SortFunc(matching, func(a, b *pb.OperationStatus) int { return comparePageKey(keyOf(a), keyOf(b)) })
	n := len(matching)
	if l := int(req.GetLimit()); l > 0 {
		n = min(n, l)
	}
	if maxBytes > 0 {
		size := 0
		for k, st := range matching[:n] {
			// The status, its field's tag and its length.
			sz := proto.Size(st)
			size += 1 + protowire.SizeVarint(uint64(sz)) + sz
			if k > 0 && size > maxBytes {
				n = k
				break
			}
		}
	}
	out := &pb.ListOperationsResponse{Operations: matching[:n]}
	if n < len(matching) {
		out.NextPageToken = keyOf(matching[n-1]).String()
	}
	return out, nil
}

// pageKey is an operation's place in a listing: its submit time (in Unix
// nanoseconds) and id.
type pageKey struct {
	submit int64
	id     string
}

func keyOf(st *pb.OperationStatus) pageKey {
	return pageKey{submit: st.GetSubmitTime().AsTime().UnixNano(), id: st.GetId()}
}

// comparePageKey orders operations by submit time, then id.
func comparePageKey(a, b pageKey) int {
	if c := cmp.Compare(a.submit, b.submit); c != 0 {
		return c
	}
	return strings.Compare(a.id, b.id)
}

// String formats a page token: "<submit nanoseconds>/<id>".
func (k pageKey) String() string { return strconv.FormatInt(k.submit, 10) + "/" + k.id }

// parsePageToken reads a token String wrote.
func parsePageToken(tok string) (pageKey, bool) {
	ns, id, ok := strings.Cut(tok, "/")
	if !ok || id == "" {
		return pageKey{}, false
	}
	submit, err := strconv.ParseInt(ns, 10, 64)
	if err != nil || strconv.FormatInt(submit, 10) != ns {
		return pageKey{}, false
	}
	return pageKey{submit: submit, id: id}, true
}
