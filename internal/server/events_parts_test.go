package server_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/natsembed"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// TestLargeFairShareSnapshotsArePublishedInParts runs the scheduler on a
// NATS server whose max_payload (64 KiB) is smaller than a fair-share
// snapshot of its 1,000-pool tree (about 100 KB): the snapshots arrive in
// parts that together hold every pool once, and no publish fails.
func TestLargeFairShareSnapshotsArePublishedInParts(t *testing.T) {
	ncfg := natsembed.Default(t.TempDir())
	ncfg.MaxPayload = 64 << 10
	ns, err := natsembed.Start(ncfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Stop)
	var doc strings.Builder
	doc.WriteString("version: 1\ntrees:\n  - name: physical\n    config: {fair_share_update_period: 50ms}\n    pools:\n")
	for k := range 1000 {
		fmt.Fprintf(&doc, "      - {name: pool-with-a-longer-name-%04d}\n", k)
	}
	// Subscribe before the scheduler starts, so that its first snapshots
	// are seen whole.
	nc := testutil.Connect(t, ns)
	subj, err := subjects.Events("physical", subjects.EventFairShare)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	parts := map[string][]*pb.Event{} // by snapshot id
	sub, err := nc.Subscribe(subj, func(m *nats.Msg) {
		var ev pb.Event
		if err := proto.Unmarshal(m.Data, &ev); err != nil {
			t.Errorf("event does not decode: %v", err)
			return
		}
		id, _, _ := strings.Cut(ev.GetId(), ".")
		mu.Lock()
		parts[id] = append(parts[id], &ev)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	srv := servertest.StartServer(t, doc.String(), func(cfg *server.Config) {
		cfg.NATSURL = ns.ClientURL()
		cfg.Actors.FairShareEventPeriod = 100 * time.Millisecond
	})
	// A whole snapshot: every part of one id arrived.
	var whole []*pb.Event
	testutil.WaitFor(t, 15*time.Second, "a fair-share snapshot to arrive whole", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, evs := range parts {
			if n := evs[0].GetFairShare().GetParts(); n > 1 && len(evs) == int(n) {
				whole = evs
				return true
			}
		}
		return false
	})
	seen := map[string]bool{}
	for k, ev := range whole {
		s := ev.GetFairShare()
		if s.GetPart() != int32(k+1) {
			t.Errorf("part %d arrived as number %d", s.GetPart(), k+1)
		}
		if !proto.Equal(ev.GetTime(), whole[0].GetTime()) {
			t.Errorf("part %d has time %v, part 1 %v", k+1, ev.GetTime().AsTime(), whole[0].GetTime().AsTime())
		}
		for _, p := range s.GetPools() {
			if seen[p.GetName()] {
				t.Errorf("pool %s is in two parts", p.GetName())
			}
			seen[p.GetName()] = true
		}
	}
	if len(seen) != 1001 || !seen["<Root>"] || !seen["pool-with-a-longer-name-0999"] {
		t.Errorf("the parts hold %d pools, want the root and 1,000", len(seen))
	}
	if _, failed := srv.EventLosses(); failed != 0 {
		t.Errorf("%d event publishes failed", failed)
	}
}
