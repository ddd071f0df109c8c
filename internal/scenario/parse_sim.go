package scenario

import (
	"fmt"
	"os"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sharetree/sharetree/scheduler"
)

// SimFile is a simulation (`sharetree sim`, docs/SIM.md): a cluster of
// nodes, one pool tree, a workload of operations submitted over time, and
// how long and how finely to simulate it.
type SimFile struct {
	// Path is the file name used in messages.
	Path string
	// Name is the file's optional description.
	Name string
	// Cluster has the nodes (groups expanded, ids "node-1", "node-2", ...).
	Cluster scheduler.Cluster
	// Tree is the tree configuration: the defaults and the file's `tree`.
	Tree scheduler.TreeConfig
	// Pools are the pools in file order, with their initial volumes.
	Pools []Pool
	// Workload is every operation, repeats expanded, ordered by submit
	// time (then file order).
	Workload []SimOperation
	// Simulation says how long and how finely to simulate.
	Simulation SimSettings
}

// SimOperation is one operation of a simulation's workload.
type SimOperation struct {
	ID   scheduler.OperationID
	Pool scheduler.PoolID
	// SubmitAt is when it is submitted, from time zero.
	SubmitAt time.Duration
	// Weight is nil for 1.
	Weight *float64
	// Graceful: preemption_mode graceful (its jobs above its fair share
	// are interrupted whether or not anyone waits).
	Graceful bool
	Tasks    []SimTask
}

// SimTask is a task of a simulated operation: Jobs jobs of Resources, each
// running for Duration once started.
type SimTask struct {
	Name      string
	Jobs      int
	Resources scheduler.Resources
	Duration  time.Duration
}

// SimSettings are a simulation's `simulation` keys.
type SimSettings struct {
	// Duration is the virtual time simulated.
	Duration time.Duration
	// HeartbeatPeriod is each node's scheduling pass period (default 1s);
	// the nodes' passes are spread evenly over it.
	HeartbeatPeriod time.Duration
	// SamplePeriod is the period of the time series (default: Duration/500,
	// at least the tree's fair_share_update_period).
	SamplePeriod time.Duration
	// Preemption: starving operations preempt others' jobs (default true).
	Preemption bool
}

// Bounds of a simulation, so that a file cannot ask for a run without end.
const (
	maxSimDuration   = 366 * 24 * time.Hour
	maxSimNodePasses = 50_000_000
	maxSimJobs       = 10_000_000
	maxSimSamples    = 100_000
	maxSimRepeat     = 100_000
)

// ParseSimFile reads and parses the simulation file at path. A failure to
// read the file is returned as it is (wrapped); every problem with its
// content is an *Error.
func ParseSimFile(path string) (*SimFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("simulation: %w", err)
	}
	return ParseSim(path, data)
}

// ParseSim parses simulation bytes (YAML or JSON); name is used in error
// messages. Every error it returns is an *Error wrapping
// ErrInvalidScenario, naming the file, the path to the key and the reason.
func ParseSim(name string, data []byte) (*SimFile, error) {
	d := &decoder{file: name}
	root, err := d.document(data)
	if err != nil {
		return nil, err
	}
	var version, nameN, cluster, tree, pools, workload, simulation *yaml.Node
	keep := func(key string, dst **yaml.Node) field {
		return field{key: key, set: func(v *yaml.Node, _ string) error { *dst = v; return nil }}
	}
	if _, err := d.object(root, "", []field{keep("version", &version), keep("name", &nameN), keep("cluster", &cluster),
		keep("tree", &tree), keep("pools", &pools), keep("workload", &workload), keep("simulation", &simulation)}); err != nil {
		return nil, err
	}
	for _, req := range []struct {
		key string
		n   *yaml.Node
	}{{"version", version}, {"cluster", cluster}, {"workload", workload}, {"simulation", simulation}} {
		if req.n == nil {
			return nil, d.missing("", root, req.key)
		}
	}
	v, err := d.integer(version, "version")
	if err != nil {
		return nil, err
	}
	if v != 1 {
		return nil, d.fail("version", deref(version), "unsupported version %d (want 1)", v)
	}
	f := &SimFile{Path: name, Tree: scheduler.DefaultTreeConfig()}
	if nameN != nil {
		if f.Name, err = d.str(nameN, "name"); err != nil {
			return nil, err
		}
	}
	if f.Cluster, err = d.cluster(cluster, "cluster"); err != nil {
		return nil, err
	}
	if len(f.Cluster.Nodes) == 0 {
		return nil, d.fail("cluster", deref(cluster), "the simulator runs jobs on nodes: give cluster.nodes, not cluster.resources")
	}
	if tree != nil {
		if err := d.applyTree(tree, "tree", &f.Tree); err != nil {
			return nil, err
		}
	}
	names := map[scheduler.PoolID]bool{}
	if pools != nil {
		states, volumes, err := d.pools(pools, "pools", TreeDoc{Config: f.Tree})
		if err != nil {
			return nil, err
		}
		for i, p := range states {
			f.Pools = append(f.Pools, Pool{Config: p.cfg, AccumulatedResourceVolume: volumes[i]})
			names[p.cfg.Name] = true
		}
	}
	if f.Simulation, err = d.simSettings(simulation, "simulation", f.Tree); err != nil {
		return nil, err
	}
	if f.Workload, err = d.workload(workload, "workload", names, f.Cluster.Nodes); err != nil {
		return nil, err
	}
	if passes := int64(f.Simulation.Duration/f.Simulation.HeartbeatPeriod) * int64(len(f.Cluster.Nodes)); passes > maxSimNodePasses {
		return nil, d.fail("simulation.heartbeat_period", deref(simulation), "%d nodes for %s at one pass every %s are %d node passes, more than %d: shorten the duration or lengthen the period",
			len(f.Cluster.Nodes), f.Simulation.Duration, f.Simulation.HeartbeatPeriod, passes, maxSimNodePasses)
	}
	return f, nil
}

// simSettings decodes `simulation`.
func (d *decoder) simSettings(n *yaml.Node, path string, tree scheduler.TreeConfig) (SimSettings, error) {
	s := SimSettings{HeartbeatPeriod: time.Second, Preemption: true}
	present, err := d.object(n, path, []field{
		d.durationTo("duration", &s.Duration),
		d.durationTo("heartbeat_period", &s.HeartbeatPeriod),
		d.durationTo("sample_period", &s.SamplePeriod),
		d.boolTo("preemption", &s.Preemption),
	})
	if err != nil {
		return s, err
	}
	node := deref(n)
	switch {
	case !present["duration"]:
		return s, d.missing(path, n, "duration")
	case s.Duration <= 0 || s.Duration > maxSimDuration:
		return s, d.fail(joinKey(path, "duration"), node, "duration %s must be positive and at most %s", s.Duration, maxSimDuration)
	case s.HeartbeatPeriod < 10*time.Millisecond:
		return s, d.fail(joinKey(path, "heartbeat_period"), node, "heartbeat_period %s must be at least 10ms", s.HeartbeatPeriod)
	case present["sample_period"] && s.SamplePeriod <= 0:
		return s, d.fail(joinKey(path, "sample_period"), node, "sample_period %s must be positive", s.SamplePeriod)
	}
	if !present["sample_period"] {
		s.SamplePeriod = max(s.Duration/500, tree.FairShareUpdatePeriod)
	}
	if n := s.Duration / s.SamplePeriod; n > maxSimSamples {
		return s, d.fail(joinKey(path, "sample_period"), node, "%s of samples every %s are %d samples, more than %d", s.Duration, s.SamplePeriod, n, maxSimSamples)
	}
	return s, nil
}

// workload decodes `workload`, expands repeats and orders the operations
// by submit time (then file order).
func (d *decoder) workload(n *yaml.Node, path string, pools map[scheduler.PoolID]bool, nodes []scheduler.Node) ([]SimOperation, error) {
	items, err := d.sequence(n, path)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, d.fail(path, deref(n), "workload must not be empty")
	}
	var out []SimOperation
	ids := map[scheduler.OperationID]string{} // id -> path of the entry that made it
	jobs := 0
	for i, it := range items {
		ip := joinIndex(path, i)
		ops, err := d.simOperation(it, ip, pools, nodes)
		if err != nil {
			return nil, err
		}
		for _, op := range ops {
			if first, dup := ids[op.ID]; dup {
				return nil, d.fail(joinKey(ip, "id"), deref(it), "operation id %q is also made by %s", op.ID, first)
			}
			ids[op.ID] = ip
			for _, t := range op.Tasks {
				jobs += t.Jobs
			}
			if jobs > maxSimJobs {
				return nil, d.fail(ip, deref(it), "the workload has more than %d jobs", maxSimJobs)
			}
		}
		out = append(out, ops...)
	}
	slices.SortStableFunc(out, func(a, b SimOperation) int {
		switch {
		case a.SubmitAt < b.SubmitAt:
			return -1
		case a.SubmitAt > b.SubmitAt:
			return 1
		}
		return 0
	})
	return out, nil
}

// simOperation decodes one workload entry: one operation, or count with
// repeat (ids "<id>-1", "<id>-2", ...).
func (d *decoder) simOperation(n *yaml.Node, path string, pools map[scheduler.PoolID]bool, nodes []scheduler.Node) ([]SimOperation, error) {
	var (
		op                 SimOperation
		id, pool, mode     string
		weight             *float64
		repeatN, tasksN    *yaml.Node
		repeatCount        = 1
		repeatEvery        time.Duration
		hasRepeat, hasMode bool
	)
	present, err := d.object(n, path, []field{
		{key: "id", set: func(v *yaml.Node, p string) (err error) {
			if id, err = d.str(v, p); err == nil && pools[scheduler.PoolID(id)] {
				err = d.fail(p, deref(v), "operation id %q is also a pool name", id)
			}
			return err
		}},
		{key: "pool", set: func(v *yaml.Node, p string) (err error) {
			if pool, err = d.str(v, p); err == nil && pool != "" && !pools[scheduler.PoolID(pool)] {
				err = d.fail(p, deref(v), "pool %q does not exist", pool)
			}
			return err
		}},
		d.durationTo("submit_at", &op.SubmitAt),
		d.numberPtrTo("weight", &weight),
		{key: "preemption_mode", set: func(v *yaml.Node, p string) (err error) {
			hasMode = true
			if mode, err = d.str(v, p); err == nil && mode != "normal" && mode != "graceful" {
				err = d.fail(p, deref(v), "preemption_mode %q (want normal or graceful)", mode)
			}
			return err
		}},
		{key: "repeat", set: func(v *yaml.Node, _ string) error { repeatN, hasRepeat = v, true; return nil }},
		{key: "tasks", set: func(v *yaml.Node, _ string) error { tasksN = v; return nil }},
	})
	if err != nil {
		return nil, err
	}
	node := deref(n)
	switch {
	case !present["id"]:
		return nil, d.missing(path, n, "id")
	case id == "":
		return nil, d.fail(joinKey(path, "id"), node, "id must not be empty")
	case !present["tasks"]:
		return nil, d.missing(path, n, "tasks")
	case op.SubmitAt < 0:
		return nil, d.fail(joinKey(path, "submit_at"), node, "submit_at %s must not be negative", op.SubmitAt)
	case weight != nil && !(*weight > 0 && *weight <= 1e9):
		return nil, d.fail(joinKey(path, "weight"), node, "weight %g must be positive (at most 1e9)", *weight)
	}
	op.Pool, op.Weight, op.Graceful = scheduler.PoolID(pool), weight, hasMode && mode == "graceful"
	if op.Tasks, err = d.simTasks(tasksN, joinKey(path, "tasks"), nodes); err != nil {
		return nil, err
	}
	if hasRepeat {
		rp := joinKey(path, "repeat")
		rpresent, err := d.object(repeatN, rp, []field{d.intTo("count", &repeatCount), d.durationTo("every", &repeatEvery)})
		if err != nil {
			return nil, err
		}
		switch {
		case !rpresent["count"]:
			return nil, d.missing(rp, repeatN, "count")
		case !rpresent["every"]:
			return nil, d.missing(rp, repeatN, "every")
		case repeatCount < 1 || repeatCount > maxSimRepeat:
			return nil, d.fail(joinKey(rp, "count"), deref(repeatN), "count %d must be in [1, %d]", repeatCount, maxSimRepeat)
		case repeatEvery <= 0:
			return nil, d.fail(joinKey(rp, "every"), deref(repeatN), "every %s must be positive", repeatEvery)
		}
	}
	if !hasRepeat {
		op.ID = scheduler.OperationID(id)
		return []SimOperation{op}, nil
	}
	out := make([]SimOperation, 0, repeatCount)
	for k := range repeatCount {
		o := op
		o.ID = scheduler.OperationID(fmt.Sprintf("%s-%d", id, k+1))
		o.SubmitAt = op.SubmitAt + time.Duration(k)*repeatEvery
		out = append(out, o)
	}
	return out, nil
}

// simTasks decodes an operation's tasks: each job must fit on some node.
func (d *decoder) simTasks(n *yaml.Node, path string, nodes []scheduler.Node) ([]SimTask, error) {
	items, err := d.sequence(n, path)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, d.fail(path, deref(n), "tasks must not be empty")
	}
	out := make([]SimTask, 0, len(items))
	for i, it := range items {
		ip := joinIndex(path, i)
		t := SimTask{Name: fmt.Sprintf("task-%d", i+1)}
		var res scheduler.PartialResources
		present, err := d.object(it, ip, []field{
			{key: "name", set: func(v *yaml.Node, p string) (err error) { t.Name, err = d.str(v, p); return err }},
			d.intTo("jobs", &t.Jobs),
			d.resourcesTo("resources", &res),
			d.durationTo("duration", &t.Duration),
		})
		if err != nil {
			return nil, err
		}
		node := deref(it)
		for _, key := range []string{"jobs", "resources", "duration"} {
			if !present[key] {
				return nil, d.missing(ip, it, key)
			}
		}
		t.Resources = res.OrZero()
		switch {
		case t.Jobs < 1 || t.Jobs > maxSimJobs:
			return nil, d.fail(joinKey(ip, "jobs"), node, "jobs %d must be in [1, %d]", t.Jobs, maxSimJobs)
		case t.Duration <= 0:
			return nil, d.fail(joinKey(ip, "duration"), node, "duration %s must be positive", t.Duration)
		case t.Resources == (scheduler.Resources{}):
			return nil, d.fail(joinKey(ip, "resources"), node, "a job must need some resource")
		}
		if !slices.ContainsFunc(nodes, func(nd scheduler.Node) bool { return nd.Resources.Dominates(t.Resources) }) {
			return nil, d.fail(joinKey(ip, "resources"), node, "a job of %v fits on no node", t.Resources)
		}
		out = append(out, t)
	}
	return out, nil
}
