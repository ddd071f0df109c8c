package scenario

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
)

// simHead is a valid beginning of a simulation file; simTail ends one.
const (
	simHead = "version: 1\ncluster: {nodes: [{count: 2, resources: {cpu: 4}}]}\npools: [{name: p}]\n"
	simOK   = "workload: [{id: a, tasks: [{jobs: 1, resources: {cpu: 1}, duration: 1s}]}]\n"
	simEnd  = "simulation: {duration: 1m}\n"
)

func TestParseSimRefusesBadInput(t *testing.T) {
	op := func(entry string) string { return "workload: [" + entry + "]\n" }
	task := func(t string) string { return op("{id: a, tasks: [" + t + "]}") }
	for _, tc := range []struct{ name, src, path, msg string }{
		{"unknown top-level key", simHead + simOK + simEnd + "steps: []\n", "steps", `unknown key "steps"`},
		{"no simulation", simHead + simOK, "simulation", `missing required key "simulation"`},
		{"no workload", simHead + simEnd, "workload", `missing required key "workload"`},
		{"empty workload", simHead + "workload: []\n" + simEnd, "workload", "must not be empty"},
		{"cluster without nodes", "version: 1\ncluster: {resources: {cpu: 4}}\n" + simOK + simEnd, "cluster", "give cluster.nodes"},
		{"version 2", "version: 2\ncluster: {nodes: [{resources: {cpu: 4}}]}\n" + simOK + simEnd, "version", "unsupported version 2"},
		{"no duration", simHead + simOK + "simulation: {heartbeat_period: 1s}\n", "simulation.duration", `missing required key "duration"`},
		{"negative duration", simHead + simOK + "simulation: {duration: -1m}\n", "simulation.duration", "must not be negative"},
		{"heartbeat too short", simHead + simOK + "simulation: {duration: 1m, heartbeat_period: 1ms}\n", "simulation.heartbeat_period", "at least 10ms"},
		{"too many passes", simHead + simOK + "simulation: {duration: 8760h, heartbeat_period: 10ms}\n", "simulation.heartbeat_period", "node passes"},
		{"too many samples", simHead + simOK + "simulation: {duration: 8760h, heartbeat_period: 1h, sample_period: 1s}\n", "simulation.sample_period", "samples"},
		{"unknown simulation key", simHead + simOK + "simulation: {duration: 1m, speed: 2}\n", "simulation.speed", `unknown key "speed"`},
		{"operation without id", simHead + op("{tasks: [{jobs: 1, resources: {cpu: 1}, duration: 1s}]}") + simEnd, "workload[0].id", `missing required key "id"`},
		{"operation without tasks", simHead + op("{id: a}") + simEnd, "workload[0].tasks", `missing required key "tasks"`},
		{"unknown pool", simHead + op("{id: a, pool: q, tasks: [{jobs: 1, resources: {cpu: 1}, duration: 1s}]}") + simEnd, "workload[0].pool", `pool "q" does not exist`},
		{"id of a pool", simHead + op("{id: p, tasks: [{jobs: 1, resources: {cpu: 1}, duration: 1s}]}") + simEnd, "workload[0].id", "also a pool name"},
		{"negative submit", simHead + op("{id: a, submit_at: -1s, tasks: [{jobs: 1, resources: {cpu: 1}, duration: 1s}]}") + simEnd, "workload[0].submit_at", "must not be negative"},
		{"bad mode", simHead + op("{id: a, preemption_mode: gentle, tasks: [{jobs: 1, resources: {cpu: 1}, duration: 1s}]}") + simEnd, "workload[0].preemption_mode", `"gentle"`},
		{"zero weight", simHead + op("{id: a, weight: 0, tasks: [{jobs: 1, resources: {cpu: 1}, duration: 1s}]}") + simEnd, "workload[0].weight", "must be positive"},
		{"repeat without every", simHead + op("{id: a, repeat: {count: 2}, tasks: [{jobs: 1, resources: {cpu: 1}, duration: 1s}]}") + simEnd, "workload[0].repeat.every", `missing required key "every"`},
		{"repeat count 0", simHead + op("{id: a, repeat: {count: 0, every: 1s}, tasks: [{jobs: 1, resources: {cpu: 1}, duration: 1s}]}") + simEnd, "workload[0].repeat.count", "must be in"},
		{"duplicate by repeat", simHead + op("{id: a-2, tasks: [{jobs: 1, resources: {cpu: 1}, duration: 1s}]}, {id: a, repeat: {count: 2, every: 1s}, tasks: [{jobs: 1, resources: {cpu: 1}, duration: 1s}]}") + simEnd,
			"workload[1].id", `"a-2" is also made by workload[0]`},
		{"empty tasks", simHead + op("{id: a, tasks: []}") + simEnd, "workload[0].tasks", "must not be empty"},
		{"task without duration", simHead + task("{jobs: 1, resources: {cpu: 1}}") + simEnd, "workload[0].tasks[0].duration", `missing required key "duration"`},
		{"no jobs", simHead + task("{jobs: 0, resources: {cpu: 1}, duration: 1s}") + simEnd, "workload[0].tasks[0].jobs", "must be in"},
		{"job needs nothing", simHead + task("{jobs: 1, resources: {}, duration: 1s}") + simEnd, "workload[0].tasks[0].resources", "must need some resource"},
		{"job fits nowhere", simHead + task("{jobs: 1, resources: {cpu: 5}, duration: 1s}") + simEnd, "workload[0].tasks[0].resources", "fits on no node"},
		{"bad resource", simHead + task("{jobs: 1, resources: {cpus: 1}, duration: 1s}") + simEnd, "workload[0].tasks[0].resources.cpus", "cpus"},
		{"bad tree", simHead + "tree: {fair_share_update_period: soon}\n" + simOK + simEnd, "tree.fair_share_update_period", "soon"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseSim("bad.yaml", []byte(tc.src))
			if err == nil {
				t.Fatalf("parsed without error: %+v", f)
			}
			var se *Error
			if !errors.Is(err, ErrInvalidScenario) || !errors.As(err, &se) {
				t.Fatalf("error %v is not an *Error wrapping ErrInvalidScenario", err)
			}
			if se.File != "bad.yaml" || se.Path != tc.path || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("got file %q path %q msg %q; want path %q and a message containing %q", se.File, se.Path, se.Msg, tc.path, tc.msg)
			}
		})
	}
}

func TestParseSimExpandsAndOrdersTheWorkload(t *testing.T) {
	f, err := ParseSim("ok.yaml", []byte(`version: 1
cluster: {nodes: [{count: 2, resources: {cpu: 4, memory: 8Gi}}]}
pools: [{name: p}]
tree: {fair_share_update_period: 2s}
workload:
  - {id: late, submit_at: 1m, tasks: [{jobs: 1, resources: {cpu: 1}, duration: 1s}]}
  - id: every
    pool: p
    weight: 2
    preemption_mode: graceful
    repeat: {count: 3, every: 30s}
    tasks: [{jobs: 2, resources: {cpu: 1, memory: 1Gi}, duration: 5s}, {name: second, jobs: 1, resources: {cpu: 2}, duration: 1s}]
simulation: {duration: 10m, heartbeat_period: 2s}
`))
	if err != nil {
		t.Fatal(err)
	}
	type op struct {
		ID       string
		SubmitAt time.Duration
		Graceful bool
	}
	var got []op
	for _, o := range f.Workload {
		got = append(got, op{string(o.ID), o.SubmitAt, o.Graceful})
	}
	// By submit time, ties in file order.
	want := []op{{"every-1", 0, true}, {"every-2", 30 * time.Second, true}, {"late", time.Minute, false}, {"every-3", time.Minute, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("workload (-want +got):\n%s", diff)
	}
	e := f.Workload[0]
	wantTasks := []SimTask{
		{Name: "task-1", Jobs: 2, Resources: scheduler.Resources{scheduler.CPU: 1, scheduler.Memory: 1 << 30}, Duration: 5 * time.Second},
		{Name: "second", Jobs: 1, Resources: scheduler.Resources{scheduler.CPU: 2}, Duration: time.Second},
	}
	if diff := cmp.Diff(wantTasks, e.Tasks); diff != "" || e.Pool != "p" || *e.Weight != 2 {
		t.Errorf("every-1: pool %q weight %v, tasks (-want +got):\n%s", e.Pool, *e.Weight, diff)
	}
	// The sample period defaults to duration/500, at least the update period.
	want2 := SimSettings{Duration: 10 * time.Minute, HeartbeatPeriod: 2 * time.Second, SamplePeriod: 2 * time.Second, Preemption: true}
	if diff := cmp.Diff(want2, f.Simulation); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	if len(f.Cluster.Nodes) != 2 || len(f.Pools) != 1 {
		t.Errorf("%d nodes, %d pools", len(f.Cluster.Nodes), len(f.Pools))
	}
}
