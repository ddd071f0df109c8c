package server_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	"github.com/sharetree/sharetree/internal/treeconf"
	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

const integralTreesYAML = `
version: 1
trees:
  - name: physical
    config: {fair_share_update_period: 50ms}
    pools:
      - {name: light, weight: 1}
      - name: burst
        integral_guarantees: {guarantee_type: burst, resource_flow: {cpu: 1}, burst_guarantee_resources: {cpu: 2}}
        accumulated_resource_volume: {cpu: 7}
`

// startOnDir starts a scheduler on the trees document keeping JetStream in
// dir (servertest.Start: it is closed when the test ends, if not before).
func startOnDir(t *testing.T, dir string) (*server.Server, *nats.Conn) {
	t.Helper()
	return servertest.Start(t, integralTreesYAML, func(cfg *server.Config) {
		cfg.DataDir = dir
		cfg.Actors.HeartbeatPeriod = 50 * time.Millisecond
		cfg.Actors.StatePersistPeriod = 100 * time.Millisecond
	})
}

// burstVolume is the burst pool's accumulated cpu volume in the tree's
// latest result (ok false before the first).
func burstVolume(srv *server.Server) (float64, bool) {
	r := srv.System().Result("physical")
	if r == nil {
		return 0, false
	}
	e, ok := r.Element("burst")
	if !ok || e.Integral == nil {
		return 0, false
	}
	return e.Integral.AccumulatedResourceVolume[scheduler.CPU], true
}

// TestIntegralVolumesSurviveARestart: the volume a burst pool accumulated
// comes back after the scheduler stops and starts again on the same store,
// instead of the trees file's initial volume.
func TestIntegralVolumesSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	srv, nc := startOnDir(t, dir)
	// One node gives the cluster resources, so the volume refills (by the
	// flow's share of the cluster) while no operation consumes it.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	acfg := nodeagent.DefaultConfig("node-0", scheduler.Resources{scheduler.CPU: 4, scheduler.UserSlots: 4})
	acfg.HeartbeatPeriod, acfg.WorkDir = 50*time.Millisecond, t.TempDir()
	a, err := nodeagent.New(acfg, nc)
	if err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() { defer wg.Done(); _ = a.Run(ctx) }()
	testutil.WaitFor(t, 20*time.Second, "the burst pool's volume to grow past the initial 7 cpu·s", func() bool {
		v, ok := burstVolume(srv)
		return ok && v > 7.5
	})
	cancel()
	wg.Wait()
	srv.Close()
	// The last result is the one the tree wrote when it stopped.
	want, ok := burstVolume(srv)
	if !ok || want <= 7.5 {
		t.Fatalf("volume at stop = %g, %v; want above 7.5", want, ok)
	}

	// No node now: the cluster is empty, so nothing refills, and every
	// update reports the volume it started with.
	srv2, _ := startOnDir(t, dir)
	testutil.WaitFor(t, 10*time.Second, "the restarted scheduler's first update", func() bool {
		_, ok := burstVolume(srv2)
		return ok
	})
	if got, _ := burstVolume(srv2); got != want {
		t.Fatalf("burst pool's volume after the restart = %g, want %g (the volume at stop; the trees file says 7)", got, want)
	}
}

// TestStoredStatesFollowTheTreesConfiguration: a tree added while the
// scheduler runs takes the volumes stored for it; a tree removed from the
// configuration has its stored state deleted; at start, the state of a tree
// the configuration no longer lists is deleted, and a listed tree's kept.
func TestStoredStatesFollowTheTreesConfiguration(t *testing.T) {
	dir := t.TempDir()
	srv, nc := startOnDir(t, dir)
	ctx := context.Background()
	kv := bucket(t, nc, subjects.SchedulerBucket)
	stored := func(tree string) bool {
		key, err := subjects.TreeStateKey(tree)
		if err != nil {
			t.Fatal(err)
		}
		_, err = kv.Get(ctx, key)
		if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			t.Fatalf("read %s: %v", key, err)
		}
		return err == nil
	}
	putState := func(st *pb.TreeState) {
		if err := server.PutTreeState(ctx, kv, st); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 10*time.Second, "the physical tree's first stored state", func() bool { return stored("physical") })

	// A tree the scheduler never ran, with a state stored for it (by a
	// scheduler that ran it before), is added: it starts from that state.
	// The trees file does not list it, so without the state it would
	// start from nothing.
	putState(&pb.TreeState{Tree: "later", Pools: []*pb.PoolVolume{{Pool: "burst", AccumulatedVolume: wire.ToResources(scheduler.Resources{scheduler.CPU: 42})}}})
	cc := treeconf.NewClient(nc, 5*time.Second)
	doc := "version: 1\ntrees: [{name: later, config: {fair_share_update_period: 50ms}, pools: [{name: burst, integral_guarantees: {guarantee_type: burst, resource_flow: {cpu: 1}, burst_guarantee_resources: {cpu: 2}}}]}]"
	if _, err := cc.Apply(ctx, []byte(doc), false, false); err != nil {
		t.Fatal(err)
	}
	var got float64
	testutil.WaitFor(t, 10*time.Second, "the added tree's first update", func() bool {
		r := srv.System().Result("later")
		if r == nil {
			return false
		}
		e, ok := r.Element("burst")
		if ok && e.Integral != nil {
			got = e.Integral.AccumulatedResourceVolume[scheduler.CPU]
		}
		return ok
	})
	// No node: nothing refills or consumes, so the volume is the stored one.
	if got != 42 {
		t.Errorf("the added tree's burst volume = %g, want the stored 42", got)
	}

	// Removed from the configuration: its stored state goes too.
	if _, err := cc.RemovePool(ctx, "later", "burst", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.RemoveTree(ctx, "later", 0); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the removed tree's stored state to be deleted", func() bool { return !stored("later") })
	if !stored("physical") {
		t.Error("the physical tree's state went with the other tree's")
	}

	// A state for a tree the configuration does not list (removed while
	// the scheduler was down) is deleted when the scheduler starts. (The
	// NATS server is the scheduler's own: the state is put before it
	// stops.)
	putState(&pb.TreeState{Tree: "ghost"})
	if _, err := kv.Put(ctx, "state.garbage", []byte{0xff, 0x01}); err != nil { // one that does not decode, too
		t.Fatal(err)
	}
	srv.Close()
	_, nc2 := startOnDir(t, dir)
	js2, err := jetstream.New(nc2)
	if err != nil {
		t.Fatal(err)
	}
	if kv, err = js2.KeyValue(ctx, subjects.SchedulerBucket); err != nil {
		t.Fatal(err)
	}
	for _, tree := range []string{"ghost", "garbage"} {
		if stored(tree) {
			t.Errorf("the state of tree %s, which no configuration lists, is still stored after the start", tree)
		}
	}
	if !stored("physical") {
		t.Error("the physical tree's state was deleted at the start")
	}
}
