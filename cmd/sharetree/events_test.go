package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// eventIDs runs `sharetree events` with args and returns the printed
// events' ids.
func eventIDs(t *testing.T, args ...string) []string {
	t.Helper()
	code, out, errOut := runCLI(t, append([]string{"events"}, args...)...)
	if code != 0 {
		t.Fatalf("events %v: exit %d: %s", args, code, errOut)
	}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var ev struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("events %v: line %q: %v", args, line, err)
		}
		ids = append(ids, ev.ID)
	}
	return ids
}

// A durable reader goes on where its last run stopped: two runs of
// `events --durable` (the first stopped by --limit) print every event of
// the stream once, in order, and a third prints nothing new.
func TestEventsDurableGoesOnWhereItStopped(t *testing.T) {
	url, c := startScheduler(t)
	spec := &pb.OperationSpec{Pool: "narrow", Tasks: []*pb.TaskSpec{{Name: "main", JobCount: 1, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
		Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(time.Hour)}}}}
	for range 6 {
		if _, err := c.Submit(context.Background(), spec); err != nil {
			t.Fatal(err)
		}
	}
	// The operation events (one per submission at least) are in the stream.
	var all []string
	testutil.WaitFor(t, 10*time.Second, "six operation events", func() bool {
		all = eventIDs(t, "--nats-url", url, "--kind", "operation")
		return len(all) >= 6
	})
	first := eventIDs(t, "--nats-url", url, "--kind", "operation", "--durable", "reader", "--limit", "4")
	if len(first) != 4 {
		t.Fatalf("first run printed %d events, want 4 (--limit)", len(first))
	}
	rest := eventIDs(t, "--nats-url", url, "--kind", "operation", "--durable", "reader")
	if diff := cmp.Diff(all, append(first, rest...)[:len(all)]); diff != "" {
		t.Errorf("the two runs' events against the stream's (-stream +runs):\n%s", diff)
	}
	if n := len(first) + len(rest); n < len(all) {
		t.Errorf("the two runs printed %d events, the stream holds %d", n, len(all))
	}
	seen := map[string]bool{}
	for _, id := range append(first, rest...) {
		if seen[id] {
			t.Errorf("event %s printed twice", id)
		}
		seen[id] = true
	}
	again := eventIDs(t, "--nats-url", url, "--kind", "operation", "--durable", "reader")
	for _, id := range again {
		if seen[id] {
			t.Errorf("a third run printed %s again", id)
		}
	}
	for _, args := range [][]string{{"--durable", "a.b"}, {"--limit", "-1"}} {
		if code, _, errOut := runCLI(t, append([]string{"events", "--nats-url", url}, args...)...); code != 2 || !strings.HasPrefix(errOut, "sharetree: "+args[0]) {
			t.Errorf("events %v: exit %d, stderr %q; want 2 naming the flag", args, code, errOut)
		}
	}
}
