package server

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

func snapshotEvent(pools int) *pb.Event {
	snap := &pb.FairShareSnapshot{OperationCount: 7, NodeCount: 3, Reviving: true}
	for k := range pools {
		snap.Pools = append(snap.Pools, &pb.ElementShare{Name: fmt.Sprintf("pool-%05d", k), Parent: "<Root>", Kind: "pool",
			FairShare: 0.1, UsageShare: 0.2, DemandShare: 0.3, DominantResource: "cpu", StarvationStatus: "non_starving", Weight: 1, Depth: 1})
	}
	return &pb.Event{Id: "4-17", Time: timestamppb.Now(), Tree: "physical", LeaderEpoch: 4, Kind: &pb.Event_FairShare{FairShare: snap}}
}

func TestSplitSnapshotKeepsEveryPoolInOrderWithinTheLimit(t *testing.T) {
	ev := snapshotEvent(10_000)
	const limit = 64 << 10
	if proto.Size(ev) <= limit {
		t.Fatalf("the snapshot (%d bytes) fits in %d: nothing to split", proto.Size(ev), limit)
	}
	parts, err := splitSnapshot(ev, limit)
	if err != nil {
		t.Fatal(err)
	}
	var pools []*pb.ElementShare
	for k, part := range parts {
		if len(part.data) > limit {
			t.Errorf("part %d: %d bytes, more than %d", k+1, len(part.data), limit)
		}
		var back pb.Event
		if err := proto.Unmarshal(part.data, &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(part.ev, &back, protocmp.Transform()); diff != "" {
			t.Errorf("part %d does not encode itself (-ev +data):\n%s", k+1, diff)
		}
		s := back.GetFairShare()
		want := fmt.Sprintf("4-17.%d", k+1)
		if back.GetId() != want || s.GetPart() != int32(k+1) || s.GetParts() != int32(len(parts)) || back.GetTree() != "physical" ||
			back.GetLeaderEpoch() != 4 || !proto.Equal(back.GetTime(), ev.GetTime()) || s.GetOperationCount() != 7 || s.GetNodeCount() != 3 || !s.GetReviving() {
			t.Errorf("part %d: id %q (want %q), part %d/%d, tree %q, epoch %d, counts %d/%d, reviving %v", k+1, back.GetId(), want,
				s.GetPart(), s.GetParts(), back.GetTree(), back.GetLeaderEpoch(), s.GetOperationCount(), s.GetNodeCount(), s.GetReviving())
		}
		pools = append(pools, s.GetPools()...)
	}
	if diff := cmp.Diff(ev.GetFairShare().GetPools(), pools, protocmp.Transform()); diff != "" {
		t.Errorf("the parts' pools are not the snapshot's (-want +got):\n%s", diff)
	}
	if len(parts) < 2 {
		t.Errorf("%d parts", len(parts))
	}
}

func TestSplitSnapshotRefusesWhatCannotBeSplit(t *testing.T) {
	jobs := &pb.Event{Id: "1-1", Kind: &pb.Event_Jobs{Jobs: &pb.JobEvents{NodeId: "n1"}}}
	for name, ev := range map[string]*pb.Event{"a job event": jobs, "a single pool": snapshotEvent(1), "pools larger than the limit": snapshotEvent(3)} {
		if _, err := splitSnapshot(ev, 20); !errors.Is(err, errEventTooLarge) {
			t.Errorf("%s: %v, want errEventTooLarge", name, err)
		}
	}
}

// BenchmarkSplitSnapshot splits a 10,000-pool fair-share snapshot for a
// NATS server with the default 1 MiB max_payload, and reports the
// snapshot's size per pool (pool names of 10 characters, as in
// snapshotEvent).
func BenchmarkSplitSnapshot(b *testing.B) {
	ev := snapshotEvent(10_000)
	b.ReportMetric(float64(proto.Size(ev))/10_000, "bytes/pool")
	b.ReportAllocs()
	for range b.N {
		if _, err := splitSnapshot(ev, 1<<20-4096); err != nil {
			b.Fatal(err)
		}
	}
}
