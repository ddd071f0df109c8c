package preemption

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
)

// propertyCases is how many random workloads each property test draws;
// seeds are 0..propertyCases-1, so a failure names the seed to replay.
func propertyCases(t *testing.T) uint64 {
	if testing.Short() {
		return 300
	}
	return 5000
}

func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// TestPreemptProperties replays every decision of random plans against the
// brute-force model: victims are eligible, the set is valid and makes the
// job fit, no non-starving operation goes below its floor, the preempting
// operation's new job is not preemptible by the engine's classification,
// the view is unchanged and permuting it does not change the plan.
func TestPreemptProperties(t *testing.T) {
	decisions, refusals := 0, 0
	codes := map[RefusalCode]int{}
	for seed := range propertyCases(t) {
		w := genWorld(rng(seed))
		v := w.view
		before := cloneView(v)
		plan, err := Preempt(&v)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !reflect.DeepEqual(before, v) {
			t.Fatalf("seed %d: view modified:\n%s", seed, cmp.Diff(before, v))
		}
		for k := range 3 {
			pv := permuted(v, rng(seed*7+uint64(k)+1))
			again, err := Preempt(&pv)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if !reflect.DeepEqual(plan, again) {
				t.Fatalf("seed %d: a permuted view gives another plan (-first +permuted):\n%s", seed, cmp.Diff(plan, again))
			}
		}
		checkPlan(t, seed, w, plan)
		decisions += len(plan.Decisions)
		refusals += len(plan.Refusals)
		for _, r := range plan.Refusals {
			codes[r.Code]++
		}
	}
	t.Logf("%d decisions, %d refusals by code %v", decisions, refusals, codes)
	if decisions == 0 || refusals == 0 {
		t.Fatalf("the generator produced %d decisions and %d refusals; both must occur", decisions, refusals)
	}
}

// checkPlan applies the plan's decisions one by one to a copy of the world
// and checks each against the model.
func checkPlan(t *testing.T, seed uint64, w world, plan Plan) {
	t.Helper()
	v := cloneView(w.view)
	m := newRef(&v)
	opJobs := map[scheduler.OperationID][]scheduler.Job{}
	for id, js := range w.opJobs {
		opJobs[id] = slices.Clone(js)
	}
	jobByID := map[JobID]*Job{}
	for i := range v.Jobs {
		jobByID[v.Jobs[i].ID] = &v.Jobs[i]
	}
	maxStarts := max(1, v.MaxStarts)
	if len(plan.Decisions) > maxStarts {
		t.Fatalf("seed %d: %d decisions, max starts %d", seed, len(plan.Decisions), maxStarts)
	}
	for _, d := range plan.Decisions {
		s := m.ops[d.Operation]
		if s.Starvation == scheduler.NonStarving || s.PendingJobs == 0 || d.Start != s.NextJob || len(d.Victims) == 0 {
			t.Fatalf("seed %d: decision %+v for operation %+v", seed, d, *s)
		}
		var set []*Job
		avail := m.releasable()
		for _, vic := range d.Victims {
			j := jobByID[vic.Job]
			if j == nil || !m.eligible(s, j) || slices.Contains(set, j) {
				t.Fatalf("seed %d: victim %s is not an eligible job for %s", seed, vic.Job, s.ID)
			}
			if j.Class == scheduler.NonPreemptible || (s.Starvation == scheduler.Starving && j.Class != scheduler.Preemptible) {
				t.Fatalf("seed %d: %s operation %s took a %s job", seed, s.Starvation, s.ID, j.Class)
			}
			if vic.Reason.For != s.ID || vic.Reason.Class != j.Class || vic.Reason.VictimFloor != m.floor(s) {
				t.Fatalf("seed %d: reason %+v", seed, vic.Reason)
			}
			set = append(set, j)
			avail = avail.Add(j.Resources)
		}
		if !refFits(avail, s.NextJob) {
			t.Fatalf("seed %d: %s's job %s does not fit in %s after preemption", seed, s.ID, s.NextJob, avail)
		}
		if !m.valid(s, set) {
			t.Fatalf("seed %d: the victims of %s break a floor or a pool's guarantee", seed, s.ID)
		}
		// Property: no non-starving operation goes below floor × fair share.
		for _, j := range set {
			o := m.ops[j.Operation]
			var rem scheduler.Resources
			for _, k := range set {
				if k.Operation == o.ID {
					rem = rem.Add(k.Resources)
				}
			}
			if o.Starvation != scheduler.NonStarving ||
				refBelow(o, o.Usage.Sub(rem), v.Total, m.floor(s), s.Starvation == scheduler.Starving && refCovers(o)) {
				t.Fatalf("seed %d: preemption for %s takes %s below %g × its fair share", seed, s.ID, o.ID, m.floor(s))
			}
		}
		// Property: the preempting operation's new job is not preemptible
		// by the engine's own classification, and its usage stays within
		// threshold × fair share on resources its fair share does not cover.
		jobs := append(opJobs[s.ID], scheduler.Job{ID: "new", Usage: s.NextJob})
		classes := scheduler.ClassifyJobs(scheduler.ClassifyInput{
			FairShare: s.FairShare, Demand: s.Demand, Total: v.Total,
			AggressiveThreshold: v.Thresholds.Aggressive, Threshold: v.Thresholds.Preemption,
			UsageThreshold: s.NonPreemptibleUsage, Jobs: jobs,
		})
		if c := classes[len(classes)-1].Class; c == scheduler.Preemptible {
			t.Fatalf("seed %d: %s's job started by preemption is preemptible at once", seed, s.ID)
		}
		after := s.Usage.Add(s.NextJob)
		if !refCovers(s) && !scheduler.BelowUsageThreshold(after, s.NonPreemptibleUsage) {
			share := after.ShareOf(v.Total)
			for r := range share {
				if s.FairShare[r]+refEps < s.Demand[r] && share[r] > float64(v.Thresholds.Preemption*s.FairShare[r])+refEps {
					t.Fatalf("seed %d: %s's usage after the start exceeds %g × its fair share in %s",
						seed, s.ID, v.Thresholds.Preemption, scheduler.ResourceType(r))
				}
			}
		}
		// Apply the decision.
		for _, j := range set {
			j.Interrupting = true
			o := m.ops[j.Operation]
			o.Usage = o.Usage.Sub(j.Resources)
			for _, p := range o.Pools {
				m.pools[p].Usage = m.pools[p].Usage.Sub(j.Resources)
			}
		}
		s.Usage = s.Usage.Add(s.NextJob)
		for _, p := range s.Pools {
			m.pools[p].Usage = m.pools[p].Usage.Add(s.NextJob)
		}
		v.Node.Free = v.Node.Free.Sub(s.NextJob)
		opJobs[s.ID] = jobs
	}
	for _, r := range plan.Refusals {
		if o := m.ops[r.Operation]; o == nil || o.Starvation == scheduler.NonStarving {
			t.Fatalf("seed %d: refusal for a non-starving operation %+v", seed, r)
		}
	}
}

// TestPreemptMatchesBruteForce checks, for every starving operation of
// random workloads on its own (the others have nothing pending), that
// Preempt's outcome is the model's: the same refusal code, or the same
// victims — the fewest, first in candidate order — found by enumerating
// every subset of the node's jobs.
func TestPreemptMatchesBruteForce(t *testing.T) {
	compared := 0
	outcomes := map[RefusalCode]int{}
	multi := 0
	for seed := range propertyCases(t) {
		w := genWorld(rng(seed))
		for i := range w.view.Operations {
			s := w.view.Operations[i]
			if s.Starvation == scheduler.NonStarving {
				continue
			}
			v := cloneView(w.view)
			v.MaxStarts = 1
			for k := range v.Operations {
				if k != i {
					v.Operations[k].PendingJobs = 0
				}
			}
			plan, err := Preempt(&v)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			m := newRef(&v)
			if len(m.candidates(&s)) > 12 {
				continue
			}
			gotCode, gotVictims, exact := RefusalCode(-1), []JobID(nil), true
			for _, d := range plan.Decisions {
				if d.Operation == s.ID {
					for _, vic := range d.Victims {
						gotVictims = append(gotVictims, vic.Job)
					}
					exact = d.Exact
				}
			}
			for _, r := range plan.Refusals {
				if r.Operation == s.ID {
					gotCode = r.Code
				}
			}
			wantCode, wantVictims := refOutcome(m, &s)
			if !exact {
				t.Fatalf("seed %d: search budget exhausted on %d candidates", seed, len(m.candidates(&s)))
			}
			if gotCode != wantCode || !slices.Equal(gotVictims, wantVictims) {
				t.Fatalf("seed %d, operation %s: got %v %v, the model says %v %v\n%s",
					seed, s.ID, gotCode, gotVictims, wantCode, wantVictims, plan.Explain())
			}
			compared++
			outcomes[wantCode]++
			if len(wantVictims) > 1 {
				multi++
			}
		}
	}
	t.Logf("%d starving operations compared; outcomes %v (-1: victims, %d of them several)", compared, outcomes, multi)
	if outcomes[-1] == 0 || multi == 0 || outcomes[RefusalNotEnoughPreemptible] == 0 {
		t.Fatal("the generator must produce single and multiple victims and refusals")
	}
}

// refOutcome is the model's outcome for starving operation s: a refusal
// code, or -1 and the victims.
func refOutcome(m *refModel, s *Operation) (RefusalCode, []JobID) {
	th := m.v.Thresholds.Preemption
	after := s.Usage.Add(s.NextJob)
	wouldBe := false
	if !scheduler.BelowUsageThreshold(after, s.NonPreemptibleUsage) && !refCovers(s) {
		if !refBelow(s, s.Usage, m.v.Total, th, false) {
			wouldBe = true
		}
		share := after.ShareOf(m.v.Total)
		for r := range share {
			if s.FairShare[r]+refEps < s.Demand[r] && share[r] > float64(th*s.FairShare[r])+refEps {
				wouldBe = true
			}
		}
	}
	switch {
	case s.PendingJobs == 0:
		return RefusalNothingPending, nil
	case wouldBe:
		return RefusalWouldBePreemptible, nil
	case !refFits(m.v.Node.Total, s.NextJob):
		return RefusalNeverFits, nil
	case refFits(m.releasable(), s.NextJob):
		return RefusalFitsWithoutPreemption, nil
	}
	victims, ok := m.best(s)
	if !ok {
		return RefusalNotEnoughPreemptible, nil
	}
	return -1, victims
}

// TestGracefulProperties: interrupted jobs belong to graceful operations
// and were not already leaving; no operation goes below fair share −
// tolerance on its dominant resource; each operation's interruptions are
// newest first; an operation left above fair share + tolerance has no job on
// the node small enough to take; permuting the view changes nothing.
func TestGracefulProperties(t *testing.T) {
	total := 0
	for seed := range propertyCases(t) {
		r := rng(seed)
		w := genWorld(r)
		v := w.view
		if r.IntN(2) == 0 {
			v.GracefulTolerance = []float64{0.01, 0.05}[r.IntN(2)]
		}
		tol := v.GracefulTolerance
		if tol == 0 {
			tol = DefaultGracefulTolerance
		}
		got, err := Graceful(&v)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		pv := permuted(v, r)
		again, err := Graceful(&pv)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !reflect.DeepEqual(got, again) {
			t.Fatalf("seed %d: a permuted view gives other interruptions:\n%s", seed, cmp.Diff(got, again))
		}
		total += len(got)
		m := newRef(&v)
		taken := map[JobID]bool{}
		lastSeq := map[scheduler.OperationID]uint64{}
		removed := map[scheduler.OperationID]scheduler.Resources{}
		for _, g := range got {
			o := m.ops[g.Operation]
			var j *Job
			for k := range v.Jobs {
				if v.Jobs[k].ID == g.Job {
					j = &v.Jobs[k]
				}
			}
			if j == nil || j.Operation != o.ID || j.Interrupting || o.Mode != ModeGraceful || taken[j.ID] {
				t.Fatalf("seed %d: interrupt %+v is not a running job of a graceful operation", seed, g)
			}
			if last, ok := lastSeq[o.ID]; ok && j.Seq >= last {
				t.Fatalf("seed %d: %s's interruptions are not newest first", seed, o.ID)
			}
			lastSeq[o.ID], taken[j.ID] = j.Seq, true
			removed[o.ID] = removed[o.ID].Add(j.Resources)
		}
		for _, o := range v.Operations {
			if o.Mode != ModeGraceful {
				if _, ok := removed[o.ID]; ok {
					t.Fatalf("seed %d: a normal operation's job was interrupted", seed)
				}
				continue
			}
			share := o.Usage.ShareOf(v.Total)
			d := scheduler.CPU
			for r := range share {
				if share[r] > share[d] || (share[r] == share[d] && r < int(d) && share[r] > 0) {
					d = scheduler.ResourceType(r)
				}
			}
			after := o.Usage.Sub(removed[o.ID]).ShareOf(v.Total)[d]
			if _, ok := removed[o.ID]; ok && !(share[d] > o.FairShare[d]+tol) {
				t.Fatalf("seed %d: %s interrupted at usage %g within tolerance of fair share %g", seed, o.ID, share[d], o.FairShare[d])
			}
			if _, ok := removed[o.ID]; ok && after < o.FairShare[d]-tol-1e-12 {
				t.Fatalf("seed %d: %s taken to %g below fair share %g − %g", seed, o.ID, after, o.FairShare[d], tol)
			}
			if after > o.FairShare[d]+tol {
				for _, j := range v.Jobs {
					js := j.Resources.ShareOf(v.Total)[d]
					if j.Operation == o.ID && !j.Interrupting && !taken[j.ID] && js > 0 && after-js >= o.FairShare[d]-tol {
						t.Fatalf("seed %d: %s left at %g above fair share %g while job %s (%g) could go", seed, o.ID, after, o.FairShare[d], j.ID, js)
					}
				}
			}
		}
	}
	t.Logf("%d interruptions", total)
	if total == 0 {
		t.Fatal("the generator produced no graceful interruption")
	}
}
