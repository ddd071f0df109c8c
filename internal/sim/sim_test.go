package sim

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/scheduler"
)

func parse(t *testing.T, doc string) *scenario.SimFile {
	t.Helper()
	f, err := scenario.ParseSim("test.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func simulate(t *testing.T, doc string) *Result {
	t.Helper()
	res, err := Run(parse(t, doc))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func operation(t *testing.T, res *Result, id string) OperationResult {
	t.Helper()
	for _, o := range res.Operations {
		if o.ID == id {
			return o
		}
	}
	t.Fatalf("no operation %s", id)
	return OperationResult{}
}

// One 4-core node, 8 jobs of 10s: two waves, the second starting as the
// first ends (job ends come before the node's pass at the same instant).
func TestJobsRunInWavesOnTheNode(t *testing.T) {
	res := simulate(t, `
version: 1
cluster: {nodes: [{resources: {cpu: 4}}]}
workload:
  - {id: a, tasks: [{jobs: 8, resources: {cpu: 1}, duration: 10s}]}
simulation: {duration: 1m, sample_period: 5s}
`)
	a := operation(t, res, "a")
	want := OperationResult{ID: "a", State: "completed", Submitted: true, Started: true, Finished: true, FinishAt: 20 * time.Second, Jobs: 8, Completed: 8}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("operation (-want +got):\n%s", diff)
	}
	var usage []float64
	for _, s := range res.Samples[:6] {
		usage = append(usage, s.Pools[0].Usage[scheduler.CPU])
	}
	// Sampled at 0, 5, ..., 25s: the first wave, the second, then nothing.
	if diff := cmp.Diff([]float64{4, 4, 4, 4, 0, 0}, usage); diff != "" {
		t.Errorf("root usage (-want +got):\n%s", diff)
	}
	if n := len(res.Samples); n != 13 || res.Samples[n-1].At != time.Minute {
		t.Errorf("%d samples, the last at %s; want 13, the last at the end", n, res.Samples[n-1].At)
	}
	// The default fair_share_update_period is 200ms, the heartbeat 1s.
	if c := res.Counts; c.JobStarts != 8 || c.JobCompletions != 8 || c.Updates != 301 || c.NodePasses != 61 {
		t.Errorf("counts %+v", c)
	}
}

const guaranteedDoc = `
version: 1
cluster: {nodes: [{count: 2, resources: {cpu: 4, user_slots: 4}}]}
tree: {fair_share_starvation_timeout: 5s, preemptive_scheduling_backoff: 1s}
pools:
  - {name: prod, strong_guarantee_resources: {cpu: 4}}
  - {name: batch}
workload:
  - {id: fill, pool: batch, tasks: [{jobs: 8, resources: {cpu: 1, user_slots: 1}, duration: 10m}]}
  - {id: urgent, pool: prod, submit_at: 10s, tasks: [{jobs: 4, resources: {cpu: 1, user_slots: 1}, duration: 30s}]}
simulation: {duration: 15m, sample_period: 10s%s}
`

// A starving guaranteed pool takes its guarantee back by preemption once
// it has starved for the timeout; without preemption it waits for the
// batch jobs to end.
func TestStarvingGuaranteedPoolPreempts(t *testing.T) {
	res := simulate(t, strings.Replace(guaranteedDoc, "%s", "", 1))
	urgent, fill := operation(t, res, "urgent"), operation(t, res, "fill")
	// Starving after 5s below its fair share (from the update after 10s),
	// it preempts on the nodes' next passes.
	if !urgent.Finished || urgent.StartAt < 15*time.Second || urgent.StartAt > 20*time.Second {
		t.Errorf("urgent started at %s (finished %v), want between 15s and 20s", urgent.StartAt, urgent.Finished)
	}
	if fill.Interrupted != 4 || res.Counts.Preemptions != 4 || fill.LostJobTime <= 0 {
		t.Errorf("fill interrupted %d times, %d preemptions, %s lost; want 4, 4 and some", fill.Interrupted, res.Counts.Preemptions, fill.LostJobTime)
	}
	if !fill.Finished || fill.Completed != 8 {
		t.Errorf("fill: %+v", fill)
	}

	off := simulate(t, strings.Replace(guaranteedDoc, "%s", ", preemption: false", 1))
	if u := operation(t, off, "urgent"); u.StartAt != 10*time.Minute || off.Counts.Preemptions != 0 {
		t.Errorf("without preemption urgent started at %s with %d preemptions, want at 10m when fill's jobs end, none", u.StartAt, off.Counts.Preemptions)
	}
}

// A pool's max_running_operation_count queues the second operation until
// the first ends.
func TestRunningLimitQueues(t *testing.T) {
	res := simulate(t, `
version: 1
cluster: {nodes: [{resources: {cpu: 8}}]}
pools: [{name: narrow, max_running_operation_count: 1}]
workload:
  - {id: first, pool: narrow, tasks: [{jobs: 2, resources: {cpu: 1}, duration: 30s}]}
  - {id: second, pool: narrow, submit_at: 5s, tasks: [{jobs: 2, resources: {cpu: 1}, duration: 30s}]}
simulation: {duration: 2m, sample_period: 10s}
`)
	first, second := operation(t, res, "first"), operation(t, res, "second")
	if second.AdmittedAt != first.FinishAt || second.StartAt != first.FinishAt || first.FinishAt != 30*time.Second {
		t.Errorf("first finished at %s; second admitted at %s and started at %s: want all at 30s", first.FinishAt, second.AdmittedAt, second.StartAt)
	}
	// Sampled at 0, 10s, 20s, 30s: second waits from 5s to 30s.
	var waiting []int
	for _, s := range res.Samples[:4] {
		waiting = append(waiting, s.Pools[1].WaitingOperations)
	}
	if diff := cmp.Diff([]int{0, 1, 1, 0}, waiting); diff != "" {
		t.Errorf("waiting operations (-want +got):\n%s", diff)
	}
}

// A graceful operation gives back what exceeds its fair share as soon as
// another operation needs it, without any starvation.
func TestGracefulOperationGivesBack(t *testing.T) {
	res := simulate(t, `
version: 1
cluster: {nodes: [{resources: {cpu: 8, user_slots: 8}}]}
workload:
  - {id: service, preemption_mode: graceful, tasks: [{jobs: 8, resources: {cpu: 1, user_slots: 1}, duration: 1h}]}
  - {id: batch, submit_at: 10s, tasks: [{jobs: 4, resources: {cpu: 1, user_slots: 1}, duration: 1m}]}
simulation: {duration: 5m}
`)
	service, batch := operation(t, res, "service"), operation(t, res, "batch")
	if res.Counts.GracefulInterrupts != 4 || service.Interrupted != 4 || res.Counts.Preemptions != 0 {
		t.Errorf("%d graceful interrupts (service %d), %d preemptions; want 4, 4, 0", res.Counts.GracefulInterrupts, service.Interrupted, res.Counts.Preemptions)
	}
	if !batch.Finished || batch.StartAt > 12*time.Second {
		t.Errorf("batch started at %s (finished %v), want within two seconds of its submission", batch.StartAt, batch.Finished)
	}
}

// A burst pool's accumulated volume goes down while it runs on its
// guarantee and back up at its flow.
func TestBurstPoolVolumeIsSpentAndRefills(t *testing.T) {
	res := simulate(t, `
version: 1
cluster: {nodes: [{count: 4, resources: {cpu: 10}}]}
pools:
  - name: burst
    integral_guarantees: {guarantee_type: burst, resource_flow: {cpu: 4}, burst_guarantee_resources: {cpu: 20}}
    accumulated_resource_volume: {cpu: 6000}
  - {name: other}
workload:
  - {id: other-fill, pool: other, tasks: [{jobs: 400, resources: {cpu: 1}, duration: 1m}]}
  - {id: burst-work, pool: burst, submit_at: 1m, tasks: [{jobs: 40, resources: {cpu: 1}, duration: 1m}]}
simulation: {duration: 10m, sample_period: 30s}
`)
	volume := func(at time.Duration) float64 {
		for _, s := range res.Samples {
			if s.At == at {
				return s.Pools[1].Volume[scheduler.CPU]
			}
		}
		t.Fatalf("no sample at %s", at)
		return 0
	}
	if !res.Pools[1].Integral || res.Pools[2].Integral {
		t.Fatalf("pools %+v", res.Pools)
	}
	before, during, after := volume(time.Minute), volume(2*time.Minute), volume(10*time.Minute)
	if !(during < before && after > during) {
		t.Errorf("volume %g at 1m, %g at 2m, %g at 10m: want spent, then refilled", before, during, after)
	}
}

func TestSameFileSameResult(t *testing.T) {
	f, err := scenario.ParseSimFile("../../cmd/sharetree/examples/sim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, err := Run(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(f)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two runs differ (-first +second):\n%s", diff)
	}
	// The example shows what it is for: preemption, graceful interruption
	// and every operation but the service done.
	if a.Counts.Preemptions == 0 || a.Counts.GracefulInterrupts == 0 {
		t.Errorf("the example preempts nothing: %+v", a.Counts)
	}
	for _, o := range a.Operations {
		if o.State != "completed" && o.ID != "search-frontend" {
			t.Errorf("%s is %s at the end", o.ID, o.State)
		}
	}
	// Usage never exceeds the cluster.
	for _, s := range a.Samples {
		if !a.Total.Dominates(s.Pools[0].Usage) {
			t.Fatalf("at %s the usage %v exceeds the cluster %v", s.At, s.Pools[0].Usage, a.Total)
		}
	}
}

func TestReports(t *testing.T) {
	f, err := scenario.ParseSimFile("../../cmd/sharetree/examples/sim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(f)
	if err != nil {
		t.Fatal(err)
	}
	var series, ops, html bytes.Buffer
	if err := WriteSeriesCSV(&series, res); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&series).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + len(res.Samples)*len(res.Pools); len(rows) != want || len(rows[0]) != 25 {
		t.Errorf("pools.csv: %d rows of %d columns, want %d of 25", len(rows), len(rows[0]), want)
	}
	if err := WriteOperationsCSV(&ops, res); err != nil {
		t.Fatal(err)
	}
	if rows, err := csv.NewReader(&ops).ReadAll(); err != nil || len(rows) != 1+len(res.Operations) {
		t.Errorf("operations.csv: %d rows, %v", len(rows), err)
	}
	if err := WriteHTML(&html, res, scheduler.CPU, len(f.Cluster.Nodes), f.Simulation.SamplePeriod); err != nil {
		t.Fatal(err)
	}
	// Two charts per pool, and the volume of the burst pool.
	if got, want := strings.Count(html.String(), "<svg "), 2*len(res.Pools)+1; got != want {
		t.Errorf("%d charts, want %d", got, want)
	}
	for _, remote := range []string{"<script", "http:", "https:"} {
		if strings.Contains(html.String(), remote) {
			t.Errorf("the report holds %q", remote)
		}
	}
}

// BenchmarkSimExample runs cmd/sharetree/examples/sim.yaml: 10 nodes for 2
// hours of virtual time (72,001 node passes, 7,201 fair-share updates,
// about 1,250 job starts and 270 preemptions).
func BenchmarkSimExample(b *testing.B) {
	f, err := scenario.ParseSimFile("../../cmd/sharetree/examples/sim.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for range b.N {
		if _, err := Run(f); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSeedBurstPoolFigure reproduces the integral guarantees seed's
// figures (testdata/seed_burst.yaml): a burst pool with a burst guarantee
// of 500 cores and a flow of 100, next to a batch pool that keeps the
// cluster busy. Its volume accumulates at the flow to the pool's capacity
// (flow × pool_capacity_saturation_period, 100 × 2 h) and never beyond;
// when its operation arrives the pool takes its burst guarantee back by
// preemption and spends the volume at 500 − 100 cores; once the operation
// is done the volume accumulates again to the capacity.
func TestSeedBurstPoolFigure(t *testing.T) {
	f, err := scenario.ParseSimFile("testdata/seed_burst.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(f)
	if err != nil {
		t.Fatal(err)
	}
	const capacity = 100 * 7200.0
	burstAt := 3*time.Hour + 5*time.Minute
	run := operation(t, res, "burst-run")
	if !run.Finished || run.StartAt > burstAt+time.Minute || res.Counts.Preemptions == 0 {
		t.Fatalf("burst-run: %+v, %d preemptions; want it started within a minute by preemption, and done", run, res.Counts.Preemptions)
	}
	var (
		prev, least = 0.0, capacity
		peak        float64
	)
	for _, s := range res.Samples {
		p := s.Pools[1]
		v := p.Volume[scheduler.CPU]
		if v > capacity*(1+1e-9) {
			t.Fatalf("at %s the volume %g is above the capacity %g", s.At, v, capacity)
		}
		switch {
		case s.At <= burstAt:
			if v < prev-1e-6 {
				t.Fatalf("at %s the idle pool's volume fell from %g to %g", s.At, prev, v)
			}
			if s.At == 2*time.Hour+time.Minute && v < capacity*0.99 {
				t.Errorf("at %s the volume %g has not reached the capacity %g", s.At, v, capacity)
			}
		case s.At <= burstAt+30*time.Minute:
			least = min(least, v)
			peak = max(peak, p.Usage[scheduler.CPU])
		}
		prev = v
	}
	// Twenty minutes on the burst guarantee spend (500 − 100) × 1200 s.
	if want := capacity - 400*15*60; least > want {
		t.Errorf("the volume fell only to %g during the burst, want below %g", least, want)
	}
	if peak < 500 {
		t.Errorf("the burst pool used at most %g cores, want its burst guarantee of 500", peak)
	}
	if last := res.Samples[len(res.Samples)-1].Pools[1].Volume[scheduler.CPU]; last < capacity*0.99 {
		t.Errorf("at the end the volume %g has not accumulated back to the capacity %g", last, capacity)
	}
}
