package sim

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/placement"
	"github.com/sharetree/sharetree/scheduler/preemption"
)

// ErrSimulation wraps a failure of the simulated scheduler's code (an
// engine or placement error the file's checks did not foresee).
var ErrSimulation = errors.New("sim: simulation failed")

// simulator is one run's state.
type simulator struct {
	f   *scenario.SimFile
	t0  time.Time
	now time.Duration

	events eventHeap
	seq    uint64

	adm      *scheduler.Admission
	pl       *placement.Placement
	engine   scheduler.Engine
	state    scheduler.State
	res      *scheduler.Result
	spare    *scheduler.Result // the Result before res, updated into next
	starving []scheduler.OperationID
	settings *preemption.TreeSettings
	pools    []scheduler.PoolConfig

	nodes       []nodeState
	lastPreempt []time.Duration
	ops         []opState
	byID        map[scheduler.OperationID]int
	runs        map[placement.JobKey]*run
	keys        map[preemption.JobID]placement.JobKey // of the running jobs
	order       uint64
	keyBuf      []placement.JobKey
	jobBuf      []preemption.NodeJob
	out         *Result
	poolIndex   map[string]int
}

type nodeState struct {
	node scheduler.Node
	free scheduler.Resources
	jobs map[placement.JobKey]bool
	// graceful counts the running jobs of graceful operations.
	graceful int
}

// run is a job running on a node.
type run struct {
	id       preemption.JobID
	node     int
	res      scheduler.Resources
	start    time.Duration
	gen      uint64 // the end event's generation
	graceful bool   // of a graceful operation
}

type opState struct {
	spec      *scenario.SimOperation
	res       *OperationResult
	remaining int
	admitted  bool // in the placement
	finished  bool
}

// Run simulates f. It fails only when the scheduler's code refuses what
// the file's checks let through (ErrSimulation).
func Run(f *scenario.SimFile) (*Result, error) {
	s := &simulator{f: f, t0: time.Unix(0, 0).UTC(), byID: map[scheduler.OperationID]int{}, runs: map[placement.JobKey]*run{},
		keys: map[preemption.JobID]placement.JobKey{}, poolIndex: map[string]int{}}
	if err := s.init(); err != nil {
		return nil, err
	}
	for len(s.events) > 0 {
		ev := heap.Pop(&s.events).(event)
		if ev.at > f.Simulation.Duration {
			break
		}
		s.now = ev.at
		if err := s.handle(ev); err != nil {
			return nil, fmt.Errorf("%w: at %s: %w", ErrSimulation, s.now, err)
		}
	}
	s.now = f.Simulation.Duration
	for i := range s.ops {
		op := &s.ops[i]
		if op.res.Submitted && !op.finished && op.res.Refused == "" {
			op.res.State = "pending"
			if op.admitted {
				op.res.State = "running"
			}
		}
	}
	for _, r := range s.runs {
		s.out.Counts.UnfinishedJobTime += s.now - r.start
	}
	return s.out, nil
}

func (s *simulator) init() error {
	f := s.f
	s.out = &Result{Name: f.Name, Duration: f.Simulation.Duration, Total: f.Cluster.Total}
	for _, p := range f.Pools {
		s.pools = append(s.pools, p.Config)
	}
	var err error
	if s.adm, err = scheduler.NewAdmission(f.Tree, s.pools); err != nil {
		return fmt.Errorf("%w: %w", ErrSimulation, err)
	}
	if s.settings, err = preemption.NewTreeSettings(f.Tree, s.pools); err != nil {
		return fmt.Errorf("%w: %w", ErrSimulation, err)
	}
	s.pl = placement.New()
	specs := make([]placement.PoolSpec, 0, len(s.pools))
	s.out.Pools = append(s.out.Pools, PoolInfo{Name: scheduler.RootID})
	s.poolIndex[scheduler.RootID] = 0
	depth := map[scheduler.PoolID]int{"": 0}
	for _, p := range f.Pools {
		c := p.Config
		specs = append(specs, placement.PoolSpec{Name: c.Name, Parent: c.Parent, Mode: c.Mode, ResourceLimits: c.ResourceLimits})
		depth[c.Name] = depth[c.Parent] + 1
		parent := string(c.Parent)
		if parent == "" {
			parent = scheduler.RootID
		}
		s.poolIndex[string(c.Name)] = len(s.out.Pools)
		s.out.Pools = append(s.out.Pools, PoolInfo{Name: string(c.Name), Parent: parent, Depth: depth[c.Name],
			Integral: c.IntegralGuarantees.GuaranteeType != scheduler.GuaranteeNone})
		if p.AccumulatedResourceVolume != nil {
			if s.state.Pools == nil {
				s.state.Pools = map[scheduler.PoolID]scheduler.PoolState{}
			}
			s.state.Pools[c.Name] = scheduler.PoolState{AccumulatedVolume: *p.AccumulatedResourceVolume}
		}
	}
	if err := s.pl.SetPools(specs); err != nil {
		return fmt.Errorf("%w: %w", ErrSimulation, err)
	}
	for _, n := range f.Cluster.Nodes {
		s.nodes = append(s.nodes, nodeState{node: n, free: n.Resources, jobs: map[placement.JobKey]bool{}})
	}
	s.lastPreempt = make([]time.Duration, len(s.nodes))
	for i := range s.lastPreempt {
		s.lastPreempt[i] = -f.Tree.PreemptiveSchedulingBackoff
	}
	s.ops = make([]opState, len(f.Workload))
	s.out.Operations = make([]OperationResult, len(f.Workload))
	for i := range f.Workload {
		w := &f.Workload[i]
		jobs := 0
		for _, t := range w.Tasks {
			jobs += t.Jobs
		}
		s.out.Operations[i] = OperationResult{ID: string(w.ID), Pool: string(w.Pool), SubmitAt: w.SubmitAt, Jobs: jobs, State: "not submitted"}
		s.ops[i] = opState{spec: w, res: &s.out.Operations[i], remaining: jobs}
		s.byID[w.ID] = i
		s.push(event{at: w.SubmitAt, kind: evSubmit, op: i})
	}
	s.push(event{at: 0, kind: evUpdate})
	hb := f.Simulation.HeartbeatPeriod
	for i := range s.nodes {
		s.push(event{at: hb * time.Duration(i) / time.Duration(len(s.nodes)), kind: evPass, node: i})
	}
	s.push(event{at: 0, kind: evSample})
	return nil
}

func (s *simulator) push(ev event) {
	s.seq++
	ev.seq = s.seq
	heap.Push(&s.events, ev)
}

func (s *simulator) handle(ev event) error {
	switch ev.kind {
	case evJobEnd:
		return s.jobEnded(ev)
	case evSubmit:
		return s.submit(ev.op)
	case evUpdate:
		s.push(event{at: ev.at + s.f.Tree.FairShareUpdatePeriod, kind: evUpdate})
		return s.update()
	case evPass:
		s.push(event{at: ev.at + s.f.Simulation.HeartbeatPeriod, kind: evPass, node: ev.node})
		s.out.Counts.NodePasses++
		return s.pass(ev.node)
	case evSample:
		next := ev.at + s.f.Simulation.SamplePeriod
		if ev.at < s.f.Simulation.Duration && next > s.f.Simulation.Duration {
			next = s.f.Simulation.Duration // the last sample is at the end
		}
		s.push(event{at: next, kind: evSample})
		s.sample()
	}
	return nil
}

// submit admits an operation: it runs at once unless a pool's
// max_running_operation_count holds it, or is refused by a
// max_operation_count.
func (s *simulator) submit(i int) error {
	op := &s.ops[i]
	op.res.Submitted, op.res.State = true, "pending"
	st, err := s.adm.Admit(op.spec.ID, op.spec.Pool, scheduler.AdmitOptions{})
	if err != nil {
		var le *scheduler.LimitError
		if errors.As(err, &le) {
			op.res.State, op.res.Refused = "refused", le.Error()
			s.out.Counts.Refused++
			return nil
		}
		return err
	}
	if st == scheduler.AdmissionRunning {
		return s.admit(i)
	}
	return nil
}

// admit puts a running operation's jobs in the placement.
func (s *simulator) admit(i int) error {
	op := &s.ops[i]
	s.order++
	spec := placement.OperationSpec{ID: op.spec.ID, Pool: op.spec.Pool, Order: s.order}
	if op.spec.Weight != nil {
		spec.Weight = *op.spec.Weight
	}
	for _, t := range op.spec.Tasks {
		spec.Tasks = append(spec.Tasks, placement.TaskSpec{Name: t.Name, JobCount: t.Jobs, JobResources: t.Resources})
	}
	if err := s.pl.AddOperation(spec); err != nil {
		return err
	}
	op.admitted, op.res.State = true, "running"
	op.res.AdmittedAt = s.now
	return nil
}

// update runs the fair-share engine on the live state.
func (s *simulator) update() error {
	snap := &scheduler.Snapshot{Now: s.t0.Add(s.now), Cluster: s.f.Cluster, Tree: s.f.Tree, Pools: s.pools}
	for _, u := range s.pl.Operations() {
		op := &s.ops[s.byID[u.ID]]
		snap.Operations = append(snap.Operations, scheduler.Operation{ID: u.ID, Pool: u.Pool, Weight: op.spec.Weight,
			StartTime: s.t0.Add(op.spec.SubmitAt), Demand: u.Demand, Usage: u.Usage, JobResources: u.JobResources,
			PendingJobCount: u.PendingJobCount})
	}
	// Two Results, each updated in place in turn: only the latest is
	// read, and the one before holds the state the update continues from.
	next := s.spare
	if next == nil {
		next = new(scheduler.Result)
	}
	if err := s.engine.UpdateInto(next, snap, &s.state); err != nil {
		return err
	}
	s.spare, s.res = s.res, next
	res := s.res
	s.state = res.State
	s.pl.SetTotal(res.Total)
	s.pl.SetFairShares(res)
	s.starving = preemption.StarvingOperations(res)
	s.out.Counts.Updates++
	return nil
}

// pass is one node's heartbeat: graceful, preemptive and regular passes.
func (s *simulator) pass(i int) error {
	n := &s.nodes[i]
	if s.f.Simulation.Preemption && s.res != nil && (n.graceful > 0 || len(s.starving) > 0) {
		// No job is ever leaving: an interrupted job leaves at once, so
		// Interrupting stays empty (nil).
		src := &preemption.Source{Settings: s.settings, Result: s.res, Placement: s.pl, Starving: s.starving,
			Operation: s.settingsOf}
		node := preemption.Node{ID: n.node.ID, Total: n.node.Resources, Free: n.free}
		if n.graceful > 0 {
			v, err := src.GracefulView(node, s.nodeJobs(i))
			if err != nil {
				return err
			}
			interrupts, err := preemption.Graceful(v)
			if err != nil {
				return err
			}
			for _, g := range interrupts {
				s.interrupt(s.keys[g.Job])
				s.out.Counts.GracefulInterrupts++
			}
		}
		if len(s.starving) > 0 && s.now-s.lastPreempt[i] >= s.f.Tree.PreemptiveSchedulingBackoff {
			s.lastPreempt[i] = s.now
			node.Free = n.free
			v, err := src.PreemptionView(node, s.nodeJobs(i))
			if err != nil {
				return err
			}
			plan, err := preemption.Preempt(v)
			if err != nil {
				return err
			}
			for _, d := range plan.Decisions {
				for _, victim := range d.Victims {
					s.interrupt(s.keys[victim.Job])
					s.out.Counts.Preemptions++
				}
				if a, ok := s.pl.StartNextWithin(d.Operation, n.node.ID, n.free); ok {
					s.start(a, i)
				}
			}
		}
	}
	for _, a := range s.pl.Schedule(n.node.ID, n.free, 0) {
		s.start(a, i)
	}
	// The placement starts a job only where it fits (its amounts are
	// rounded so that it never over-commits): a node over its resources
	// is a bug, not a result.
	for r, free := range n.free {
		if free < -1e-6*max(1, n.node.Resources[r]) {
			return fmt.Errorf("node %s over-committed: %s free %g", n.node.ID, scheduler.ResourceType(r), free)
		}
	}
	return nil
}

func (s *simulator) settingsOf(id scheduler.OperationID) preemption.OperationSettings {
	if k, ok := s.byID[id]; ok && s.ops[k].spec.Graceful {
		return preemption.OperationSettings{Mode: preemption.ModeGraceful}
	}
	return preemption.OperationSettings{}
}

// nodeJobs lists a node's running jobs in key order (in a buffer reused
// by the next call).
func (s *simulator) nodeJobs(i int) []preemption.NodeJob {
	s.keyBuf = s.keyBuf[:0]
	for k := range s.nodes[i].jobs {
		s.keyBuf = append(s.keyBuf, k)
	}
	slices.SortFunc(s.keyBuf, compareKeys)
	out := s.jobBuf[:0]
	for _, k := range s.keyBuf {
		r := s.runs[k]
		out = append(out, preemption.NodeJob{ID: r.id, Key: k, Resources: r.res})
	}
	s.jobBuf = out
	return out
}

func compareKeys(a, b placement.JobKey) int {
	return cmp.Or(cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.Task, b.Task), cmp.Compare(a.Index, b.Index))
}

// jobID names a job for the preemption package: "<operation>/<task>/<index>".
func jobID(k placement.JobKey) preemption.JobID {
	return preemption.JobID(fmt.Sprintf("%s/%d/%d", k.Operation, k.Task, k.Index))
}

// start runs an assigned job on node i until its task's duration ends.
func (s *simulator) start(a placement.Assignment, i int) {
	op := &s.ops[s.byID[a.Job.Operation]]
	d := op.spec.Tasks[a.Job.Task].Duration
	s.seq++
	r := &run{id: jobID(a.Job), node: i, res: a.Resources, start: s.now, gen: s.seq, graceful: op.spec.Graceful}
	s.runs[a.Job] = r
	s.keys[r.id] = a.Job
	n := &s.nodes[i]
	n.jobs[a.Job] = true
	if r.graceful {
		n.graceful++
	}
	n.free = n.free.Sub(a.Resources)
	heap.Push(&s.events, event{at: s.now + d, kind: evJobEnd, job: a.Job, gen: r.gen, seq: s.seq})
	if !op.res.Started {
		op.res.Started, op.res.StartAt = true, s.now
	}
	s.out.Counts.JobStarts++
}

// leave takes a running job off its node.
func (s *simulator) leave(k placement.JobKey) *run {
	r := s.runs[k]
	if r == nil {
		return nil
	}
	delete(s.runs, k)
	delete(s.keys, r.id)
	n := &s.nodes[r.node]
	delete(n.jobs, k)
	if r.graceful {
		n.graceful--
	}
	n.free = n.free.Add(r.res)
	return r
}

// interrupt ends a running job early: its work goes back to pending.
func (s *simulator) interrupt(k placement.JobKey) {
	r := s.leave(k)
	if r == nil {
		return
	}
	s.pl.JobFinished(k, true)
	op := &s.ops[s.byID[k.Operation]]
	op.res.Interrupted++
	op.res.LostJobTime += s.now - r.start
	s.out.Counts.LostJobTime += s.now - r.start
}

func (s *simulator) jobEnded(ev event) error {
	if r := s.runs[ev.job]; r == nil || r.gen != ev.gen {
		return nil // interrupted since
	}
	s.leave(ev.job)
	s.pl.JobFinished(ev.job, false)
	s.out.Counts.JobCompletions++
	op := &s.ops[s.byID[ev.job.Operation]]
	op.res.Completed++
	op.remaining--
	if op.remaining > 0 {
		return nil
	}
	op.finished, op.res.Finished, op.res.FinishAt, op.res.State = true, true, s.now, "completed"
	s.pl.RemoveOperation(op.spec.ID)
	promoted, err := s.adm.Remove(op.spec.ID)
	if err != nil {
		return err
	}
	for _, id := range promoted {
		if err := s.admit(s.byID[id]); err != nil {
			return err
		}
	}
	return nil
}

// sample records every pool's state from the latest update and the
// admission's counts.
func (s *simulator) sample() {
	sm := Sample{At: s.now, Pools: make([]PoolSample, len(s.out.Pools))}
	for k, p := range s.out.Pools {
		ps := &sm.Pools[k]
		id := scheduler.PoolID(p.Name)
		c := s.adm.PoolCounts(id)
		ps.RunningOperations, ps.WaitingOperations = c.Running+c.LightweightRunning, c.Operations-c.Running-c.LightweightRunning
		if p.Name == scheduler.RootID {
			ps.Usage = s.pl.Stats().Usage
		} else if u, ok := s.pl.PoolUsage(id); ok {
			ps.Usage = u
		}
		if s.res == nil {
			continue
		}
		e, ok := s.res.Element(p.Name)
		if !ok {
			continue
		}
		ps.Demand, ps.Starvation = e.ResourceDemand, e.StarvationStatus
		for r := range ps.FairShare {
			ps.FairShare[r] = e.FairShare.Total[r] * s.res.Total[r]
		}
		if e.Integral != nil {
			ps.Volume = e.Integral.AccumulatedResourceVolume
		}
	}
	s.out.Samples = append(s.out.Samples, sm)
}
