package placement

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/sharetree/sharetree/scheduler"
	"pgregory.net/rapid"
)

// model is what the property test knows independently of the Placement:
// the pool specs, the operation specs and which jobs run (where) or are done.
type model struct {
	pools   []PoolSpec
	byName  map[scheduler.PoolID]*PoolSpec
	ops     map[scheduler.OperationID]*modelOp
	opOrder []scheduler.OperationID
}

type modelOp struct {
	// relimited: limits were changed at run time, so running jobs may
	// exceed them (no new job may start beyond them: checkSchedule).
	relimited bool
	// held: added held and not released yet (OperationSpec.Held).
	held    bool
	spec    OperationSpec
	running map[jobID]scheduler.NodeID
	done    map[jobID]bool
}

func (m *model) pending(o *modelOp, ti int) int {
	n := o.spec.Tasks[ti].JobCount
	for id := range o.running {
		if id.task == ti {
			n--
		}
	}
	for id := range o.done {
		if id.task == ti {
			n--
		}
	}
	return n
}

// chain is the pool path of an operation, nearest first (root excluded).
func (m *model) chain(pool scheduler.PoolID) []*PoolSpec {
	var out []*PoolSpec
	for pool != "" {
		s := m.byName[pool]
		out = append(out, s)
		pool = s.Parent
	}
	return out
}

// usage is the fixed-point usage of an operation from the model.
func (m *model) usage(o *modelOp) vec {
	var u vec
	for id := range o.running {
		r, _, _ := jobVec(o.spec.Tasks[id.task].JobResources)
		u = u.add(r)
	}
	return u
}

// poolUsage sums the usage of the operations below pool.
func (m *model) poolUsage(pool scheduler.PoolID) vec {
	var u vec
	for _, o := range m.ops {
		for _, s := range m.chain(o.spec.Pool) {
			if s.Name == pool {
				u = u.add(m.usage(o))
				break
			}
		}
	}
	return u
}

// allows reports whether starting job r of o keeps o and its pools within
// limits, given the model's usage plus extra per element.
func (m *model) allows(o *modelOp, r vec, extraOp vec, extraPool map[scheduler.PoolID]vec) bool {
	if !limitVec(o.spec.ResourceLimits).sub(m.usage(o).add(extraOp)).fits(r) {
		return false
	}
	for _, s := range m.chain(o.spec.Pool) {
		if !limitVec(s.ResourceLimits).sub(m.poolUsage(s.Name).add(extraPool[s.Name])).fits(r) {
			return false
		}
	}
	return true
}

func genLimits(t *rapid.T, label string) scheduler.PartialResources {
	var l scheduler.PartialResources
	if rapid.Bool().Draw(t, label+"_limited") {
		if rapid.Bool().Draw(t, label+"_slots") {
			l = l.With(scheduler.UserSlots, float64(rapid.IntRange(0, 8).Draw(t, label+"_slotsv")))
		}
		if rapid.Bool().Draw(t, label+"_cpu") {
			l = l.With(scheduler.CPU, float64(rapid.IntRange(0, 1200).Draw(t, label+"_cpuv"))/100)
		}
	}
	return l
}

// genPools draws a tree of at most maxPools pools (p0, p1, …): each a
// child of the root or of an earlier fair_share pool, a quarter of them
// fifo, with random limits.
func genPools(t *rapid.T, maxPools int) []PoolSpec {
	var pools []PoolSpec
	var fairPools []scheduler.PoolID
	for i := range rapid.IntRange(0, maxPools).Draw(t, "pools") {
		s := PoolSpec{Name: scheduler.PoolID(fmt.Sprintf("p%d", i)), ResourceLimits: genLimits(t, "poolLimits")}
		if len(fairPools) > 0 && rapid.Bool().Draw(t, "nested") {
			s.Parent = fairPools[rapid.IntRange(0, len(fairPools)-1).Draw(t, "parent")]
		}
		if rapid.IntRange(0, 3).Draw(t, "fifo") == 0 {
			s.Mode = scheduler.ModeFIFO
		} else {
			fairPools = append(fairPools, s.Name)
		}
		pools = append(pools, s)
	}
	return pools
}

func genJob(t *rapid.T, label string) scheduler.Resources {
	return res(float64(rapid.IntRange(0, 2).Draw(t, label+"_slots")),
		float64(rapid.IntRange(0, 400).Draw(t, label+"_cpu"))/100,
		float64(rapid.IntRange(0, 16).Draw(t, label+"_mem")))
}

func genOp(t *rapid.T, m *model, n int) OperationSpec {
	id := scheduler.OperationID(fmt.Sprintf("op%d", n))
	pool := scheduler.PoolID("")
	if len(m.pools) > 0 && rapid.IntRange(0, 4).Draw(t, "inRoot") > 0 {
		pool = m.pools[rapid.IntRange(0, len(m.pools)-1).Draw(t, "opPool")].Name
	}
	spec := OperationSpec{ID: id, Pool: pool, Order: uint64(rapid.IntRange(0, 5).Draw(t, "order")),
		ResourceLimits: genLimits(t, "opLimits"), Weight: float64(rapid.IntRange(0, 3).Draw(t, "weight")),
		Held: rapid.IntRange(0, 3).Draw(t, "held") == 0}
	for i := range rapid.IntRange(1, 3).Draw(t, "tasks") {
		spec.Tasks = append(spec.Tasks, TaskSpec{Name: fmt.Sprint(i), JobCount: rapid.IntRange(1, 5).Draw(t, "jobs"), JobResources: genJob(t, "job")})
	}
	return spec
}

func TestPlacementProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := &model{byName: map[scheduler.PoolID]*PoolSpec{}, ops: map[scheduler.OperationID]*modelOp{}}
		m.pools = genPools(t, 7)
		rebuildIndex := func() {
			m.byName = map[scheduler.PoolID]*PoolSpec{}
			for i := range m.pools {
				m.byName[m.pools[i].Name] = &m.pools[i]
			}
		}
		rebuildIndex()
		p := New()
		p.SetTotal(res(20, 40, 100))
		if err := p.SetPools(m.pools); err != nil {
			t.Fatal(err)
		}
		nextOp := 0
		addOp := func() {
			spec := genOp(t, m, nextOp)
			nextOp++
			if err := p.AddOperation(spec); err != nil {
				t.Fatalf("add %+v: %v", spec, err)
			}
			m.ops[spec.ID] = &modelOp{spec: spec, held: spec.Held, running: map[jobID]scheduler.NodeID{}, done: map[jobID]bool{}}
			m.opOrder = append(m.opOrder, spec.ID)
		}
		for range rapid.IntRange(0, 6).Draw(t, "initialOps") {
			addOp()
		}
		liveOps := func() []scheduler.OperationID {
			var out []scheduler.OperationID
			for _, id := range m.opOrder {
				if m.ops[id] != nil {
					out = append(out, id)
				}
			}
			return out
		}
		steps := rapid.IntRange(1, 40).Draw(t, "steps")
		for step := range steps {
			switch action := rapid.IntRange(0, 11).Draw(t, "action"); action {
			case 0, 1, 2, 3:
				node := scheduler.NodeID(fmt.Sprintf("n%d", rapid.IntRange(0, 2).Draw(t, "node")))
				free := res(float64(rapid.IntRange(0, 6).Draw(t, "freeSlots")),
					float64(rapid.IntRange(0, 800).Draw(t, "freeCPU"))/100,
					float64(rapid.IntRange(0, 64).Draw(t, "freeMem")))
				maxJobs := rapid.IntRange(0, 4).Draw(t, "maxJobs")
				var want *JobKey
				if maxJobs == 1 {
					want = bruteForceNext(p, floorVec(free))
				}
				got := p.Schedule(node, free, maxJobs)
				if want != nil && (len(got) != 1 || got[0].Job != *want) {
					t.Fatalf("step %d: Schedule picked %v, brute force %v", step, got, *want)
				}
				if want == nil && maxJobs == 1 && len(got) != 0 {
					t.Fatalf("step %d: Schedule picked %v, brute force nothing", step, got)
				}
				checkSchedule(t, m, free, maxJobs, got)
				for _, a := range got {
					m.ops[a.Job.Operation].running[jobID{a.Job.Task, a.Job.Index}] = node
				}
			case 4, 5:
				type rj struct {
					id  scheduler.OperationID
					job jobID
				}
				var all []rj
				for _, id := range liveOps() {
					for j := range m.ops[id].running {
						all = append(all, rj{id, j})
					}
				}
				sort.Slice(all, func(i, k int) bool {
					if all[i].id != all[k].id {
						return all[i].id < all[k].id
					}
					return all[i].job.task < all[k].job.task || all[i].job.task == all[k].job.task && all[i].job.index < all[k].job.index
				})
				if len(all) == 0 {
					if p.JobFinished(JobKey{Operation: "op0", Task: 0, Index: 99}, true) {
						t.Fatal("JobFinished of a job that is not running returned true")
					}
					continue
				}
				pick := all[rapid.IntRange(0, len(all)-1).Draw(t, "finish")]
				requeue := rapid.Bool().Draw(t, "requeue")
				key := JobKey{Operation: pick.id, Task: pick.job.task, Index: pick.job.index}
				if !p.JobFinished(key, requeue) {
					t.Fatalf("JobFinished(%v) of a running job returned false", key)
				}
				if p.JobFinished(key, requeue) {
					t.Fatalf("second JobFinished(%v) returned true", key)
				}
				o := m.ops[pick.id]
				delete(o.running, pick.job)
				if !requeue {
					o.done[pick.job] = true
				}
			case 6:
				ids := liveOps()
				if len(ids) == 0 {
					continue
				}
				o := m.ops[ids[rapid.IntRange(0, len(ids)-1).Draw(t, "adoptOp")]]
				ti := rapid.IntRange(0, len(o.spec.Tasks)-1).Draw(t, "adoptTask")
				idx := rapid.IntRange(-1, o.spec.Tasks[ti].JobCount).Draw(t, "adoptIndex")
				j := jobID{ti, idx}
				isPending := idx >= 0 && idx < o.spec.Tasks[ti].JobCount && o.running[j] == "" && !o.done[j]
				if got := p.Adopt(JobKey{Operation: o.spec.ID, Task: ti, Index: idx}, "adopted"); got != isPending {
					t.Fatalf("Adopt(%v) = %v, want %v", j, got, isPending)
				}
				if isPending {
					o.running[j] = "adopted"
				}
			case 7:
				if rapid.Bool().Draw(t, "addOrRemove") {
					addOp()
					continue
				}
				ids := liveOps()
				if len(ids) == 0 {
					continue
				}
				id := ids[rapid.IntRange(0, len(ids)-1).Draw(t, "removeOp")]
				p.RemoveOperation(id)
				delete(m.ops, id)
			case 8:
				shares := map[string]scheduler.Share{}
				opShares := map[string]scheduler.Share{}
				for _, s := range m.pools {
					if rapid.Bool().Draw(t, "poolFair") {
						shares[string(s.Name)] = uniform(float64(rapid.IntRange(0, 10).Draw(t, "fair")) / 10)
					}
				}
				for _, id := range liveOps() {
					if rapid.Bool().Draw(t, "opFair") {
						opShares[string(id)] = uniform(float64(rapid.IntRange(0, 10).Draw(t, "fair")) / 10)
					}
				}
				p.SetFairShares(fairResult(shares, opShares))
			case 9:
				for i := range m.pools {
					if rapid.Bool().Draw(t, "newLimits") {
						m.pools[i].ResourceLimits = genLimits(t, "poolLimits")
					}
				}
				rebuildIndex()
				if err := p.SetPools(slices.Clone(m.pools)); err != nil {
					t.Fatal(err)
				}
				if rapid.Bool().Draw(t, "newTotal") {
					p.SetTotal(res(float64(rapid.IntRange(1, 30).Draw(t, "totSlots")), 40, 100))
				}
			case 10:
				// Run-time update: new weight and limits, and maybe a move
				// to another pool with the running jobs.
				ids := liveOps()
				if len(ids) == 0 {
					if err := p.UpdateOperation("nope", 1, scheduler.PartialResources{}); err == nil {
						t.Fatal("UpdateOperation of an unknown operation succeeded")
					}
					continue
				}
				o := m.ops[ids[rapid.IntRange(0, len(ids)-1).Draw(t, "updateOp")]]
				w := float64(rapid.IntRange(0, 3).Draw(t, "newWeight"))
				lim := genLimits(t, "newOpLimits")
				if err := p.UpdateOperation(o.spec.ID, w, lim); err != nil {
					t.Fatal(err)
				}
				o.spec.Weight, o.spec.ResourceLimits, o.relimited = w, lim, true
				if len(m.pools) > 0 && rapid.Bool().Draw(t, "move") {
					to := scheduler.PoolID("")
					if rapid.IntRange(0, 4).Draw(t, "moveToRoot") > 0 {
						to = m.pools[rapid.IntRange(0, len(m.pools)-1).Draw(t, "movePool")].Name
					}
					if err := p.MoveOperation(o.spec.ID, to); err != nil {
						t.Fatal(err)
					}
					o.spec.Pool = to
				}
				if err := p.MoveOperation(o.spec.ID, "no-such-pool"); err == nil {
					t.Fatal("MoveOperation to an unknown pool succeeded")
				}
			case 11:
				// Release a held operation (or try one that is not held).
				ids := liveOps()
				if len(ids) == 0 {
					if p.Release("nope") {
						t.Fatal("Release of an unknown operation returned true")
					}
					continue
				}
				if rapid.IntRange(0, 3).Draw(t, "releaseAll") == 0 {
					// Every held operation, or all but some kept held.
					var keep func(scheduler.OperationID) bool
					kept := map[scheduler.OperationID]bool{}
					if rapid.Bool().Draw(t, "keepSome") {
						for _, id := range ids {
							kept[id] = rapid.Bool().Draw(t, "keep")
						}
						keep = func(id scheduler.OperationID) bool { return kept[id] }
					}
					want := 0
					for _, id := range ids {
						if m.ops[id].held && !kept[id] {
							want++
							m.ops[id].held = false
						}
					}
					if got := p.ReleaseAll(keep); got != want {
						t.Fatalf("ReleaseAll released %d, want %d", got, want)
					}
					continue
				}
				o := m.ops[ids[rapid.IntRange(0, len(ids)-1).Draw(t, "releaseOp")]]
				if o.held {
					if a, ok := p.StartNextWithin(o.spec.ID, "n0", res(100, 100, 1000)); ok {
						t.Fatalf("StartNextWithin started %v of held operation %s", a.Job, o.spec.ID)
					}
				}
				if got := p.Release(o.spec.ID); got != o.held {
					t.Fatalf("Release(%s) = %v, want %v", o.spec.ID, got, o.held)
				}
				o.held = false
			}
			checkState(t, p, m)
		}
	})
}

// checkSchedule checks one Schedule call against the model before it is
// applied: no job twice or already running, the free vector respected,
// every start within limits, and nothing left that fits when fewer than
// maxJobs started.
func checkSchedule(t *rapid.T, m *model, free scheduler.Resources, maxJobs int, got []Assignment) {
	remaining := floorVec(free)
	seen := map[JobKey]bool{}
	extraOp := map[scheduler.OperationID]vec{}
	extraPool := map[scheduler.PoolID]vec{}
	startedPerTask := map[JobKey]int{}
	for _, a := range got {
		if seen[a.Job] {
			t.Fatalf("job %v assigned twice in one call", a.Job)
		}
		seen[a.Job] = true
		o := m.ops[a.Job.Operation]
		if o == nil {
			t.Fatalf("job %v of an unknown operation", a.Job)
		}
		if o.held {
			t.Fatalf("job %v of held operation %s started", a.Job, o.spec.ID)
		}
		j := jobID{a.Job.Task, a.Job.Index}
		if o.running[j] != "" || o.done[j] {
			t.Fatalf("job %v is already running or done", a.Job)
		}
		r, _, _ := jobVec(o.spec.Tasks[a.Job.Task].JobResources)
		if !remaining.fits(r) {
			t.Fatalf("job %v (%v) exceeds the free resources left %v", a.Job, r, remaining)
		}
		if !m.allows(o, r, extraOp[o.spec.ID], extraPool) {
			t.Fatalf("job %v breaks a limit", a.Job)
		}
		remaining = remaining.sub(r)
		extraOp[o.spec.ID] = extraOp[o.spec.ID].add(r)
		for _, s := range m.chain(o.spec.Pool) {
			extraPool[s.Name] = extraPool[s.Name].add(r)
		}
		startedPerTask[JobKey{Operation: o.spec.ID, Task: a.Job.Task}]++
	}
	if maxJobs > 0 && len(got) >= maxJobs {
		return
	}
	for _, o := range m.ops {
		if o.held {
			continue
		}
		for ti, ts := range o.spec.Tasks {
			if m.pending(o, ti)-startedPerTask[JobKey{Operation: o.spec.ID, Task: ti}] <= 0 {
				continue
			}
			r, _, _ := jobVec(ts.JobResources)
			if remaining.fits(r) && m.allows(o, r, extraOp[o.spec.ID], extraPool) {
				t.Fatalf("Schedule stopped after %d of %d jobs but %s task %d (%v) fits %v", len(got), maxJobs, o.spec.ID, ti, r, remaining)
			}
		}
	}
}

// checkState recomputes usage, pending and the heaps from scratch and
// compares them with the Placement's incremental state.
func checkState(t *rapid.T, p *Placement, m *model) {
	wantPools := map[*element]*struct {
		usage, pending vec
		jobs           int
	}{}
	running := 0
	for _, o := range m.ops {
		e := p.ops[o.spec.ID]
		if e == nil {
			t.Fatalf("operation %s missing", o.spec.ID)
		}
		if p.Held(o.spec.ID) != o.held {
			t.Fatalf("Held(%s) = %v, want %v", o.spec.ID, !o.held, o.held)
		}
		var pend vec
		jobs := 0
		for ti, ts := range o.spec.Tasks {
			n := m.pending(o, ti)
			r, _, _ := jobVec(ts.JobResources)
			pend = pend.add(r.mul(int64(n)))
			jobs += n
			if got := e.op.tasks[ti].pending; got != n {
				t.Fatalf("%s task %d pending %d, want %d", o.spec.ID, ti, got, n)
			}
		}
		u := m.usage(o)
		if e.usage != u || e.pending != pend || e.pendingJobs != jobs {
			t.Fatalf("%s usage %v pending %v jobs %d, want %v %v %d", o.spec.ID, e.usage, e.pending, e.pendingJobs, u, pend, jobs)
		}
		if !limitVec(o.spec.ResourceLimits).fits(u) && !adoptedAny(o) && !o.relimited {
			t.Fatalf("%s usage %v above its limits", o.spec.ID, u)
		}
		running += len(o.running)
		var rj []RunningJob
		for j, node := range o.running {
			rj = append(rj, RunningJob{Key: JobKey{o.spec.ID, j.task, j.index}, Node: node, Resources: o.spec.Tasks[j.task].JobResources})
		}
		got := p.RunningJobs(o.spec.ID)
		if len(got) != len(rj) {
			t.Fatalf("%s RunningJobs %d, want %d", o.spec.ID, len(got), len(rj))
		}
		for i := range got {
			if i > 0 && got[i].Seq <= got[i-1].Seq {
				t.Fatalf("%s RunningJobs not oldest first", o.spec.ID)
			}
			if o.running[jobID{got[i].Key.Task, got[i].Key.Index}] != got[i].Node {
				t.Fatalf("%s RunningJobs has %v", o.spec.ID, got[i])
			}
		}
		for a := e.parent; a != nil; a = a.parent {
			w := wantPools[a]
			if w == nil {
				w = &struct {
					usage, pending vec
					jobs           int
				}{}
				wantPools[a] = w
			}
			w.usage, w.pending, w.jobs = w.usage.add(u), w.pending.add(pend), w.jobs+jobs
		}
	}
	if len(p.ops) != len(m.ops) || len(p.opList) != len(m.ops) {
		t.Fatalf("%d operations, want %d", len(p.ops), len(m.ops))
	}
	if p.running != running {
		t.Fatalf("running %d, want %d", p.running, running)
	}
	for _, e := range append([]*element{p.root}, p.poolList...) {
		w := wantPools[e]
		if w == nil {
			w = &struct {
				usage, pending vec
				jobs           int
			}{}
		}
		if e.usage != w.usage || e.pending != w.pending || e.pendingJobs != w.jobs {
			t.Fatalf("pool %s usage %v pending %v jobs %d, want %v %v %d", e.name, e.usage, e.pending, e.pendingJobs, w.usage, w.pending, w.jobs)
		}
		checkHeap(t, p, e)
	}
	for _, e := range p.opList {
		checkKey(t, p, e)
		if want := e.op.minActive(); e.minPending != want {
			t.Fatalf("%s minPending %v, want %v", e.name, e.minPending, want)
		}
	}
}

func adoptedAny(o *modelOp) bool {
	for _, n := range o.running {
		if n == "adopted" {
			return true
		}
	}
	return false
}

func checkKey(t *rapid.T, p *Placement, e *element) {
	sat, dom := e.sat, e.dom
	e.computeKey(&p.inv)
	if sat != e.sat || dom != e.dom {
		t.Fatalf("%s key (%g, %g) stale, fresh (%g, %g)", e.name, sat, dom, e.sat, e.dom)
	}
}

// checkHeap checks a pool's heap: order, positions, membership and
// minPending.
func checkHeap(t *rapid.T, p *Placement, pool *element) {
	checkKey(t, p, pool)
	for i, c := range pool.heap {
		if c.pos != i || c.parent != pool {
			t.Fatalf("pool %s heap[%d] = %s with pos %d", pool.name, i, c.name, c.pos)
		}
		if i > 0 && pool.less(i, (i-1)/2) {
			t.Fatalf("pool %s heap order broken at %d", pool.name, i)
		}
		if c.contrib != c.minPending {
			t.Fatalf("%s contributes %v but minPending is %v", c.name, c.contrib, c.minPending)
		}
		if !c.candidate() {
			t.Fatalf("%s is in the heap but not a candidate", c.name)
		}
	}
	children := []*element{}
	for _, e := range p.poolList {
		if e.parent == pool {
			children = append(children, e)
		}
	}
	for _, e := range p.opList {
		if e.parent == pool {
			children = append(children, e)
		}
	}
	want := unlimitedVec
	for _, c := range children {
		if c.candidate() != (c.pos >= 0) {
			t.Fatalf("%s candidate %v but pos %d", c.name, c.candidate(), c.pos)
		}
		if c.pos >= 0 {
			want = want.min(c.minPending)
		}
	}
	if pool.minPending != want {
		t.Fatalf("pool %s minPending %v, want %v", pool.name, pool.minPending, want)
	}
}

// bruteForceNext is the job Schedule should start next on free: walk from
// the root, sorting all children with pending jobs by the documented order
// and checking fit and limits directly, without heaps or pruning.
func bruteForceNext(p *Placement, free vec) *JobKey {
	var walk func(pool *element, free vec) *JobKey
	walk = func(pool *element, free vec) *JobKey {
		var kids []*element
		for _, e := range p.poolList {
			if e.parent == pool && e.pendingJobs > 0 {
				kids = append(kids, e)
			}
		}
		for _, e := range p.opList {
			if e.parent == pool && e.pendingJobs > 0 {
				kids = append(kids, e)
			}
		}
		sort.Slice(kids, func(i, j int) bool { return before(pool.mode, kids[i], kids[j]) })
		for _, c := range kids {
			cf := free.min(c.limit.sub(c.usage))
			if c.op != nil {
				if c.op.held {
					continue
				}
				for ti := range c.op.tasks {
					t := &c.op.tasks[ti]
					if t.pending > 0 && cf.fits(t.res) {
						idx := peek(t)
						return &JobKey{Operation: scheduler.OperationID(c.name), Task: ti, Index: idx}
					}
				}
				continue
			}
			if k := walk(c, cf); k != nil {
				return k
			}
		}
		return nil
	}
	return walk(p.root, free)
}

// peek is the index take would return, without taking it.
func peek(t *task) int {
	if len(t.retry) > 0 {
		return t.retry[0]
	}
	n := t.next
	for {
		if _, ok := t.skip[n]; !ok {
			return n
		}
		n++
	}
}
