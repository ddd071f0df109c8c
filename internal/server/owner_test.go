package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/natsauth"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// TestOnlyTheOwnerAbortsOrUpdates: on a secured server a client aborts and
// updates operations on its own user's subjects only, and the scheduler
// lets only the operation's owner through. bob can neither abort nor
// update alice's operation (PERMISSION_DENIED, naming both), nor reach it
// on alice's subjects or on the anonymous ones (NATS refuses); alice
// updates and aborts her own; an admin, trusted, aborts anyone's on the
// anonymous subject; an operation an admin submitted without a user is
// the admins' alone; an unknown operation is NOT_FOUND.
func TestOnlyTheOwnerAbortsOrUpdates(t *testing.T) {
	admin, alice, bob := newKey(t), newKey(t), newKey(t)
	auth, err := natsauth.Parse("auth.yaml", []byte(fmt.Sprintf("version: 1\nadmins: [{name: ops, nkey: %s}]\nclients:\n  - {name: alice, nkey: %s}\n  - {name: bob, nkey: %s}\n",
		admin.Public(), alice.Public(), bob.Public())))
	if err != nil {
		t.Fatal(err)
	}
	srv := servertest.StartServer(t, "version: 1\ntrees:\n  - name: physical\n    pools:\n      - {name: open}\n",
		func(c *server.Config) { c.HTTPAddr, c.Auth = "", auth })
	ctx := context.Background()
	aliceC, _ := securedClient(t, srv.URL(), alice, "alice")
	bobC, _ := securedClient(t, srv.URL(), bob, "bob")
	adminConn, err := nats.Connect(srv.URL(), admin.Option())
	if err != nil {
		t.Fatal(err)
	}
	defer adminConn.Close()
	adminC := client.New(adminConn, 5*time.Second)

	submit := func(c *client.Client) string {
		t.Helper()
		id, err := c.Submit(ctx, simulated("open", 1, 1, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	weight := func(w float64) *pb.UpdateOperationRequest {
		return &pb.UpdateOperationRequest{Weight: proto.Float64(w)}
	}
	denied := func(what string, err error, want string) {
		t.Helper()
		var ae *client.APIError
		if !errors.As(err, &ae) || ae.Code() != pb.ErrorCode_ERROR_CODE_PERMISSION_DENIED || !strings.Contains(ae.Err.GetMessage(), want) {
			t.Errorf("%s: %v, want PERMISSION_DENIED saying %q", what, err, want)
		}
	}

	mine := submit(aliceC)
	_, err = bobC.Abort(ctx, mine, "not yours")
	denied("bob aborting alice's operation", err, fmt.Sprintf(`user "bob" may not abort operation %s of user "alice"`, mine))
	_, err = bobC.Update(ctx, mine, weight(5))
	denied("bob updating alice's operation", err, fmt.Sprintf(`user "bob" may not update operation %s of user "alice"`, mine))
	if st, err := aliceC.Get(ctx, mine); err != nil || st.GetState() == pb.OperationState_OPERATION_STATE_ABORTED || st.GetSpec().GetWeight() == 5 {
		t.Fatalf("alice's operation after bob's tries: %v (%v), want untouched", st, err)
	}

	// bob on alice's subjects and on the anonymous ones: NATS refuses.
	for _, c := range []struct {
		name string
		user string
	}{{"alice's subjects", "alice"}, {"the anonymous subjects", ""}} {
		cl, errs := securedClient(t, srv.URL(), bob, c.user)
		sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, errA := cl.Abort(sctx, mine, "")
		_, errU := cl.Update(sctx, mine, weight(5))
		cancel()
		if errA == nil || errU == nil {
			t.Errorf("bob on %s: abort %v, update %v; want both refused", c.name, errA, errU)
		}
		errs.expect(t, "Permissions Violation for Publish")
	}

	// alice updates and aborts her own.
	if st, err := aliceC.Update(ctx, mine, weight(3)); err != nil || st.GetSpec().GetWeight() != 3 {
		t.Fatalf("alice updating her operation: %v (%v)", st, err)
	}
	if st, err := aliceC.Abort(ctx, mine, "done"); err != nil || st.GetState() != pb.OperationState_OPERATION_STATE_ABORTED {
		t.Fatalf("alice aborting her operation: %v (%v)", st, err)
	}

	// The admin aborts anyone's; its own operation without a user is the
	// admins' alone.
	hers := submit(aliceC)
	if st, err := adminC.Abort(ctx, hers, "maintenance"); err != nil || st.GetState() != pb.OperationState_OPERATION_STATE_ABORTED {
		t.Errorf("the admin aborting alice's operation: %v (%v)", st, err)
	}
	nobodys := submit(adminC)
	_, err = aliceC.Abort(ctx, nobodys, "")
	denied("alice aborting an operation without a user", err, "submitted without a user, so only an admin may")

	var ae *client.APIError
	if _, err := bobC.Abort(ctx, "no-such-op", ""); !errors.As(err, &ae) || ae.Code() != pb.ErrorCode_ERROR_CODE_NOT_FOUND {
		t.Errorf("bob aborting an unknown operation: %v, want NOT_FOUND", err)
	}
}
