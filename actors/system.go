package actors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"golang.org/x/time/rate"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// ErrTrees is wrapped when the tree configuration cannot run.
var ErrTrees = errors.New("actors: invalid trees")

// System is a running scheduler: the actor system, the root, the trees and
// the node router. Its methods are what the NATS boundary calls; they only
// send messages and never block (ApplyTrees waits for its answer).
type System struct {
	cfg    Config
	deps   Deps
	as     *actor.ActorSystem
	guard  actor.PropsOption
	root   *actor.PID
	router *nodeRouter
	// passes counts the heartbeats in their scheduling pass, shed those
	// shed for it (see Config.MaxHeartbeatPasses).
	passes atomic.Int64
	shed   atomic.Uint64
	// dir is the tree directory node actors resolve their tree from; the
	// root publishes a new one when trees change.
	dir       atomic.Pointer[treeDirectory]
	fatal     chan error
	fatalOnce sync.Once
	// writers are the trees' state writers, of removed trees too while
	// their last write runs (Stop waits for each to end).
	writersMu sync.Mutex
	writers   []*stateWriter
	stop      chan struct{}
	done      chan struct{}
	// revival is the wait for the nodes' jobs before the revived
	// operations start jobs again (nil when none was revived unfinished;
	// see Config.JobRevivalTimeout and revival).
	revival *revival
	// roster keeps the nodes that may run jobs (nil without Deps.Roster).
	roster *roster
	// progressWrites paces the operations' writes of their completed jobs
	// (Config.ProgressWriteRate).
	progressWrites *rate.Limiter
	// journal writes completions before their finish is acknowledged (nil
	// without Deps.Journal).
	journal *journalWriter
}

// checkTrees validates a set of trees and its default tree.
func checkTrees(trees []TreeSpec, defaultTree string) error {
	if len(trees) == 0 {
		return fmt.Errorf("%w: no trees", ErrTrees)
	}
	seen := map[string]bool{}
	for _, t := range trees {
		if seen[t.Name] {
			return fmt.Errorf("%w: tree %q defined twice", ErrTrees, t.Name)
		}
		seen[t.Name] = true
		if err := t.Config.Validate(); err != nil {
			return fmt.Errorf("%w: tree %s: %w", ErrTrees, t.Name, err)
		}
		if _, err := scheduler.NewAdmission(t.Config, t.Pools); err != nil {
			return fmt.Errorf("%w: tree %s: %w", ErrTrees, t.Name, err)
		}
	}
	if !seen[defaultTree] {
		return fmt.Errorf("%w: default tree %q is not defined", ErrTrees, defaultTree)
	}
	return nil
}

// Start validates the trees and starts the actors. revived are the
// operations found in the store (nil on a fresh cluster).
func Start(cfg Config, deps Deps, trees []TreeSpec, defaultTree string, revived []*pb.OperationStatus) (*System, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if deps.Events == nil || deps.Signals == nil || deps.Store == nil {
		return nil, fmt.Errorf("%w: Deps needs Events, Signals and Store", ErrConfig)
	}
	if err := checkTrees(trees, defaultTree); err != nil {
		return nil, err
	}
	s := &System{cfg: cfg, deps: deps, fatal: make(chan error, 1), stop: make(chan struct{}), done: make(chan struct{}),
		progressWrites: rate.NewLimiter(rate.Limit(cfg.ProgressWriteRate), int(max(1, cfg.ProgressWriteRate)))}
	var loaded []string
	if deps.Roster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), max(cfg.RequestTimeout, time.Minute))
		var err error
		loaded, err = deps.Roster.Load(ctx)
		cancel()
		if err != nil {
			// Safe: every node is added again as it is heard from, and
			// the revival waits out its whole timeout.
			cfg.Logger.Warn("node roster not loaded: revived operations wait the whole job revival timeout", "err", err)
			loaded = nil
		}
		s.roster = newRoster(deps.Roster, &s.cfg, loaded, cfg.Now())
	}
	unfinished := map[scheduler.OperationID]bool{}
	for _, st := range revived {
		if !terminalState(st.GetState()) {
			unfinished[scheduler.OperationID(st.GetId())] = true
		}
	}
	if cfg.JobRevivalTimeout > 0 && len(unfinished) > 0 {
		s.revival = newRevival(cfg.Now(), cfg.JobRevivalTimeout, unfinished, loaded, cfg.Logger)
		cfg.Logger.Info("revived operations wait for the nodes to report their jobs", "until", s.revival.until, "roster_nodes", len(loaded))
	}
	var found []JournalBatch
	var owed map[string]bool
	if deps.Journal != nil {
		ctx, cancel := context.WithTimeout(context.Background(), max(cfg.RequestTimeout, time.Minute))
		var err error
		found, err = deps.Journal.Load(ctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("load the completions journal: %w", err)
		}
		revived, owed = mergeJournal(revived, found, cfg.Logger)
	}
	c := &s.cfg
	s.as = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return c.Logger.With("component", "protoactor")
	}))
	fatal := &fatalSupervision{fail: s.failFatal} // a pointer: guardians are kept by strategy, as map keys
	s.guard = actor.WithGuardian(fatal)
	refs := map[string]*treeRef{}
	dir := &treeDirectory{}
	for _, t := range trees {
		ref, err := s.spawnTree(t)
		if err != nil {
			return nil, err
		}
		refs[t.Name] = ref
		dir.trees = append(dir.trees, ref.nodeTree())
	}
	s.dir.Store(dir)
	s.router = &nodeRouter{root: s.as.Root, nodes: map[string]*routedNode{}, base: c.Now()}
	s.router.props = func(id string, live *nodeLiveness) *actor.Props {
		return actor.PropsFromProducer(newNodeActor(c, deps, id, live, &s.passes, s.dir.Load, s.router.wentOffline, s.router.lostNode, s.revival, s.roster), s.guard, lockFree, workers)
	}
	if deps.Journal != nil {
		s.journal = newJournalWriter(deps.Journal, s.as.Root, c, found, owed)
		s.journal.start()
	}
	// The operation actors are the root's children: a panic in one is
	// fatal too (the default supervision would restart it from its
	// producer, its state wiped, and its next write would store that).
	root, err := s.as.Root.SpawnNamed(actor.PropsFromProducer(newRootActor(c, deps, s, refs, defaultTree, revived), s.guard, actor.WithSupervisor(fatal)), "root")
	if err != nil {
		if s.journal != nil {
			s.journal.close()
		}
		return nil, fmt.Errorf("spawn root: %w", err)
	}
	s.root = root
	go s.monitorNodes()
	return s, nil
}

// lockFree gives an actor a lock-free mailbox. The default mailbox's queue
// takes a mutex on every send: thousands of node actors sending to their
// tree's placer queued on it (a convoy: ≈ 0.45 goroutines waiting on average
// in an execution trace at 5,000 heartbeats/s). Node actors get it too: it is
// cheaper to allocate, and they are thousands.
var lockFree = actor.WithMailbox(actor.UnboundedLockfree())

// workers runs node actors and placers on long-lived
// goroutines (see workerPool); 300 messages per activation is protoactor's
// default throughput.
var workers = actor.WithDispatcher(newWorkerPool(300, 256, 10*time.Second))

// inline runs an actor's messages on the sender's goroutine when its
// mailbox is idle (a busy mailbox is drained by whoever runs it) instead of
// starting a goroutine per activation. Operation actors get it: at 5,000
// heartbeats/s the node actors send them ≈ 27,000 short messages a second
// (a counter to raise or lower), and each started a goroutine that queued
// in the Go scheduler's run queues ahead of the heartbeats' goroutines.
var inline = actor.WithDispatcher(actor.NewSynchronizedDispatcher(1 << 20))

// spawnTree starts a tree's actor and placer around a new ledger.
func (s *System) spawnTree(spec TreeSpec) (*treeRef, error) {
	ref := &treeRef{ledger: newLedger(spec.Name, &s.cfg, s.deps.Epoch, s.revival)}
	ref.setSpec(spec)
	s.writersMu.Lock()
	// (Writers of removed trees that finished are dropped; one that has
	// not, for a tree of this name, is still deleting its state: the new
	// writer waits for it.)
	s.writers = slices.DeleteFunc(s.writers, (*stateWriter).ended)
	var after <-chan struct{}
	for _, prev := range s.writers {
		if prev.tree == spec.Name {
			after = prev.done
		}
	}
	w := newStateWriter(s.deps.State, spec.Name, s.cfg.RequestTimeout, s.cfg.Logger, after)
	s.writers = append(s.writers, w)
	s.writersMu.Unlock()
	pid, err := s.as.Root.SpawnNamed(actor.PropsFromProducer(newTreeActor(&s.cfg, s.deps, spec, ref.ledger, w), s.guard), "tree:"+spec.Name)
	if err != nil {
		w.close(nil)
		return nil, fmt.Errorf("spawn tree %s: %w", spec.Name, err)
	}
	ref.pid, ref.writer = pid, w
	placer, err := s.as.Root.SpawnNamed(actor.PropsFromProducer(newPlacerActor(ref.ledger), s.guard, lockFree, workers), "placer:"+spec.Name)
	if err != nil {
		s.as.Root.Stop(pid) // spawnTree runs in the root actor: no waiting
		return nil, fmt.Errorf("spawn placer %s: %w", spec.Name, err)
	}
	ref.placer = placer
	return ref, nil
}

// stopTree stops a removed tree's actors; its stored state is deleted once
// its last write ended (see stateWriter.remove).
func (s *System) stopTree(ref *treeRef) {
	ref.writer.remove()
	s.as.Root.Stop(ref.pid)
	s.as.Root.Stop(ref.placer)
}

func poolSet(pools []scheduler.PoolConfig) map[scheduler.PoolID]bool {
	out := make(map[scheduler.PoolID]bool, len(pools))
	for _, p := range pools {
		out[p.Name] = true
	}
	return out
}

func (s *System) failFatal(err error) {
	s.cfg.Logger.Error("fatal actor failure", "err", err)
	s.fatalOnce.Do(func() { s.fatal <- err })
}

// Fatal delivers the first actor panic: the scheduler's state may be
// inconsistent, so the process should stop (and revive from the store).
func (s *System) Fatal() <-chan error { return s.fatal }

// monitorNodes sends a liveness check, once a second, to every node actor
// that has been silent for NodeOfflineTimeout or waits for its placer for
// longer than RequestTimeout (nodeRouter.due).
func (s *System) monitorNodes() {
	defer close(s.done)
	period := min(time.Second, s.cfg.NodeOfflineTimeout/4)
	t := time.NewTicker(period)
	defer t.Stop()
	revivalOver := false
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			now := s.cfg.Now()
			for _, pid := range s.router.due(now, s.cfg.NodeOfflineTimeout, s.cfg.RequestTimeout) {
				s.as.Root.Send(pid, &nodeCheck{})
			}
			s.roster.sweep(now)
			if s.revival != nil && !revivalOver && !s.revival.active(now) {
				revivalOver = true
				if late := s.revival.unreported(); len(late) > 0 {
					s.cfg.Logger.Warn("job revival timed out before these nodes of the roster reported their jobs; the jobs they still run are aborted when they do",
						"nodes", late[:min(len(late), 20)], "count", len(late))
				}
			}
		}
	}
}

// Submit sends a submission to the root.
func (s *System) Submit(m *SubmitOperation) { s.as.Root.Send(s.root, m) }

// Get sends a status request to the root.
func (s *System) Get(m *GetOperation) { s.as.Root.Send(s.root, m) }

// List sends a listing request to the root.
func (s *System) List(m *ListOperations) { s.as.Root.Send(s.root, m) }

// Update sends a runtime-parameter update to the root.
func (s *System) Update(m *UpdateOperation) { s.as.Root.Send(s.root, m) }

// Abort sends an abort to the root.
func (s *System) Abort(m *AbortOperation) { s.as.Root.Send(s.root, m) }

// Heartbeat routes a heartbeat to its node actor.
func (s *System) Heartbeat(m *NodeHeartbeat) {
	if limit := s.cfg.MaxHeartbeatPasses; limit > 0 {
		if passes := s.passes.Load(); passes >= int64(limit) {
			s.shed.Add(1)
			s.router.shed(m.Heartbeat.GetNodeId(), s.cfg.Now())
			m.Reply(nil, pbErr(pb.ErrorCode_ERROR_CODE_UNAVAILABLE, "",
				"throttled: %d heartbeats are in their scheduling pass (at most %d); the node stays alive, send the heartbeat again after the period",
				passes, limit))
			return
		}
	}
	if !s.router.route(m.Heartbeat.GetNodeId(), m) {
		m.Reply(nil, pbErr(pb.ErrorCode_ERROR_CODE_UNAVAILABLE, "",
			"node %s was declared lost a moment ago and its session is still ending; send the heartbeat again after the period", m.Heartbeat.GetNodeId()))
	}
}

// HeartbeatLoad is the heartbeats' load: how many are in their scheduling
// pass now, and how many were shed since the start (see
// Config.MaxHeartbeatPasses).
func (s *System) HeartbeatLoad() (passes int64, shed uint64) { return s.passes.Load(), s.shed.Load() }

// Trees returns the tree names in configuration order.
func (s *System) Trees() []string {
	d := s.dir.Load()
	names := make([]string, len(d.trees))
	for i, t := range d.trees {
		names[i] = t.name
	}
	return names
}

// Result returns a tree's latest fair-share result (nil before the first
// update or for an unknown tree). The Result is never overwritten: the tree
// no longer recycles it (see results.go), so a caller that reads results
// often should prefer Introspect, whose lease it releases.
func (s *System) Result(tree string) *scheduler.Result {
	for _, t := range s.dir.Load().trees {
		if t.name == tree {
			return t.ledger.results.pin()
		}
	}
	return nil
}

// PoolOperationCount is the number of running and pending operations in a
// pool's subtree ("" is the whole tree); 0 for an unknown tree. When the
// tree does not answer in time it returns 1, so that a removal waiting on
// it is refused rather than allowed.
func (s *System) PoolOperationCount(tree, pool string) int {
	for _, t := range s.dir.Load().trees {
		if t.name != tree {
			continue
		}
		res, err := s.as.Root.RequestFuture(t.pid, &countOperations{pool: pool}, s.cfg.RequestTimeout).Result()
		if n, ok := res.(int); err == nil && ok {
			return n
		}
		return 1
	}
	return 0
}

// ApplyTrees brings the running trees to a new configuration: trees are
// reconfigured in place (running operations keep running), added, or
// removed when no operation uses them. What cannot be applied is kept as
// it was and reported in the error; the rest is applied.
func (s *System) ApplyTrees(trees []TreeSpec, defaultTree string, timeout time.Duration) error {
	done := make(chan error, 1)
	s.as.Root.Send(s.root, &applyTrees{trees: trees, defaultTree: defaultTree, reply: func(err error) { done <- err }})
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		return fmt.Errorf("%w: the scheduler did not apply the trees within %s", ErrTrees, timeout)
	}
}

// JournalStats returns the completions journal's counters; false when the
// scheduler has no journal (Deps.Journal nil).
func (s *System) JournalStats() (JournalStats, bool) {
	if s.journal == nil {
		return JournalStats{}, false
	}
	return s.journal.stats(), true
}

// NodeCount is the number of node sessions.
func (s *System) NodeCount() int { return s.router.count() }

// NodeTransitions returns how many times, since the system started, a node
// was taken offline (silent for Config.NodeOfflineTimeout) and declared
// lost (silent for Config.NodeLostTimeout: forgotten, its jobs failed).
func (s *System) NodeTransitions() (offline, lost uint64) {
	return s.router.offline.Load(), s.router.lost.Load()
}

// Revival reports whether the revived operations still wait for the
// nodes to report their jobs, and for how many nodes of the roster.
func (s *System) Revival() (active bool, waitingNodes int) {
	now := s.cfg.Now()
	return s.revival.active(now), s.revival.waitingFor(now)
}

// RosterSize is how many nodes the node roster holds (0 without
// Deps.Roster).
func (s *System) RosterSize() int { return s.roster.size() }

// Stop stops every actor and waits for them.
func (s *System) Stop() {
	close(s.stop)
	<-s.done
	for _, pid := range s.router.all() {
		_ = s.as.Root.StopFuture(pid).Wait()
	}
	_ = s.as.Root.StopFuture(s.root).Wait()
	for _, t := range s.dir.Load().trees {
		_ = s.as.Root.StopFuture(t.pid).Wait()
		_ = s.as.Root.StopFuture(t.placer).Wait()
	}
	if s.journal != nil {
		s.journal.close()
	}
	s.roster.close()
	s.as.Shutdown()
	// Every tree actor closed its writer when it stopped, handing it the
	// latest state: wait for those last writes (they run side by side, each
	// bounded by RequestTimeout).
	s.writersMu.Lock()
	writers := slices.Clone(s.writers)
	s.writersMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.RequestTimeout+time.Second)
	defer cancel()
	for _, w := range writers {
		w.close(nil) // a tree whose actor never started
		if !w.wait(ctx) {
			s.cfg.Logger.Warn("tree state writer did not finish before the stop deadline", "tree", w.tree)
		}
	}
}
