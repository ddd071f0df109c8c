package preemption

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/sharetree/sharetree/scheduler"
)

// world is a random workload: a view and, per operation, its running jobs
// across the cluster in start order (jobs being interrupted left out), so
// that tests can classify them again after a decision.
type world struct {
	view   View
	opJobs map[scheduler.OperationID][]scheduler.Job
}

var genTotal = scheduler.Resources{scheduler.UserSlots: 40, scheduler.CPU: 40, scheduler.Memory: 160}

func randJobRes(r *rand.Rand) scheduler.Resources {
	return scheduler.Resources{scheduler.UserSlots: 1, scheduler.CPU: float64(1 + r.IntN(4)), scheduler.Memory: float64(1 + r.IntN(16))}
}

// genWorld draws a workload from r. stale makes some classes random
// instead of the classification's, to check that live rechecks hold.
func genWorld(r *rand.Rand) world {
	w := world{opJobs: map[scheduler.OperationID][]scheduler.Job{}}
	v := &w.view
	v.Total = genTotal
	pre := []float64{0.5, 0.8, 1, 1.5}[r.IntN(4)]
	v.Thresholds = Thresholds{Preemption: pre, Aggressive: pre * []float64{0, 0.2, 0.5, 1}[r.IntN(4)]}
	v.MaxStarts = r.IntN(4)

	// Pools: p0 and p1 at the top, p2 under p0, p3 under p0 or p1.
	nPools := r.IntN(5)
	parent := map[scheduler.PoolID]scheduler.PoolID{}
	var poolIDs []scheduler.PoolID
	for i := range nPools {
		id := scheduler.PoolID(fmt.Sprintf("p%d", i))
		poolIDs = append(poolIDs, id)
		switch i {
		case 2:
			parent[id] = "p0"
		case 3:
			parent[id] = []scheduler.PoolID{"p0", "p1"}[r.IntN(2)]
		}
		g := []float64{0, 0, 0.1, 0.2, 0.3}[r.IntN(5)]
		p := Pool{ID: id, Guarantee: scheduler.Share{scheduler.UserSlots: g, scheduler.CPU: g, scheduler.Memory: g}}
		if r.IntN(8) == 0 {
			p.Starvation = scheduler.Starving
		}
		v.Pools = append(v.Pools, p)
	}
	chain := func(p scheduler.PoolID) []scheduler.PoolID {
		var c []scheduler.PoolID
		for ; p != ""; p = parent[p] {
			c = append(c, p)
		}
		return c
	}

	nOps := 2 + r.IntN(5)
	type placed struct {
		op  int
		res scheduler.Resources
		on  bool
	}
	var all []placed
	for i := range nOps {
		o := Operation{ID: scheduler.OperationID(fmt.Sprintf("op%d", i))}
		if nPools > 0 && r.IntN(4) != 0 {
			o.Pools = chain(poolIDs[r.IntN(nPools)])
		}
		o.Starvation = []scheduler.StarvationStatus{scheduler.NonStarving, scheduler.NonStarving, scheduler.NonStarving,
			scheduler.Starving, scheduler.Starving, scheduler.AggressivelyStarving}[r.IntN(6)]
		if r.IntN(7) == 0 {
			o.Mode = ModeGraceful
		}
		if r.IntN(3) == 0 {
			o.NonPreemptibleUsage = scheduler.Resources{float64(1 + r.IntN(6)), math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(1)}
		}
		o.PendingJobs = r.IntN(4)
		if o.Starvation != scheduler.NonStarving && r.IntN(6) != 0 {
			o.PendingJobs = 1 + r.IntN(3)
		}
		o.NextJob = randJobRes(r)
		for range r.IntN(8) {
			all = append(all, placed{op: i, res: randJobRes(r), on: r.IntN(2) == 0})
		}
		v.Operations = append(v.Operations, o)
	}
	// A random start order over every job.
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	var nodeUsed scheduler.Resources
	for k, p := range all {
		o := &v.Operations[p.op]
		id := JobID(fmt.Sprintf("%s.j%d", o.ID, k))
		leaving := p.on && r.IntN(10) == 0
		if !leaving {
			o.Usage = o.Usage.Add(p.res)
			w.opJobs[o.ID] = append(w.opJobs[o.ID], scheduler.Job{ID: string(id), Usage: p.res})
		}
		if p.on {
			nodeUsed = nodeUsed.Add(p.res)
			v.Jobs = append(v.Jobs, Job{ID: id, Operation: o.ID, Resources: p.res, Seq: uint64(k + 1), Interrupting: leaving})
		}
	}
	var spare scheduler.Resources
	if r.IntN(2) == 0 {
		spare = scheduler.Resources{scheduler.UserSlots: float64(r.IntN(3)), scheduler.CPU: float64(r.IntN(4)), scheduler.Memory: float64(r.IntN(10))}
	}
	v.Node = Node{ID: "n", Total: nodeUsed.Add(spare), Free: spare}

	for i := range v.Operations {
		o := &v.Operations[i]
		demand := o.Usage.Add(o.NextJob.Scale(float64(o.PendingJobs))).ShareOf(genTotal)
		o.Demand = demand
		switch {
		case r.IntN(5) == 0:
			o.FairShare = demand // covers the demand
		case o.Starvation != scheduler.NonStarving && r.IntN(4) != 0:
			// Room for a few more jobs.
			o.FairShare = o.Usage.Add(o.NextJob.Scale(float64(1 + r.IntN(3)))).ShareOf(genTotal).Scale(1 / v.Thresholds.Preemption)
		default:
			o.FairShare = demand.Scale(r.Float64() * 1.3)
		}
		o.FairShare = o.FairShare.Min(scheduler.Ones(genTotal))
		classes := scheduler.ClassifyJobs(scheduler.ClassifyInput{
			FairShare: o.FairShare, Demand: o.Demand, Total: genTotal,
			AggressiveThreshold: v.Thresholds.Aggressive, Threshold: v.Thresholds.Preemption,
			UsageThreshold: o.NonPreemptibleUsage, Jobs: w.opJobs[o.ID],
		})
		for _, c := range classes {
			for k := range v.Jobs {
				if v.Jobs[k].ID == JobID(c.ID) {
					v.Jobs[k].Class = c.Class
				}
			}
		}
	}
	// Stale classes: some jobs get a random class.
	for k := range v.Jobs {
		if v.Jobs[k].Interrupting || r.IntN(6) == 0 {
			v.Jobs[k].Class = scheduler.PreemptionClass(r.IntN(3))
		}
	}
	for i := range v.Pools {
		p := &v.Pools[i]
		for _, o := range v.Operations {
			if slices.Contains(o.Pools, p.ID) {
				p.Usage = p.Usage.Add(o.Usage)
			}
		}
	}
	return w
}

// permuted returns the view with its slices shuffled.
func permuted(v View, r *rand.Rand) View {
	c := cloneView(v)
	r.Shuffle(len(c.Jobs), func(i, j int) { c.Jobs[i], c.Jobs[j] = c.Jobs[j], c.Jobs[i] })
	r.Shuffle(len(c.Operations), func(i, j int) { c.Operations[i], c.Operations[j] = c.Operations[j], c.Operations[i] })
	r.Shuffle(len(c.Pools), func(i, j int) { c.Pools[i], c.Pools[j] = c.Pools[j], c.Pools[i] })
	return c
}
