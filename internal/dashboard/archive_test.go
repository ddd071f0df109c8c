package dashboard

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// memArchive is an Archive in memory.
type memArchive struct {
	mu      sync.Mutex
	samples []*pb.DashboardSample
}

func (m *memArchive) Append(s *pb.DashboardSample) {
	data, _ := proto.Marshal(s) // as a stream would keep it
	out := &pb.DashboardSample{}
	_ = proto.Unmarshal(data, out)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.samples = append(m.samples, out)
}

func (m *memArchive) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.samples)
}

func (m *memArchive) Load(ctx context.Context, fn func(*pb.DashboardSample)) error {
	m.mu.Lock()
	samples := slices.Clone(m.samples)
	m.mu.Unlock()
	for _, s := range samples {
		if err := ctx.Err(); err != nil {
			return err
		}
		fn(s)
	}
	return nil
}

// integralPool is pool with an accumulated volume, starving.
func integralPool(name string, cpu float64) scheduler.ElementResult {
	e := pool(name, scheduler.RootID, 1, cpu)
	e.Integral = &scheduler.IntegralAttributes{}
	e.Integral.AccumulatedResourceVolume[scheduler.CPU] = 10 * cpu
	e.StarvationStatus = scheduler.Starving
	return e
}

// A new leader's history, restored from the samples its predecessor
// archived, charts every pool as the predecessor's did (float32 amounts,
// as kept).
func TestArchivedSamplesRestoreTheHistory(t *testing.T) {
	cfg := Config{Window: time.Hour, Resolution: time.Second, MaxPools: 10}
	old, arch := NewHistory(cfg), &memArchive{}
	// (Amounts from tables: a product added to inline would be fused on
	// arm64, see .ci/fma-check.)
	root, a, burst := []float64{10, 11, 12, 13, 14}, []float64{0, 1, 2, 3, 4}, []float64{0, 2.5, 5, 7.5, 10}
	for k := range 5 {
		at := time.Duration(k) * time.Second
		if !old.Record("physical", result(at, pool(scheduler.RootID, "", 0, root[k]), pool("a", scheduler.RootID, 1, a[k]), integralPool("burst", burst[k]))) {
			t.Fatalf("sample %d not recorded", k)
		}
		arch.Append(old.Latest("physical"))
	}
	restored := NewHistory(cfg)
	for _, s := range arch.samples {
		if ok, err := restored.Restore(s); !ok || err != nil {
			t.Fatalf("Restore: %v, %v", ok, err)
		}
	}
	for _, p := range []string{scheduler.RootID, "a", "burst"} {
		want, wn := old.Series("physical", p)
		got, gn := restored.Series("physical", p)
		if diff := cmp.Diff(want, got); diff != "" || wn != gn || len(got) != 5 {
			t.Errorf("pool %s: %d samples restored of %d (-old +restored):\n%s", p, gn, wn, diff)
		}
	}
	// A restored sample already held (the same time) is skipped.
	if ok, err := restored.Restore(arch.samples[4]); ok || err != nil {
		t.Errorf("restoring the last sample again: %v, %v; want skipped", ok, err)
	}
	// The new leader's own samples go on after the restored ones.
	if !restored.Record("physical", result(5*time.Second, pool(scheduler.RootID, "", 0, 15))) {
		t.Fatal("the new leader's sample not recorded after the restored ones")
	}
	if _, n := restored.Series("physical", scheduler.RootID); n != 6 {
		t.Errorf("%d samples, want 6", n)
	}
}

// Run restores the archive before it samples, and appends each sample.
func TestRunRestoresThenAppends(t *testing.T) {
	arch := &memArchive{}
	seed := NewHistory(Config{}.Defaults())
	seed.Record("physical", result(-time.Minute, pool(scheduler.RootID, "", 0, 7)))
	arch.Append(seed.Latest("physical"))
	d, err := New(&fakeSource{trees: map[string]*scheduler.Result{"physical": result(0, pool(scheduler.RootID, "", 0, 9))}}, nil, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.SetArchive(arch)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	testutil.WaitFor(t, 10*time.Second, "the first sample archived", func() bool { return arch.count() == 2 })
	cancel()
	<-done
	if got := cpuSeries(first(d.history.Series("physical", scheduler.RootID))); !cmp.Equal(got, []float64{7, 9}) {
		t.Errorf("root cpu %v, want the archived 7 then the sampled 9", got)
	}
}

func first(points []SeriesPoint, _ int) []SeriesPoint { return points }

func TestRestoreRefusesBadSamples(t *testing.T) {
	good := func() *pb.DashboardSample {
		return &pb.DashboardSample{Tree: "physical", Time: timestamppb.New(t0), Pools: []*pb.DashboardPoint{
			{Name: scheduler.RootID, Usage: &pb.Resources{Cpu: 1}}, {Name: "a", Starvation: 2}}}
	}
	for name, c := range map[string]struct {
		mutate func(s *pb.DashboardSample)
		want   string
	}{
		"no tree":        {func(s *pb.DashboardSample) { s.Tree = "" }, "no tree"},
		"no time":        {func(s *pb.DashboardSample) { s.Time = nil }, "no valid time"},
		"nameless pool":  {func(s *pb.DashboardSample) { s.Pools[1].Name = "" }, "pools[1] has no name"},
		"pool twice":     {func(s *pb.DashboardSample) { s.Pools[1].Name = scheduler.RootID }, `pools[1]: pool "<Root>" twice`},
		"starvation":     {func(s *pb.DashboardSample) { s.Pools[1].Starvation = 3 }, "starvation 3 is not 0, 1 or 2"},
		"negative usage": {func(s *pb.DashboardSample) { s.Pools[0].Usage.Cpu = -1 }, "pools[0].usage.cpu"},
		"NaN demand":     {func(s *pb.DashboardSample) { s.Pools[0].Demand = &pb.Resources{Memory: math.NaN()} }, "pools[0].demand.memory"},
	} {
		t.Run(name, func(t *testing.T) {
			h := NewHistory(Config{}.Defaults())
			s := good()
			c.mutate(s)
			ok, err := h.Restore(s)
			if ok || !errors.Is(err, ErrBadSample) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Restore: %v, %v; want ErrBadSample naming %q", ok, err, c.want)
			}
			if _, n := h.Series("physical", scheduler.RootID); n != 0 {
				t.Errorf("a refused sample left %d samples", n)
			}
		})
	}
}

// fakeSource serves fixed results; the trees in reviving are being
// revived.
type fakeSource struct {
	trees    map[string]*scheduler.Result
	reviving map[string]bool
}

func (f *fakeSource) Trees() []string {
	var out []string
	for name := range f.trees {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

func (f *fakeSource) Introspect(tree string, _ actors.Scope) (*actors.TreeIntrospection, error) {
	return &actors.TreeIntrospection{Tree: tree, Result: f.trees[tree], Reviving: f.reviving[tree]}, nil
}
