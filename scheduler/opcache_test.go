package scheduler

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// varyInputs changes, in a copy of snap, what an operation's element and
// functions are built from (see opInputs and opGlobals), one kind of
// change at a time, often on few operations so that most keep theirs: each
// field initOperation reads, -0 for 0, the cluster's total and nodes, the
// tree's step function for gangs; or it makes a field invalid that the
// element is not filled from (validateOperation checks those of
// operations whose inputs are unchanged). Or it changes the snapshot as
// varySnapshot does (structure, fifo keys, invalid values).
func varyInputs(t *rapid.T, snap *Snapshot) *Snapshot {
	s := cloneSnapshot(snap)
	s.Now = snap.Now.Add(time.Duration(rapid.IntRange(0, 3).Draw(t, "dt")) * time.Second)
	no := len(s.Operations)
	op := func() *Operation {
		return &s.Operations[rapid.IntRange(0, no-1).Draw(t, "op")]
	}
	kind := rapid.SampledFrom([]string{"same", "usage", "demand", "negzero", "limits", "job", "gang", "weight",
		"tolerance", "timeout", "pending", "unschedulable", "jobs", "total", "nodes", "gangs", "snapshot",
		"removeOps", "addOps", "removeOps", "addOps", "renameOp", "invalidRest"}).Draw(t, "inputs")
	if no == 0 && kind != "total" && kind != "nodes" && kind != "gangs" {
		kind = "snapshot"
	}
	switch kind {
	case "same":
	case "usage":
		for range rapid.IntRange(1, 5).Draw(t, "n") {
			o := op()
			o.Usage[rapid.IntRange(0, NumResources-1).Draw(t, "r")] = float64(rapid.IntRange(0, 40).Draw(t, "u"))
		}
	case "demand":
		for range rapid.IntRange(1, 5).Draw(t, "n") {
			o := op()
			o.Demand[rapid.IntRange(0, NumResources-1).Draw(t, "r")] = float64(rapid.IntRange(0, 80).Draw(t, "d"))
		}
	case "negzero":
		o := op()
		r := rapid.IntRange(0, NumResources-1).Draw(t, "r")
		if o.Demand[r] == 0 {
			o.Demand[r] = math.Copysign(0, -1)
		}
		if o.Usage[r] == 0 {
			o.Usage[r] = math.Copysign(0, -1)
		}
	case "limits":
		o := op()
		if rapid.Bool().Draw(t, "unset") {
			o.ResourceLimits = PartialResources{}
		} else {
			o.ResourceLimits = o.ResourceLimits.With(ResourceType(rapid.IntRange(0, NumResources-1).Draw(t, "r")), float64(rapid.IntRange(0, 30).Draw(t, "l")))
		}
	case "job":
		o := op()
		o.JobResources = o.Demand.Scale(1 / float64(rapid.IntRange(1, 8).Draw(t, "k"))).Round()
	case "gang":
		o := op()
		o.IsGang = !o.IsGang
	case "weight":
		o := op()
		if rapid.Bool().Draw(t, "nil") {
			o.Weight = nil
		} else {
			w := rapid.Float64Range(0.1, 10).Draw(t, "w")
			o.Weight = &w
		}
	case "tolerance":
		o := op()
		v := rapid.Float64Range(0, 1).Draw(t, "tol")
		o.FairShareStarvationTolerance = &v
	case "timeout":
		o := op()
		v := time.Duration(rapid.IntRange(0, 600).Draw(t, "timeout")) * time.Second
		o.FairShareStarvationTimeout = &v
	case "pending":
		o := op()
		o.PendingJobCount = rapid.IntRange(0, 50).Draw(t, "pending")
	case "unschedulable":
		o := op()
		o.Unschedulable = !o.Unschedulable
	case "jobs":
		o := op()
		if len(o.Jobs) > 0 {
			o.Jobs = nil
		} else {
			o.Jobs = []Job{{ID: "j", Usage: o.Usage, StartTime: o.StartTime}}
		}
	case "total":
		s.Cluster.Nodes = nil
		s.Cluster.Total[rapid.IntRange(0, NumResources-1).Draw(t, "r")] = float64(rapid.IntRange(0, 500).Draw(t, "total"))
	case "nodes":
		if n := len(s.Cluster.Nodes); n > 1 {
			s.Cluster.Nodes = slices.Clone(s.Cluster.Nodes)
			k := rapid.IntRange(0, n-1).Draw(t, "node")
			s.Cluster.Nodes[k].Resources[Memory] *= 2
			s.Cluster = NewClusterFromNodes(s.Cluster.Nodes)
		}
	case "gangs":
		s.Tree.EnableStepFunctionForGangOperations = !s.Tree.EnableStepFunctionForGangOperations
	case "removeOps": // operations finish: the pools stay (see reshape)
		for range rapid.IntRange(1, 3).Draw(t, "removed") {
			if len(s.Operations) == 0 {
				break
			}
			i := rapid.IntRange(0, len(s.Operations)-1).Draw(t, "remove")
			s.Operations = slices.Delete(s.Operations, i, i+1)
		}
	case "addOps": // operations start, in existing pools or at the root
		for k := range rapid.IntRange(1, 3).Draw(t, "added") {
			o := s.Operations[rapid.IntRange(0, no-1).Draw(t, "template")]
			o.ID = OperationID(fmt.Sprintf("new-%d-%d", s.Now.Unix(), k))
			if len(s.Pools) > 0 && rapid.Bool().Draw(t, "otherPool") {
				p := s.Pools[rapid.IntRange(0, len(s.Pools)-1).Draw(t, "pool")]
				if !slices.ContainsFunc(s.Pools, func(q PoolConfig) bool { return q.Parent == p.Name }) {
					o.Pool = p.Name
				}
			}
			at := rapid.IntRange(0, len(s.Operations)).Draw(t, "at")
			s.Operations = slices.Insert(s.Operations, at, o)
		}
	case "invalidRest": // a field Validate checks that opInputs does not record
		o := op()
		if rapid.Bool().Draw(t, "threshold") {
			th := PartialResources{}.With(ResourceType(rapid.IntRange(0, NumResources-1).Draw(t, "r")), -1)
			o.NonPreemptibleResourceUsageThreshold = &th
		} else {
			o.Jobs = append(slices.Clone(o.Jobs), Job{ID: "bad", Usage: Resources{CPU: -1}, StartTime: o.StartTime})
		}
		if no > 1 && rapid.Bool().Draw(t, "reshape") {
			// Another operation finishes: the update reshapes.
			i := rapid.IntRange(0, no-1).Draw(t, "finished")
			if &s.Operations[i] == o {
				i = (i + 1) % no
			}
			s.Operations = slices.Delete(s.Operations, i, i+1)
		}
	case "renameOp": // one operation finishes, another with its inputs takes its place
		o := op()
		o.ID = OperationID(fmt.Sprintf("%s-again-%d", o.ID, s.Now.Unix()))
	case "snapshot":
		s = varySnapshot(t, s)
		s.Now = snap.Now.Add(time.Second)
	}
	return s
}

// An Engine updated through a sequence of snapshots into two Results in
// turn, each update's previous state the other Result's, gives exactly
// what fresh updates give — whatever changed between the updates, so that
// every element and function the Engine keeps (see opcache.go) is the one
// it would build.
func TestPropertyEngineSequenceMatchesFreshUpdates(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := drawGenParams(t)
		snap, prev := genSnapshot(p)
		var en Engine
		var bufs [2]Result
		next := 0
		prevF, prevE := prev, prev
		cur, last := snap, snap
		for k := range rapid.IntRange(1, 8).Draw(t, "updates") {
			if k > 0 {
				cur = varyInputs(t, cur)
			}
			res := &bufs[next]
			want, differ, werr := updateBoth(&en, res, cur, prevF, prevE)
			if differ != "" {
				t.Fatalf("update %d: errors differ: %s", k, differ)
			}
			if werr != nil {
				// The next snapshot varies the last valid one, so
				// that the updates after an error are checked too.
				cur = last
				continue
			}
			last = cur
			if d := resultDiff(want, res); d != "" {
				t.Fatalf("update %d: %s", k, d)
			}
			prevF, prevE = &want.State, &res.State
			next = 1 - next
		}
	})
}

// The arena of operations' functions is reset once it holds more than
// twice what one update builds, and the functions are built again: a long
// run of updates where some operations change every time stays exact and
// bounded.
func TestOperationFunctionsArenaStaysBounded(t *testing.T) {
	p := genDefaults(5)
	p.Ops = 400
	snap, prev := genSnapshot(p)
	var en Engine
	var res Result
	maxUsed := 0
	for k := range 300 {
		s := cloneSnapshot(snap)
		for i := range s.Operations {
			if (i+k)%7 == 0 {
				s.Operations[i].Usage[CPU] = float64((i * k) % 13)
				s.Operations[i].Demand[CPU] = 13
			}
		}
		snap = s
		if err := en.UpdateInto(&res, snap, prev); err != nil {
			t.Fatal(err)
		}
		maxUsed = max(maxUsed, en.t.ws.vArena.used())
		if k%50 == 49 {
			want, err := Update(snap, prev)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want.Elements, res.Elements); d != "" {
				t.Fatalf("update %d: Elements differ (-fresh +engine):\n%s", k, d)
			}
		}
	}
	if limit := 2*en.t.fnBase + fnSlack + 64*len(snap.Operations); en.t.fnBase > 0 && maxUsed > limit {
		t.Errorf("arena grew to %d points (fnBase %d)", maxUsed, en.t.fnBase)
	}
}
