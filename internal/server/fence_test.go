package server

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/testutil"
)

// raiseFence moves a fence only forward: an older or equal epoch is a
// stale leader; once a newer leader raised it, the older one's writes are
// refused with ErrFenced and counted.
func TestFencesOnlyMoveForward(t *testing.T) {
	ctx := context.Background()
	nc := testutil.Connect(t, testutil.StartNATS(t))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.data", "t.fence"}})
	if err != nil {
		t.Fatal(err)
	}
	var refused atomic.Uint64
	f5, err := raiseFence(ctx, js, stream, "t.fence", 5, &refused)
	if err != nil {
		t.Fatal(err)
	}
	if err := f5.put(ctx, "t.data", []byte("by 5")); err != nil {
		t.Fatalf("epoch 5's write: %v", err)
	}
	for _, e := range []uint64{4, 5} {
		if _, err := raiseFence(ctx, js, stream, "t.fence", e, &refused); !errors.Is(err, ErrStaleLeader) {
			t.Errorf("raise to %d over 5: %v, want ErrStaleLeader", e, err)
		}
	}
	f6, err := raiseFence(ctx, js, stream, "t.fence", 6, &refused)
	if err != nil {
		t.Fatal(err)
	}
	if err := f5.put(ctx, "t.data", []byte("late, by 5")); !errors.Is(err, ErrFenced) {
		t.Errorf("epoch 5's write after 6 raised the fence: %v, want ErrFenced", err)
	}
	if err := f6.put(ctx, "t.data", []byte("by 6")); err != nil {
		t.Errorf("epoch 6's write: %v", err)
	}
	if n := refused.Load(); n != 1 {
		t.Errorf("refused %d writes, want 1", n)
	}
	// Only the newest fence message is kept.
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter("t.fence"))
	if err != nil {
		t.Fatal(err)
	}
	if n := info.State.Subjects["t.fence"]; n != 1 {
		t.Errorf("%d fence messages kept, want 1", n)
	}
	// A fence that holds no epoch is named, not overwritten.
	if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: "t.fence", Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := raiseFence(ctx, js, stream, "t.fence", 7, &refused); err == nil || !strings.Contains(err.Error(), `fence t.fence: stored epoch "x"`) {
		t.Errorf("raise over a bad fence: %v", err)
	}
}
