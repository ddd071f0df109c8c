package dashboard

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/scheduler"
)

// largeSnapshot is a tree of the engine's largest benchmark size: 10,000
// pools (10 at depth 1, 100 at depth 2, the rest at depth 3) and 100,000
// operations, in depth-first order as a result has them, with 1,000
// waiting operations copied.
func largeSnapshot() *actors.TreeIntrospection {
	in := &actors.TreeIntrospection{Tree: "physical", Result: result(0, pool(scheduler.RootID, "", 0, 1))}
	in.Pools = append(in.Pools, actors.PoolIntrospection{Name: scheduler.RootID})
	add := func(name, parent string, depth int) {
		in.Result.Elements = append(in.Result.Elements, pool(name, parent, depth, 1))
		in.Pools = append(in.Pools, actors.PoolIntrospection{Name: name, Parent: parent})
		for k := range 10 {
			in.Result.Elements = append(in.Result.Elements, scheduler.ElementResult{Kind: scheduler.KindOperation,
				Name: fmt.Sprintf("%s-op%d", name, k), Parent: name, Depth: depth + 1})
		}
	}
	n := 0
	for a := 0; a < 10 && n < 10_000; a++ {
		pa := fmt.Sprintf("a%d", a)
		add(pa, scheduler.RootID, 1)
		n++
		for b := 0; b < 10 && n < 10_000; b++ {
			pb := fmt.Sprintf("%s-b%d", pa, b)
			add(pb, pa, 2)
			n++
			for c := 0; c < 98 && n < 10_000; c++ {
				add(fmt.Sprintf("%s-c%d", pb, c), pb, 3)
				n++
			}
		}
	}
	for k := range 1000 {
		in.Operations = append(in.Operations, actors.OperationIntrospection{ID: scheduler.OperationID(fmt.Sprintf("wait-%d", k)), Pool: "a0",
			Admission: scheduler.AdmissionInfo{State: scheduler.AdmissionPending, PendingReason: "max_running_operation_count of a0 reached (2/2)", QueuePool: "a0", QueuePosition: k}})
	}
	return in
}

// BenchmarkSample is one sample of the largest tree into a history that
// is full (an hour of 5-second samples of 200 pools).
func BenchmarkSample(b *testing.B) {
	in := largeSnapshot()
	cfg := Config{}.Defaults()
	h := NewHistory(cfg)
	for k := range 720 {
		in.Result.Now = t0.Add(time.Duration(k) * cfg.Resolution)
		h.Record("physical", in.Result)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for k := range b.N {
		in.Result.Now = t0.Add(time.Duration(720+k) * cfg.Resolution)
		if !h.Record("physical", in.Result) {
			b.Fatal("not recorded")
		}
	}
}

// benchPage times building a page's data (build) and rendering it with
// the page's template, and reports the page's size.
func benchPage(b *testing.B, page string, build func() any) {
	pg, err := parsePages()
	if err != nil {
		b.Fatal(err)
	}
	var out bytes.Buffer
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		out.Reset()
		if err := pg.byName[page].Execute(&out, build()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(out.Len()), "page-bytes")
}

// BenchmarkTreePage builds and renders the largest tree's page (500 pool
// rows and 100 waiting operations, the defaults).
func BenchmarkTreePage(b *testing.B) {
	in := largeSnapshot()
	cfg := Config{}.Defaults()
	in.Operations = in.Operations[:cfg.MaxPending]
	benchPage(b, "tree", func() any { return buildTreePage(in, cfg.MaxRows) })
}

// BenchmarkPoolPage builds and renders a pool's page with an hour of
// 5-second samples (three charts of 720 points each).
func BenchmarkPoolPage(b *testing.B) {
	in := largeSnapshot()
	cfg := Config{}.Defaults()
	series := make([]SeriesPoint, 720)
	for k := range series {
		series[k] = SeriesPoint{Time: t0.Add(time.Duration(k) * cfg.Resolution), Integral: true}
		series[k].Usage[scheduler.CPU] = float64(k % 50)
	}
	benchPage(b, "pool", func() any { return buildPoolPage(in, "a0", scheduler.CPU, series, len(series), cfg) })
}
