package server

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/orchid"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/treeconf"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// A scheduler serving the API, the orchid or the configuration API but no
// longer the leader (its
// lease lost, its services not yet stopped) gets every request too, since
// the endpoints have no queue group. It refuses late, so a leader's answer
// reaches the caller first; with no leader, the caller still gets the
// refusal, UNAVAILABLE.
func TestANonLeadersRefusalComesAfterTheLeadersAnswer(t *testing.T) {
	notLeading := func() bool { return false }
	getSubject, err := subjects.Op("op-1-1", subjects.OpGet)
	if err != nil {
		t.Fatal(err)
	}
	treesSubject, err := subjects.Orchid(subjects.OrchidPath{Kind: subjects.OrchidTrees})
	if err != nil {
		t.Fatal(err)
	}
	configSubject, err := subjects.Config(subjects.ConfigTrees)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, subject, all string
		serve              func(nc *nats.Conn) (micro.Service, error)
	}{
		{"operation API", getSubject, subjects.OpAll(subjects.OpGet), func(nc *nats.Conn) (micro.Service, error) {
			svc, err := micro.AddService(nc, micro.Config{Name: "sharetree-test", Version: "0.0.1"})
			if err != nil {
				return nil, err
			}
			return svc, addService(svc, &service{nc: nc, rejected: &atomic.Uint64{}, leading: notLeading})
		}},
		{"orchid", treesSubject, subjects.OrchidAll(), func(nc *nats.Conn) (micro.Service, error) {
			return orchid.NewService(nc, nil, notLeading)
		}},
		{"configuration API", configSubject, configSubject, func(nc *nats.Conn) (micro.Service, error) {
			return treeconf.NewAdminService(nc, nil, nil, treeconf.WithLeading(notLeading))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := testutil.StartNATS(t)
			nc := testutil.Connect(t, ns)
			svc, err := tc.serve(nc)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = svc.Stop() })
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
			cl := client.New(testutil.Connect(t, ns), 5*time.Second)
			call := func() ([]byte, error) { return cl.Request(context.Background(), tc.subject, nil) }
			var apiErr *client.APIError
			if _, err := call(); !errors.As(err, &apiErr) || apiErr.Err.GetCode() != pb.ErrorCode_ERROR_CODE_UNAVAILABLE {
				t.Fatalf("with no leader: %v; want UNAVAILABLE", err)
			}

			// A leader joins; it answers at once.
			leader := testutil.Connect(t, ns)
			sub, err := leader.Subscribe(tc.all, func(m *nats.Msg) { _ = m.Respond([]byte("the leader's")) })
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = sub.Unsubscribe() })
			if err := leader.Flush(); err != nil {
				t.Fatal(err)
			}
			for k := range 10 {
				if body, err := call(); err != nil || string(body) != "the leader's" {
					t.Errorf("request %d of 10: %q, %v; want the leader's answer", k+1, body, err)
				}
			}
		})
	}
}
