package wire

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

func TestStatusCode(t *testing.T) {
	want := map[pb.ErrorCode]int{
		pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT:    400,
		pb.ErrorCode_ERROR_CODE_NODE_MISMATCH:       400,
		pb.ErrorCode_ERROR_CODE_NOT_FOUND:           404,
		pb.ErrorCode_ERROR_CODE_ALREADY_EXISTS:      409,
		pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION: 409,
		pb.ErrorCode_ERROR_CODE_STALE_HEARTBEAT:     409,
		pb.ErrorCode_ERROR_CODE_CONFLICT:            409,
		pb.ErrorCode_ERROR_CODE_LIMIT_EXCEEDED:      429,
		pb.ErrorCode_ERROR_CODE_UNAVAILABLE:         503,
		pb.ErrorCode_ERROR_CODE_INTERNAL:            500,
	}
	for code, status := range want {
		if got := StatusCode(code); got != status {
			t.Errorf("StatusCode(%s) = %d, want %d", code, got, status)
		}
	}
}

func TestPublishReply(t *testing.T) {
	nc := testutil.Connect(t, testutil.StartNATS(t))
	sub, err := nc.SubscribeSync("reply")
	if err != nil {
		t.Fatal(err)
	}
	next := func() *nats.Msg {
		t.Helper()
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	if err := PublishReply(nc, &nats.Msg{Data: []byte("lost")}, nil); err != nil {
		t.Fatalf("no reply subject: %v, want nothing published", err)
	}
	if err := PublishReply(nc, &nats.Msg{Subject: "reply", Data: []byte("doc"), Header: nats.Header{"Content-Type": []string{"application/json"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if m := next(); string(m.Data) != "doc" || m.Header.Get("Content-Type") != "application/json" || m.Header.Get(micro.ErrorCodeHeader) != "" {
		t.Errorf("answer: data %q, header %v", m.Data, m.Header)
	}

	e := &pb.Error{Code: pb.ErrorCode_ERROR_CODE_NOT_FOUND, Field: "pool", Message: "no pool x"}
	if err := PublishReply(nc, &nats.Msg{Subject: "reply", Data: []byte("doc"), Header: nats.Header{"Content-Type": []string{"application/json"}}}, e); err != nil {
		t.Fatal(err)
	}
	m := next()
	if m.Header.Get(micro.ErrorCodeHeader) != "404" || m.Header.Get(micro.ErrorHeader) != "no pool x" || m.Header.Get("Content-Type") != "" {
		t.Errorf("refusal header %v", m.Header)
	}
	got := &pb.Error{}
	if err := proto.Unmarshal(m.Data, got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(e, got, protocmp.Transform()); d != "" {
		t.Errorf("refusal body (-want +got):\n%s", d)
	}
}

// A reply too large for a NATS message is replaced by a LIMIT_EXCEEDED
// Error that says so (NATS would refuse the message, and the requester
// would only time out); one that just fits goes as it is.
func TestPublishReplyTooLarge(t *testing.T) {
	nc := testutil.Connect(t, testutil.StartNATS(t))
	sub, err := nc.SubscribeSync("reply")
	if err != nil {
		t.Fatal(err)
	}
	limit := MaxReplyBytes(nc)
	if limit <= 0 || int64(limit) >= nc.MaxPayload() {
		t.Fatalf("MaxReplyBytes %d with max payload %d", limit, nc.MaxPayload())
	}
	if err := PublishReply(nc, &nats.Msg{Subject: "reply", Data: make([]byte, limit)}, nil); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(5 * time.Second); err != nil || len(m.Data) != limit || m.Header.Get(micro.ErrorCodeHeader) != "" {
		t.Fatalf("a reply of %d bytes: %v, %v", limit, err, m)
	}
	if err := PublishReply(nc, &nats.Msg{Subject: "reply", Data: make([]byte, limit+1)}, nil); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := &pb.Error{}
	if err := proto.Unmarshal(m.Data, got); err != nil {
		t.Fatal(err)
	}
	if got.GetCode() != pb.ErrorCode_ERROR_CODE_LIMIT_EXCEEDED || m.Header.Get(micro.ErrorCodeHeader) != "429" ||
		!strings.Contains(got.GetMessage(), fmt.Sprintf("%d bytes", limit+1)) {
		t.Errorf("a reply of %d bytes: error %v, header %v; want LIMIT_EXCEEDED naming its size", limit+1, got, m.Header)
	}
}
