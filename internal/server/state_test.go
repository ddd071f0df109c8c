package server

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

func treeState(tree string, pools ...*pb.PoolVolume) []byte {
	data, err := proto.Marshal(&pb.TreeState{Tree: tree, Pools: pools})
	if err != nil {
		panic(err)
	}
	return data
}

func cpuVolume(pool string, v float64) *pb.PoolVolume {
	return &pb.PoolVolume{Pool: pool, AccumulatedVolume: wire.ToResources(scheduler.Resources{scheduler.CPU: v})}
}

// TestStoredTreeStatesAreCheckedOnLoad: Load keeps the states that pass
// every check and leaves out (logging the key and the fault) each one that
// does not, on a real JetStream bucket; the bucket's other keys are not
// read as states.
func TestStoredTreeStatesAreCheckedOnLoad(t *testing.T) {
	ctx := context.Background()
	kv := schedulerBucket(t)
	store := &kvState{kv: kv}
	// What the scheduler writes, read back.
	if err := store.PutTreeState(ctx, &pb.TreeState{Tree: "a$b", Pools: []*pb.PoolVolume{cpuVolume("p", 3.5), cpuVolume("q", 1e-12)}}); err != nil {
		t.Fatal(err)
	}
	if err := store.PutTreeState(ctx, &pb.TreeState{Tree: "no.dots"}); !errors.Is(err, subjects.ErrInvalidToken) {
		t.Fatalf("PutTreeState of tree %q: %v, want ErrInvalidToken", "no.dots", err)
	}
	bad := map[string]struct {
		data []byte
		want string // in the logged error
	}{
		"state.garbage":  {[]byte{0xff, 0x01, 0x02}, "not a TreeState"},
		"state.other":    {treeState("physical"), `holds the state of tree "physical"`},
		"state.dup":      {treeState("dup", cpuVolume("p", 1), cpuVolume("p", 2)), `pools[1]: pool "p" is listed twice`},
		"state.negative": {treeState("negative", cpuVolume("p", -1)), "pools[0] (p).accumulated_volume.cpu must be a number in"},
		"state.nan":      {treeState("nan", cpuVolume("p", math.NaN())), "pools[0] (p).accumulated_volume.cpu must be a number in"},
		"state.badpool":  {treeState("badpool", cpuVolume("a.b", 1)), "pools[0]: subjects: invalid token: pool name"},
	}
	for key, b := range bad {
		if _, err := kv.Put(ctx, key, b.data); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := kv.Put(ctx, "epoch", []byte("3")); err != nil {
		t.Fatal(err)
	}
	logs := &testutil.LockedBuffer{}
	got, err := store.Load(ctx, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[scheduler.PoolID]scheduler.Resources{
		"a$b": {"p": {scheduler.CPU: 3.5}, "q": {scheduler.CPU: 1e-12}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("loaded states (-want +got):\n%s", diff)
	}
	for key, b := range bad {
		if !strings.Contains(logs.String(), "state ignored") || !strings.Contains(logs.String(), key+": ") {
			t.Errorf("the log does not name %s:\n%s", key, logs)
		}
		_, _, err := decodeTreeState(key, b.data)
		if !errors.Is(err, ErrBadTreeState) || !strings.Contains(err.Error(), key+": "+b.want) {
			t.Errorf("decodeTreeState(%s) = %v, want ErrBadTreeState saying %q", key, err, key+": "+b.want)
		}
	}
	if _, _, err := decodeTreeState("epoch", nil); !errors.Is(err, ErrBadTreeState) || !errors.Is(err, subjects.ErrInvalidStateKey) {
		t.Errorf("decodeTreeState(epoch) = %v, want ErrBadTreeState wrapping ErrInvalidStateKey", err)
	}
}

// FuzzDecodeTreeState: any key and value give either a typed error
// (ErrBadTreeState) or volumes the engine accepts, for the key's tree,
// that encode back to a state decoding to the same volumes.
func FuzzDecodeTreeState(f *testing.F) {
	f.Add("state.physical", treeState("physical", cpuVolume("p", 3.5)))
	f.Add("state.a=b", treeState("a$b", cpuVolume("p", 1), cpuVolume("q", 1e-12)))
	f.Add("state.x", treeState("x", cpuVolume("p", -1)))
	f.Add("state.x", []byte{0xff, 0x01})
	f.Add("epoch", []byte("3"))
	f.Fuzz(func(t *testing.T, key string, data []byte) {
		tree, vols, err := decodeTreeState(key, data)
		if err != nil {
			if !errors.Is(err, ErrBadTreeState) {
				t.Fatalf("decodeTreeState(%q) error %v does not wrap ErrBadTreeState", key, err)
			}
			return
		}
		if k, kerr := subjects.TreeStateKey(tree); kerr != nil || k != key {
			t.Fatalf("decodeTreeState(%q) = tree %q, whose key is %q (%v)", key, tree, k, kerr)
		}
		st := &pb.TreeState{Tree: tree}
		for name, v := range vols {
			for r, x := range v {
				if !scheduler.ValidVolume(x) {
					t.Fatalf("accepted pool %s volume %s = %g", name, scheduler.ResourceType(r), x)
				}
			}
			st.Pools = append(st.Pools, &pb.PoolVolume{Pool: string(name), AccumulatedVolume: wire.ToResources(v)})
		}
		again, err := proto.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		_, back, err := decodeTreeState(key, again)
		if err != nil {
			t.Fatalf("re-encoded state refused: %v", err)
		}
		if diff := cmp.Diff(vols, back); diff != "" {
			t.Fatalf("round trip (-first +again):\n%s", diff)
		}
	})
}
