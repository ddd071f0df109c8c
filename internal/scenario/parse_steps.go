package scenario

import (
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/sharetree/sharetree/scheduler"
)

// model is the scenario's state while steps are resolved: the tree, the
// pools and the operations present, and the top-level defaults.
type model struct {
	tree      scheduler.TreeConfig
	pools     []poolState
	poolIndex map[scheduler.PoolID]int
	// volumes are the pools' initial accumulated volumes (first step only).
	volumes []*scheduler.Resources
	// ops are the operations present, in the order they were added.
	ops []*opState
	// update is the top-level update; nil when absent.
	update *Update
	// expect is the top-level expect.
	expect []Expectation
}

// initialModel decodes the top-level tree, pools, operations, update and
// expect.
func (d *decoder) initialModel(t *topNodes) (*model, error) {
	m := &model{tree: scheduler.DefaultTreeConfig()}
	if t.tree != nil {
		if err := d.applyTree(t.tree, "tree", &m.tree); err != nil {
			return nil, err
		}
	}
	var err error
	if t.pools != nil {
		if m.pools, m.volumes, err = d.pools(t.pools, "pools", TreeDoc{Config: m.tree}); err != nil {
			return nil, err
		}
	}
	m.poolIndex = make(map[scheduler.PoolID]int, len(m.pools))
	for i, p := range m.pools {
		m.poolIndex[p.cfg.Name] = i
	}
	if t.operations != nil {
		if m.ops, err = d.operations(t.operations, "operations", m.poolNames()); err != nil {
			return nil, err
		}
	}
	if t.update != nil {
		u, err := d.update(t.update, "update")
		if err != nil {
			return nil, err
		}
		m.update = &u
	}
	if t.expect != nil {
		if m.expect, err = d.expectations(t.expect, "expect"); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// poolNames returns the set of pool names an operation may name.
func (m *model) poolNames() map[scheduler.PoolID]bool {
	names := make(map[scheduler.PoolID]bool, len(m.pools))
	for _, p := range m.pools {
		names[p.cfg.Name] = true
	}
	return names
}

// opIndex returns the position of the operation id among those present, or
// -1.
func (m *model) opIndex(id scheduler.OperationID) int {
	return slices.IndexFunc(m.ops, func(op *opState) bool { return op.id == id })
}

// defaultUpdate is the update of a step without its own: the top-level
// update, else one update that does not advance time.
func (m *model) defaultUpdate() Update {
	if m.update != nil {
		return *m.update
	}
	return Update{Repeat: 1}
}

// snapshot fills the step's tree, pools (with the volumes this step sets),
// operations, and registers the operations not yet added as AddOperations.
func (m *model) snapshot(step *Step, volumes []*scheduler.Resources) {
	step.Tree = m.tree
	step.Tree.InferWeightFromGuaranteesShareMultiplier = clonePtr(m.tree.InferWeightFromGuaranteesShareMultiplier)
	for i, p := range m.pools {
		step.Pools = append(step.Pools, Pool{Config: clonePoolConfig(p.cfg), AccumulatedResourceVolume: clonePtr(volumes[i])})
	}
	for _, op := range m.ops {
		if !op.registered {
			step.AddOperations = append(step.AddOperations, cloneOperation(op.resolved))
			op.registered = true
		}
		step.Operations = append(step.Operations, cloneOperation(op.resolved))
	}
}

// steps resolves the `steps` list (n nil: the file has none, and the
// top-level keys make one step). The top-level operations count as present
// before the first step and are added by it, before its own add_operations;
// the top-level expect is checked after the last step.
func (d *decoder) steps(n *yaml.Node, path string, m *model) ([]Step, error) {
	if n == nil {
		step := Step{Update: m.defaultUpdate(), Expect: m.expect}
		if err := d.countRunningJobs(m, "operations", nil); err != nil {
			return nil, err
		}
		m.snapshot(&step, m.volumes)
		return []Step{step}, nil
	}
	items, err := d.sequence(n, path)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, d.fail(path, deref(n), "steps must list at least one step (omit the key for a single step)")
	}
	out := make([]Step, 0, len(items))
	for i, it := range items {
		volumes := make([]*scheduler.Resources, len(m.pools))
		if i == 0 {
			copy(volumes, m.volumes)
		}
		step, err := d.step(it, joinIndex(path, i), m, volumes)
		if err != nil {
			return nil, err
		}
		out = append(out, step)
	}
	last := &out[len(out)-1]
	last.Expect = append(last.Expect, m.expect...)
	return out, nil
}

// step resolves one step: its set, then remove_operations, then
// add_operations, in that order whatever the order of the keys.
func (d *decoder) step(n *yaml.Node, path string, m *model, volumes []*scheduler.Resources) (Step, error) {
	var step Step
	var setN, removeN, addN, updateN, expectN *yaml.Node
	keep := func(key string, dst **yaml.Node) field {
		return field{key: key, set: func(v *yaml.Node, _ string) error { *dst = v; return nil }}
	}
	if _, err := d.object(n, path, []field{
		keep("set", &setN), keep("add_operations", &addN), keep("remove_operations", &removeN),
		keep("update", &updateN), keep("expect", &expectN),
	}); err != nil {
		return step, err
	}
	if setN != nil {
		if err := d.applySet(setN, joinKey(path, "set"), m, volumes); err != nil {
			return step, err
		}
	}
	if removeN != nil {
		rp := joinKey(path, "remove_operations")
		ids, err := d.stringList(removeN, rp)
		if err != nil {
			return step, err
		}
		items, _ := d.sequence(removeN, rp)
		for j, id := range ids {
			k := m.opIndex(scheduler.OperationID(id))
			if k < 0 {
				return step, d.fail(joinIndex(rp, j), deref(items[j]), "operation %q is not present at this step", id)
			}
			// An operation the engine has not seen yet (a top-level one
			// removed by the first step) is simply never added.
			if m.ops[k].registered {
				step.RemoveOperations = append(step.RemoveOperations, m.ops[k].id)
			}
			m.ops = slices.Delete(m.ops, k, k+1)
		}
	}
	if addN != nil {
		ap := joinKey(path, "add_operations")
		items, err := d.sequence(addN, ap)
		if err != nil {
			return step, err
		}
		names := m.poolNames()
		for j, it := range items {
			ip := joinIndex(ap, j)
			op, err := d.operation(it, ip, names)
			if err != nil {
				return step, err
			}
			if m.opIndex(op.id) >= 0 {
				return step, d.fail(joinKey(ip, "id"), op.node, "operation %q already exists at this step", op.id)
			}
			m.ops = append(m.ops, op)
		}
	}
	step.Update = m.defaultUpdate()
	if updateN != nil {
		u, err := d.update(updateN, joinKey(path, "update"))
		if err != nil {
			return step, err
		}
		step.Update = u
	}
	if expectN != nil {
		e, err := d.expectations(expectN, joinKey(path, "expect"))
		if err != nil {
			return step, err
		}
		step.Expect = e
	}
	if err := d.countRunningJobs(m, path, deref(n)); err != nil {
		return step, err
	}
	m.snapshot(&step, volumes)
	return step, nil
}

// countRunningJobs counts the running jobs of the operations present, which
// the step about to be built copies, and fails at path past the bound.
func (d *decoder) countRunningJobs(m *model, path string, n *yaml.Node) error {
	count := 0
	for _, op := range m.ops {
		count += len(op.resolved.Spec.Jobs)
	}
	return d.countJobs(count, path, n)
}

// countJobs adds count running jobs to those the scenario holds (see
// maxRunningJobs) and fails, at path, once they pass the bound.
func (d *decoder) countJobs(count int, path string, n *yaml.Node) error {
	d.jobs += count
	if d.jobs > maxRunningJobs {
		return d.fail(path, n, "the scenario holds more than %d running jobs in all (each operation's, and again each step's "+
			"copy of the operations present)", maxRunningJobs)
	}
	return nil
}

// applySet applies a step's `set`: tree first, then pools (whose volumes go
// into volumes), then operations. Every pool is validated again when the tree
// or a pool changed, since the tree's main resource constrains guarantees.
func (d *decoder) applySet(n *yaml.Node, path string, m *model, volumes []*scheduler.Resources) error {
	var treeN, poolsN, opsN *yaml.Node
	keep := func(key string, dst **yaml.Node) field {
		return field{key: key, set: func(v *yaml.Node, _ string) error { *dst = v; return nil }}
	}
	if _, err := d.object(n, path, []field{
		keep("tree", &treeN), keep("pools", &poolsN), keep("operations", &opsN),
	}); err != nil {
		return err
	}
	treePath := joinKey(path, "tree")
	if treeN != nil {
		tree := m.tree
		tree.InferWeightFromGuaranteesShareMultiplier = clonePtr(m.tree.InferWeightFromGuaranteesShareMultiplier)
		if err := d.applyTree(treeN, treePath, &tree); err != nil {
			return err
		}
		m.tree = tree
	}
	if treeN == nil && poolsN == nil && opsN == nil {
		return nil
	}
	type setAt struct {
		path string
		node *yaml.Node
	}
	setPools := make(map[int]setAt)
	if poolsN != nil {
		entries, err := d.entries(poolsN, joinKey(path, "pools"))
		if err != nil {
			return err
		}
		for _, e := range entries {
			idx, ok := m.poolIndex[scheduler.PoolID(e.key)]
			if !ok {
				return d.fail(e.path, e.keyNode, "unknown pool %q", e.key)
			}
			volume, err := d.setPool(&m.pools[idx], e.val, e.path)
			if err != nil {
				return err
			}
			if volume != nil {
				volumes[idx] = volume
			}
			setPools[idx] = setAt{path: e.path, node: deref(e.val)}
		}
	}
	if treeN != nil || poolsN != nil {
		for i, p := range m.pools {
			at, ok := setPools[i]
			if !ok {
				at = setAt{path: treePath, node: deref(treeN)}
			}
			p.node = at.node
			if err := d.validatePool(p, m.tree.MainResource, at.path); err != nil {
				return err
			}
		}
		if c, j, ok := fifoParent(m.pools, m.poolIndex); ok {
			at, set := setPools[j]
			path := joinKey(at.path, "mode")
			if !set {
				at = setAt{path: treePath, node: deref(treeN)}
				path = at.path
			}
			return d.fail(path, at.node, "pool %q cannot be a fifo pool: it has child pool %q (a fifo pool holds operations only)",
				m.pools[j].cfg.Name, m.pools[c].cfg.Name)
		}
	}
	if opsN != nil {
		entries, err := d.entries(opsN, joinKey(path, "operations"))
		if err != nil {
			return err
		}
		for _, e := range entries {
			k := m.opIndex(scheduler.OperationID(e.key))
			if k < 0 {
				return d.fail(e.path, e.keyNode, "operation %q is not present at this step", e.key)
			}
			if err := d.setOperation(m.ops[k], e.val, e.path); err != nil {
				return err
			}
		}
	}
	return nil
}

// update decodes an `update` mapping.
func (d *decoder) update(n *yaml.Node, path string) (Update, error) {
	u := Update{Repeat: 1}
	present, err := d.object(n, path, []field{
		d.durationTo("elapsed", &u.Elapsed),
		d.intTo("repeat", &u.Repeat),
	})
	if err != nil {
		return u, err
	}
	u.HasElapsed = present["elapsed"]
	if u.Repeat < 1 || u.Repeat > maxRepeat {
		return u, d.fail(joinKey(path, "repeat"), deref(n), "repeat must be in [1, %d], got %d", maxRepeat, u.Repeat)
	}
	return u, nil
}

// expectations decodes an `expect` list.
func (d *decoder) expectations(n *yaml.Node, path string) ([]Expectation, error) {
	items, err := d.sequence(n, path)
	if err != nil {
		return nil, err
	}
	out := make([]Expectation, 0, len(items))
	for i, it := range items {
		ip := joinIndex(path, i)
		e := Expectation{Path: ip}
		var valN *yaml.Node
		present, err := d.object(it, ip, []field{
			{key: "element", set: func(v *yaml.Node, p string) (err error) {
				e.Element, err = d.str(v, p)
				return err
			}},
			{key: "attribute", set: func(v *yaml.Node, p string) (err error) {
				e.Attribute, err = d.str(v, p)
				return err
			}},
			{key: "value", set: func(v *yaml.Node, _ string) error { valN = v; return nil }},
		})
		if err != nil {
			return nil, err
		}
		for _, key := range []string{"element", "attribute", "value"} {
			if !present[key] {
				return nil, d.missing(ip, it, key)
			}
		}
		if err := d.expectedValue(valN, joinKey(ip, "value"), &e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// expectedValue decodes an expectation's value: a number, a string, or a
// share (resource name to number, only the resources it checks).
func (d *decoder) expectedValue(n *yaml.Node, path string, e *Expectation) error {
	v := deref(n)
	switch {
	case v.Kind == yaml.MappingNode:
		entries, err := d.entries(v, path)
		if err != nil {
			return err
		}
		var share scheduler.PartialResources
		for _, en := range entries {
			r, err := d.resourceName(en.keyNode, en.path)
			if err != nil {
				return err
			}
			x, err := d.number(en.val, en.path)
			if err != nil {
				return err
			}
			share = share.With(r, x)
		}
		e.Share = &share
	case isScalar(v, tagInt, tagFloat):
		x, err := d.number(v, path)
		if err != nil {
			return err
		}
		e.Number = &x
	case isScalar(v, tagStr):
		s := v.Value
		e.String = &s
	default:
		return d.fail(path, v, "want a number, a string or a map of resource shares, got %s", describe(v))
	}
	return nil
}
