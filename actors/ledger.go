package actors

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/placement"
	"github.com/sharetree/sharetree/scheduler/preemption"
)

// ledgerOp is what the ledger keeps about a running operation besides its
// placement state.
type ledgerOp struct {
	spec *pb.OperationSpec // immutable
	pid  *actor.PID
	// attempts holds the attempt of each job that was retried or adopted
	// (sparse): the next one to start, or the running one's. A job not in
	// it is at attempt 0 of this scheduler's epoch.
	attempts map[placement.JobKey]attemptOf
	// claims is set when the operation also runs in other trees.
	claims *claimView
}

// attemptOf is a job's attempt number and the leader epoch of the
// scheduler that started it (see jobRef).
type attemptOf struct {
	n     int
	epoch uint64
}

// currentAttempt returns job key's attempt (see ledgerOp.attempts).
func (l *Ledger) currentAttempt(op *ledgerOp, key placement.JobKey) attemptOf {
	if a, ok := op.attempts[key]; ok {
		return a
	}
	return attemptOf{epoch: l.epoch}
}

// setAttempt records job key's attempt.
func (op *ledgerOp) setAttempt(key placement.JobKey, a attemptOf) {
	if op.attempts == nil {
		op.attempts = map[placement.JobKey]attemptOf{}
	}
	op.attempts[key] = a
}

// startedJob is one job a scheduling pass started.
type startedJob struct {
	ref  jobRef
	spec *pb.JobSpec
	op   *actor.PID
	res  scheduler.Resources
	// claims: the operation also runs in other trees.
	claims *claimView
}

// Ledger is one tree's placement state shared by the tree actor and the node
// actors: the scheduler/placement structure, the running operations' specs,
// the online nodes and the latest fair-share result. Every method takes the
// mutex for a short, non-blocking critical section.
type Ledger struct {
	tree string
	// epoch is the scheduler's leader epoch, part of the ids of the jobs
	// it starts (see jobRef).
	epoch uint64
	// now is Config.Now; it times how long the fair-share update holds mu.
	now   func() time.Time
	mu    sync.Mutex
	p     *placement.Placement
	ops   map[scheduler.OperationID]*ledgerOp
	nodes map[scheduler.NodeID]scheduler.Node
	// results holds the latest fair-share Result (see results.go).
	results results
	// fair is setResult's buffer (only the tree actor uses it).
	fair placement.FairShares
	// pre is the preemption state (settings, jobs being interrupted,
	// backoff, rate limit).
	pre preemptState
	// revival is a restarted scheduler's wait for its nodes' jobs (nil:
	// none; see adopt.go). The placement holds the revived operations
	// while held, which the first pass after the wait clears.
	revival *revival
	held    bool
	// unstored are the operations this tree admitted whose first status
	// write is not acknowledged yet: the placement holds them (no job
	// starts for an operation its submitter may be told does not exist)
	// until markStored.
	unstored map[scheduler.OperationID]bool
	// unsettled are the operations that finished (they left ops) and
	// whose final status is not stored yet: their completions still need
	// the journal (see nodeActor.awaited).
	unsettled map[scheduler.OperationID]bool
}

// newLedger makes a tree's ledger for the scheduler of leader epoch epoch;
// rv is a restarted scheduler's revival, during which it holds its
// revived operations (nil: it holds none).
func newLedger(tree string, cfg *Config, epoch uint64, rv *revival) *Ledger {
	return &Ledger{
		tree:    tree,
		epoch:   epoch,
		now:     cfg.Now,
		p:       placement.New(),
		ops:     map[scheduler.OperationID]*ledgerOp{},
		nodes:   map[scheduler.NodeID]scheduler.Node{},
		pre:     newPreemptState(cfg),
		revival: rv,
		held:    rv != nil,
	}
}

// setTree rebuilds the pool structure and the preemption settings for a
// tree configuration; nothing changes on error.
func (l *Ledger) setTree(cfg scheduler.TreeConfig, pools []scheduler.PoolConfig) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	settings, err := preemption.NewTreeSettings(cfg, pools)
	if err != nil {
		return err
	}
	if err := l.p.SetPools(placementPools(pools)); err != nil {
		return err
	}
	l.pre.settings, l.pre.tree = settings, cfg
	return nil
}

// addOperation starts scheduling an operation's jobs, but for those in
// done (completed before a restart).
func (l *Ledger) addOperation(spec placement.OperationSpec, pbSpec *pb.OperationSpec, pid *actor.PID, done []placement.JobKey) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	spec.Held = spec.Held || l.unstored[spec.ID]
	if err := l.p.AddOperation(spec); err != nil {
		return err
	}
	for _, k := range done {
		l.p.Forget(k)
	}
	lop := &ledgerOp{spec: pbSpec, pid: pid}
	if v, ok := spec.Claims.(claimView); ok {
		lop.claims = &v
		// Jobs other trees claimed before this tree ran the operation
		// (it was pending here) are not this tree's demand.
		v.eachClaimed(func(task, index int) {
			l.p.Forget(placement.JobKey{Operation: spec.ID, Task: task, Index: index})
		})
	}
	l.ops[spec.ID] = lop
	if l.graceful(spec.ID) {
		l.pre.graceful++
	}
	return nil
}

// removeOperation stops scheduling an operation; the node actors abort its
// jobs when they see it gone.
func (l *Ledger) removeOperation(id scheduler.OperationID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.p.RemoveOperation(id)
	if l.graceful(id) {
		l.pre.graceful--
	}
	delete(l.ops, id)
	delete(l.unstored, id)
	l.pre.forgetOperation(id)
	l.pre.forgetReservations(id)
}

// markUnstored notes an operation admitted before its first status write
// (see unstored).
func (l *Ledger) markUnstored(id scheduler.OperationID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.unstored == nil {
		l.unstored = map[scheduler.OperationID]bool{}
	}
	l.unstored[id] = true
}

// markStored lets an operation whose first status write was acknowledged
// start jobs. (Only fresh operations are unstored, and the revival window
// holds revived ones only.)
func (l *Ledger) markStored(id scheduler.OperationID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.unstored[id] {
		return
	}
	delete(l.unstored, id)
	l.p.Release(id)
}

// forgetUnstored drops an operation this tree did not run after all.
func (l *Ledger) forgetUnstored(id scheduler.OperationID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.unstored, id)
}

// finishing is a job leaving its node: its usage is released, and unless it
// completed it goes back to pending with its attempt counter raised.
type finishing struct {
	ref     jobRef
	requeue bool
}

// pass is one heartbeat's work on the ledger under a single lock: release
// the jobs that left the node, tell which of the operations in check are no
// longer scheduled, run the node's scheduling pass on free, then graceful
// preemption and preemption for starving operations.
func (l *Ledger) pass(m *passRequest) *passResult {
	res := l.passLocked(m)
	forgetShared(res.started)
	return res
}

// forgetShared drops the started jobs of operations shared with other
// trees from those trees' pending jobs, one batch per operation. It runs
// outside this ledger's lock, so that two ledgers never wait for each
// other.
func forgetShared(started []startedJob) {
	for i, s := range started {
		if s.claims == nil || slices.ContainsFunc(started[:i], func(p startedJob) bool { return p.claims == s.claims }) {
			continue
		}
		var batch []placement.JobKey
		for _, t := range started[i:] {
			if t.claims == s.claims {
				batch = append(batch, t.ref.key)
			}
		}
		s.claims.forgetElsewhere(batch)
	}
}

// forget drops jobs another tree claimed from this tree's pending jobs.
func (l *Ledger) forget(keys []placement.JobKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		l.p.Forget(k)
	}
}

func (l *Ledger) passLocked(m *passRequest) *passResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.releaseHeldLocked(m.now)
	l.releaseLocked(m.done)
	res := &passResult{round: m.round, ledger: l, gone: make([]bool, len(m.check))}
	for i, id := range m.check {
		_, ok := l.ops[id]
		res.gone[i] = !ok
	}
	if _, online := l.nodes[m.node]; !online || m.hold {
		return res
	}
	// Reserved jobs first (see reserve.go), then the regular pass on what
	// the remaining reservations leave.
	as, free, held := l.serveReservationsLocked(m.node, m.free, m.now)
	reserved, maxJobs := len(as), m.maxJobs
	if maxJobs > 0 {
		maxJobs = max(maxJobs-reserved, 0)
	}
	if m.maxJobs <= 0 || maxJobs > 0 {
		as = l.p.ScheduleAppend(as, m.node, minusHeld(free, held), maxJobs)
	}
	for _, a := range as[reserved:] {
		free = free.Sub(a.Resources)
	}
	res.started = l.startedJobs(as)
	res.interrupts = l.preemptLocked(m.node, m.total, free, held, m.jobs, m.now)
	return res
}

// release releases jobs that left a node outside a heartbeat (the node
// restarted or was lost).
func (l *Ledger) release(done []finishing) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.releaseLocked(done)
}

func (l *Ledger) releaseLocked(done []finishing) {
	for _, d := range done {
		l.pre.left(d.ref.key)
		if !l.p.JobFinished(d.ref.key, d.requeue) || !d.requeue {
			continue
		}
		if op := l.ops[d.ref.key.Operation]; op != nil {
			op.setAttempt(d.ref.key, attemptOf{n: d.ref.attempt + 1, epoch: l.epoch})
		}
	}
}

// startedJobs turns a pass's assignments into the jobs to start.
func (l *Ledger) startedJobs(as []placement.Assignment) []startedJob {
	if len(as) == 0 {
		return nil
	}
	out := make([]startedJob, 0, len(as))
	for _, a := range as {
		op := l.ops[a.Job.Operation]
		// A new attempt: this scheduler's (an adopted job's attempt, of
		// an earlier scheduler, is recorded only while it runs).
		ref := jobRef{key: a.Job, attempt: l.currentAttempt(op, a.Job).n, epoch: l.epoch}
		task := op.spec.GetTasks()[a.Job.Task]
		js := &pb.JobSpec{
			JobId:              ref.String(),
			OperationId:        string(a.Job.Operation),
			TaskName:           task.GetName(),
			JobIndex:           int32(a.Job.Index),
			Attempt:            int32(ref.attempt),
			Resources:          task.GetJobResources(),
			InterruptionSignal: op.spec.GetInterruptionSignal(),
		}
		switch r := task.GetRun().(type) {
		case *pb.TaskSpec_Command:
			js.Run = &pb.JobSpec_Command{Command: r.Command}
		case *pb.TaskSpec_SimulatedDuration:
			js.Run = &pb.JobSpec_SimulatedDuration{SimulatedDuration: r.SimulatedDuration}
		}
		out = append(out, startedJob{ref: ref, spec: js, op: op.pid, res: a.Resources, claims: op.claims})
	}
	return out
}

// setNode records an online node's resources and tags.
func (l *Ledger) setNode(n scheduler.Node) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nodes[n.ID] = n
}

// removeNode takes a node offline.
func (l *Ledger) removeNode(id scheduler.NodeID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.nodes, id)
	delete(l.pre.reserved, id)
}

// fitsSomeNode reports whether a job of res fits on some online node; known
// is false when no node is online (nothing can be judged).
func (l *Ledger) fitsSomeNode(res scheduler.Resources) (fits, known bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.nodes {
		if n.Resources.Dominates(res) {
			return true, true
		}
	}
	return false, len(l.nodes) > 0
}

// snapshot returns the running operations' usage, brought up to date in
// the caller's copy (kept from one update to the next: under the mutex it
// only collects the operations that changed since the last snapshot), the
// online nodes sorted by id, and how long it held the mutex. The usage is
// valid until the next snapshot with the same copy.
func (l *Ledger) snapshot(usage *placement.OperationsCopy) ([]placement.OperationUsage, []scheduler.Node, time.Duration) {
	l.mu.Lock()
	start := l.now()
	l.p.CollectOperations(usage)
	nodes := make([]scheduler.Node, 0, len(l.nodes))
	for _, n := range l.nodes {
		nodes = append(nodes, n)
	}
	held := l.now().Sub(start)
	l.mu.Unlock()
	// Merged and sorted outside the lock: the placer waits for nothing but
	// the collection.
	ops := usage.Operations()
	slices.SortFunc(nodes, func(a, b scheduler.Node) int { return strings.Compare(string(a.ID), string(b.ID)) })
	return ops, nodes, held
}

// setResult publishes a fair-share result to the scheduling passes and
// returns how long it held the mutex.
func (l *Ledger) setResult(res *scheduler.Result) time.Duration {
	starving := preemption.StarvingOperations(res) // outside the lock
	// The lookups and the comparisons with the current fair shares too:
	// only the tree actor, which calls setResult, adds or removes the
	// placement's pools and operations or sets their weights and fair
	// shares (addOperation, removeOperation, setTree, updateOperation and
	// setResult itself); the scheduling passes only read them.
	// ApplyFairShares resolves again if they changed meanwhile, and under
	// the mutex sets only the fair shares that changed.
	l.p.ResolveFairShares(res, &l.fair)
	l.mu.Lock()
	start := l.now()
	l.p.SetTotal(res.Total)
	l.p.ApplyFairShares(&l.fair)
	l.pre.starving = l.notHeld(starving)
	// Published under the mutex: a scheduling pass reads the latest
	// Result while it holds the mutex, and the one it reads is recycled
	// only by a later publish (see results.go).
	l.results.publish(res)
	held := l.now().Sub(start)
	l.mu.Unlock()
	return held
}

// runningRef is a running job with its attempt and node.
type runningRef struct {
	ref  jobRef
	node scheduler.NodeID
}

// runningJobRefs returns an operation's running jobs with their attempts.
func (l *Ledger) runningJobRefs(id scheduler.OperationID) []runningRef {
	l.mu.Lock()
	defer l.mu.Unlock()
	op := l.ops[id]
	var out []runningRef
	for _, j := range l.p.RunningJobs(id) {
		r := jobRef{key: j.Key, epoch: l.epoch}
		if op != nil {
			a := l.currentAttempt(op, j.Key)
			r.attempt, r.epoch = a.n, a.epoch
		}
		out = append(out, runningRef{ref: r, node: j.Node})
	}
	return out
}

// updateOperation changes a scheduled operation's weight and limits.
func (l *Ledger) updateOperation(id scheduler.OperationID, weight float64, limits scheduler.PartialResources) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.p.UpdateOperation(id, weight, limits)
}

// moveOperation moves a scheduled operation to another pool.
func (l *Ledger) moveOperation(id scheduler.OperationID, pool scheduler.PoolID) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.p.MoveOperation(id, pool)
}

// markUnsettled records that an operation finishes: until markSettled,
// its final status is not stored.
func (l *Ledger) markUnsettled(id scheduler.OperationID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.unsettled == nil {
		l.unsettled = map[scheduler.OperationID]bool{}
	}
	l.unsettled[id] = true
}

// markSettled records that a finished operation's final status is stored.
func (l *Ledger) markSettled(id scheduler.OperationID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.unsettled, id)
}

// needsCompletions reports whether an operation still needs its
// completions stored: it is scheduled, or finished without its final
// status stored yet.
func (l *Ledger) needsCompletions(id scheduler.OperationID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.ops[id]
	return ok || l.unsettled[id]
}

// hasOperation reports whether an operation is still scheduled.
func (l *Ledger) hasOperation(id scheduler.OperationID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.ops[id]
	return ok
}
