package scenario

import (
	"fmt"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sharetree/sharetree/scheduler"
)

// timeZero is the scenario's time zero; start_time offsets count from it.
func timeZero() time.Time { return time.Unix(0, 0).UTC() }

// jobGroup is one `jobs` item: count jobs of the same resources, the first
// running of them running.
type jobGroup struct {
	count, running int
	res            scheduler.Resources
}

// opState is an operation while the steps are resolved: the keys as given
// (so a step's `set.operations` can change some of them) and the resolved
// engine view.
type opState struct {
	id            scheduler.OperationID
	pool          scheduler.PoolID
	weight        *float64
	start         time.Duration
	limits        scheduler.PartialResources
	tolerance     *float64
	timeout       *time.Duration
	usageThresh   *scheduler.PartialResources
	isGang        bool
	unschedulable bool
	// hasJobs tells whether the load is given as job groups (jobs) or as
	// absolute amounts (demand, usage).
	hasJobs       bool
	jobs          []jobGroup
	demand, usage scheduler.Resources
	// node is where the operation was defined, for messages.
	node *yaml.Node
	// registered is set once a step has added the operation.
	registered bool
	resolved   Operation
}

// loadKeys collects the jobs, demand and usage keys of one mapping.
type loadKeys struct {
	jobs          []jobGroup
	hasJobs       bool
	demand, usage *scheduler.PartialResources
}

// operations decodes the top-level `operations` list; pools are the names an
// operation's pool may take.
func (d *decoder) operations(n *yaml.Node, path string, pools map[scheduler.PoolID]bool) ([]*opState, error) {
	items, err := d.sequence(n, path)
	if err != nil {
		return nil, err
	}
	out := make([]*opState, 0, len(items))
	first := make(map[scheduler.OperationID]string, len(items))
	for i, it := range items {
		ip := joinIndex(path, i)
		op, err := d.operation(it, ip, pools)
		if err != nil {
			return nil, err
		}
		if prev, dup := first[op.id]; dup {
			return nil, d.fail(joinKey(ip, "id"), op.node, "duplicate operation id %q (first at %s)", op.id, prev)
		}
		first[op.id] = ip
		out = append(out, op)
	}
	return out, nil
}

// operation decodes one operation mapping (top-level or add_operations).
func (d *decoder) operation(n *yaml.Node, path string, pools map[scheduler.PoolID]bool) (*opState, error) {
	op := &opState{node: deref(n)}
	var load loadKeys
	fields := append([]field{
		{key: "id", set: func(v *yaml.Node, p string) error {
			s, err := d.str(v, p)
			if err != nil {
				return err
			}
			if pools[scheduler.PoolID(s)] {
				// The engine names elements by pool name and operation id
				// in one namespace.
				return d.fail(p, deref(v), "operation id %q is also a pool name", s)
			}
			op.id = scheduler.OperationID(s)
			return nil
		}},
		{key: "pool", set: func(v *yaml.Node, p string) error {
			s, err := d.str(v, p)
			if err != nil {
				return err
			}
			if s != "" && !pools[scheduler.PoolID(s)] {
				return d.fail(p, deref(v), "pool %q does not exist", s)
			}
			op.pool = scheduler.PoolID(s)
			return nil
		}},
	}, d.opFields(op, &load)...)
	present, err := d.object(n, path, fields)
	if err != nil {
		return nil, err
	}
	if !present["id"] {
		return nil, d.missing(path, n, "id")
	}
	if err := d.applyLoad(op, load, path, op.node); err != nil {
		return nil, err
	}
	if err := d.resolveOperation(op, path, op.node); err != nil {
		return nil, err
	}
	return op, nil
}

// setOperation applies a step's `set.operations` entry to op: only the keys
// it names change. Giving jobs switches the operation to job groups; giving
// demand or usage switches it to absolute amounts, starting from its current
// demand and usage (its running jobs are then no longer listed).
func (d *decoder) setOperation(op *opState, n *yaml.Node, path string) error {
	next := *op
	var load loadKeys
	if _, err := d.object(n, path, d.opFields(&next, &load)); err != nil {
		return err
	}
	node := deref(n)
	if err := d.applyLoad(&next, load, path, node); err != nil {
		return err
	}
	if err := d.resolveOperation(&next, path, node); err != nil {
		return err
	}
	*op = next
	return nil
}

// opFields are the keys of an operation other than id and pool: the keys a
// step's `set.operations` entry may give.
func (d *decoder) opFields(op *opState, load *loadKeys) []field {
	return []field{
		d.numberPtrTo("weight", &op.weight),
		d.durationTo("start_time", &op.start),
		{key: "jobs", set: func(v *yaml.Node, p string) (err error) {
			load.hasJobs = true
			load.jobs, err = d.jobGroups(v, p)
			return err
		}},
		d.resourcesPtrTo("demand", &load.demand),
		d.resourcesPtrTo("usage", &load.usage),
		d.resourcesTo("resource_limits", &op.limits),
		d.numberPtrTo("fair_share_starvation_tolerance", &op.tolerance),
		d.durationPtrTo("fair_share_starvation_timeout", &op.timeout),
		d.resourcesPtrTo("non_preemptible_resource_usage_threshold", &op.usageThresh),
		d.boolTo("is_gang", &op.isGang),
		d.boolTo("unschedulable", &op.unschedulable),
	}
}

// jobGroups decodes a `jobs` list.
func (d *decoder) jobGroups(n *yaml.Node, path string) ([]jobGroup, error) {
	items, err := d.sequence(n, path)
	if err != nil {
		return nil, err
	}
	out := make([]jobGroup, 0, len(items))
	running := 0
	for i, it := range items {
		ip := joinIndex(path, i)
		var (
			g   jobGroup
			res scheduler.PartialResources
		)
		present, err := d.object(it, ip, []field{
			d.intTo("count", &g.count),
			d.resourcesTo("resources", &res),
			d.intTo("running", &g.running),
		})
		if err != nil {
			return nil, err
		}
		node := deref(it)
		switch {
		case !present["count"]:
			return nil, d.missing(ip, it, "count")
		case !present["resources"]:
			return nil, d.missing(ip, it, "resources")
		case g.count < 0 || g.count > maxJobCount:
			return nil, d.fail(joinKey(ip, "count"), node, "count must be in [0, %d], got %d", maxJobCount, g.count)
		case g.running < 0:
			return nil, d.fail(joinKey(ip, "running"), node, "running must be >= 0, got %d", g.running)
		case g.running > g.count:
			return nil, d.fail(joinKey(ip, "running"), node, "running %d exceeds count %d", g.running, g.count)
		}
		running += g.running
		if running > maxOpRunningJobs {
			return nil, d.fail(joinKey(ip, "running"), node, "more than %d running jobs in one operation", maxOpRunningJobs)
		}
		g.res = res.OrZero()
		out = append(out, g)
	}
	return out, nil
}

// jobTotals returns the demand and usage of job groups.
func jobTotals(groups []jobGroup) (demand, usage scheduler.Resources) {
	for _, g := range groups {
		demand = demand.Add(g.res.Scale(float64(g.count)))
		usage = usage.Add(g.res.Scale(float64(g.running)))
	}
	return demand, usage
}

// applyLoad applies the jobs, demand and usage keys of one mapping at path
// to op and checks that usage stays within demand.
func (d *decoder) applyLoad(op *opState, load loadKeys, path string, node *yaml.Node) error {
	if load.hasJobs && (load.demand != nil || load.usage != nil) {
		return d.fail(joinKey(path, "jobs"), node, "jobs cannot be combined with demand or usage; give one or the other")
	}
	if load.hasJobs {
		op.hasJobs, op.jobs = true, load.jobs
		op.demand, op.usage = scheduler.Resources{}, scheduler.Resources{}
		return nil
	}
	if load.demand == nil && load.usage == nil {
		return nil
	}
	if op.hasJobs {
		op.demand, op.usage = jobTotals(op.jobs)
		op.hasJobs, op.jobs = false, nil
	}
	if load.demand != nil {
		op.demand = load.demand.OrZero()
	}
	if load.usage != nil {
		op.usage = load.usage.OrZero()
	}
	at := joinKey(path, "usage")
	if load.usage == nil {
		at = joinKey(path, "demand")
	}
	for _, r := range scheduler.AllResources {
		if op.usage[r] > op.demand[r] {
			return d.fail(at, node, "usage of %s (%g) exceeds demand (%g)", r, op.usage[r], op.demand[r])
		}
	}
	return nil
}

// resolveOperation builds op's engine view and validates it; a failure is
// reported at path.
func (d *decoder) resolveOperation(op *opState, path string, node *yaml.Node) error {
	spec := scheduler.Operation{
		ID:                                   op.id,
		Pool:                                 op.pool,
		Weight:                               clonePtr(op.weight),
		StartTime:                            timeZero().Add(op.start),
		ResourceLimits:                       op.limits,
		IsGang:                               op.isGang,
		Unschedulable:                        op.unschedulable,
		FairShareStarvationTolerance:         clonePtr(op.tolerance),
		FairShareStarvationTimeout:           clonePtr(op.timeout),
		NonPreemptibleResourceUsageThreshold: clonePtr(op.usageThresh),
	}
	if op.hasJobs {
		running := 0
		for _, g := range op.jobs {
			running += g.running
		}
		if err := d.countJobs(running, path, node); err != nil {
			return err
		}
		spec.Demand, spec.Usage = jobTotals(op.jobs)
		haveJobResources := false
		for _, g := range op.jobs {
			spec.PendingJobCount += g.count - g.running
			if g.count > 0 {
				if haveJobResources {
					spec.JobResources = spec.JobResources.Min(g.res)
				} else {
					spec.JobResources, haveJobResources = g.res, true
				}
			}
			for range g.running {
				spec.Jobs = append(spec.Jobs, scheduler.Job{
					ID:        fmt.Sprintf("%s/%d", op.id, len(spec.Jobs)),
					Usage:     g.res,
					StartTime: spec.StartTime,
				})
			}
		}
	} else {
		spec.Demand, spec.Usage = op.demand, op.usage
		if !spec.Usage.Dominates(spec.Demand) {
			spec.PendingJobCount = 1
		}
	}
	if err := spec.Validate(); err != nil {
		return d.fail(path, node, "%s", causeText(err, scheduler.ErrInvalidOperation))
	}
	op.resolved = Operation{Spec: spec, StartOffset: op.start}
	return nil
}

// cloneOperation returns a deep copy of o, so steps never share pointers or
// slices.
func cloneOperation(o Operation) Operation {
	s := &o.Spec
	s.Weight = clonePtr(s.Weight)
	s.FairShareStarvationTolerance = clonePtr(s.FairShareStarvationTolerance)
	s.FairShareStarvationTimeout = clonePtr(s.FairShareStarvationTimeout)
	s.NonPreemptibleResourceUsageThreshold = clonePtr(s.NonPreemptibleResourceUsageThreshold)
	s.Jobs = slices.Clone(s.Jobs)
	return o
}
