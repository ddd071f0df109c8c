package server_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
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
