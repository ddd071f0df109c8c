package server

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/subjects"
)

// The roster in the scheduler bucket: nodes added and removed by the
// leader, a key that names no node skipped on load, and an old leader's
// writes refused once a newer one raised the epoch.
func TestNodeRosterInTheSchedulerBucket(t *testing.T) {
	ctx := context.Background()
	js, err := jetstream.New(testutil.Connect(t, testutil.StartNATS(t)))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: subjects.SchedulerBucket})
	if err != nil {
		t.Fatal(err)
	}
	epoch, rev, err := bumpEpoch(ctx, kv)
	if err != nil {
		t.Fatal(err)
	}
	epochFence := func(rev uint64) *fence {
		return &fence{js: js, subject: subjects.KVKey(subjects.SchedulerBucket, subjects.EpochKey), seq: rev}
	}
	r := &kvRoster{kv: kv, fence: epochFence(rev), epoch: epoch, logger: slog.New(slog.DiscardHandler)}
	load := func() []string {
		t.Helper()
		nodes, err := r.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return nodes
	}
	if nodes := load(); len(nodes) != 0 {
		t.Fatalf("an empty bucket's roster: %v", nodes)
	}
	for _, node := range []string{"n2", "n1", "n$3"} {
		if err := r.Add(ctx, node); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := kv.Put(ctx, "node.a.b", []byte("junk")); err != nil {
		t.Fatal(err)
	}
	if err := r.Remove(ctx, "n2"); err != nil {
		t.Fatal(err)
	}
	if err := r.Remove(ctx, "never-there"); err != nil {
		t.Errorf("removing a node that is not there: %v", err)
	}
	// (By key: node.n1, node.n=3.)
	if diff := cmp.Diff([]string{"n1", "n$3"}, load()); diff != "" {
		t.Errorf("roster (-want +got):\n%s", diff)
	}
	if err := r.Add(ctx, "a.b"); !errors.Is(err, subjects.ErrInvalidToken) {
		t.Errorf("adding the node id a.b: %v, want ErrInvalidToken", err)
	}

	// A newer leader raises the epoch: this one may no longer write.
	if _, _, err := bumpEpoch(ctx, kv); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(ctx, "n4"); !errors.Is(err, ErrFenced) {
		t.Errorf("the old leader's add: %v, want ErrFenced", err)
	}
	if err := r.Remove(ctx, "n1"); !errors.Is(err, ErrFenced) {
		t.Errorf("the old leader's remove: %v, want ErrFenced", err)
	}
	if diff := cmp.Diff([]string{"n1", "n$3"}, load()); diff != "" {
		t.Errorf("roster after the old leader's writes (-want +got):\n%s", diff)
	}
}
