package actors

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// ErrTrees is wrapped when the tree configuration cannot run.
var ErrTrees = errors.New("actors: invalid trees")

// System is a running scheduler: the actor system, the root, the trees and
// the node router. Its methods are what the NATS boundary calls; they only
// send messages and never block.
type System struct {
	cfg    Config
	as     *actor.ActorSystem
	root   *actor.PID
	trees  map[string]*treeRef
	names  []string
	router *nodeRouter

	// dir is the tree directory node actors resolve their tree from.
	dir       atomic.Pointer[treeDirectory]
	fatal     chan error
	fatalOnce sync.Once
	stop      chan struct{}
	done      chan struct{}
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
	if len(trees) == 0 {
		return nil, fmt.Errorf("%w: no trees", ErrTrees)
	}
	s := &System{cfg: cfg, trees: map[string]*treeRef{}, fatal: make(chan error, 1), stop: make(chan struct{}), done: make(chan struct{})}
	for _, t := range trees {
		if _, dup := s.trees[t.Name]; dup {
			return nil, fmt.Errorf("%w: tree %q defined twice", ErrTrees, t.Name)
		}
		if err := t.Config.Validate(); err != nil {
			return nil, fmt.Errorf("%w: tree %s: %w", ErrTrees, t.Name, err)
		}
		if _, err := scheduler.NewAdmission(t.Config, t.Pools); err != nil {
			return nil, fmt.Errorf("%w: tree %s: %w", ErrTrees, t.Name, err)
		}
		ref := &treeRef{spec: t, ledger: newLedger(t.Name), pools: map[scheduler.PoolID]bool{}}
		for _, p := range t.Pools {
			ref.pools[p.Name] = true
		}
		s.trees[t.Name] = ref
		s.names = append(s.names, t.Name)
	}
	if _, ok := s.trees[defaultTree]; !ok {
		return nil, fmt.Errorf("%w: default tree %q is not defined", ErrTrees, defaultTree)
	}
	c := &s.cfg
	s.as = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return c.Logger.With("component", "protoactor")
	}))
	guard := actor.WithGuardian(actor.NewOneForOneStrategy(0, time.Second, func(reason any) actor.Directive {
		s.failFatal(fmt.Errorf("actor panic: %v", reason))
		return actor.StopDirective
	}))
	for _, name := range s.names {
		ref := s.trees[name]
		props := actor.PropsFromProducer(newTreeActor(c, deps, ref.spec, ref.ledger), guard)
		pid, err := s.as.Root.SpawnNamed(props, "tree:"+name)
		if err != nil {
			return nil, fmt.Errorf("spawn tree %s: %w", name, err)
		}
		ref.pid = pid
		placer, err := s.as.Root.SpawnNamed(actor.PropsFromProducer(newPlacerActor(ref.ledger), guard), "placer:"+name)
		if err != nil {
			return nil, fmt.Errorf("spawn placer %s: %w", name, err)
		}
		ref.placer = placer
	}
	dir := &treeDirectory{}
	for _, name := range s.names {
		ref := s.trees[name]
		dir.trees = append(dir.trees, &nodeTree{name: name, ledger: ref.ledger, placer: ref.placer, filter: ref.spec.NodeFilter})
	}
	s.dir.Store(dir)
	s.router = &nodeRouter{root: s.as.Root, nodes: map[string]*actor.PID{}}
	s.router.props = func(id string) *actor.Props {
		return actor.PropsFromProducer(newNodeActor(c, deps, id, s.dir.Load, s.router.remove), guard)
	}
	root, err := s.as.Root.SpawnNamed(actor.PropsFromProducer(newRootActor(c, deps, s.trees, defaultTree, revived), guard), "root")
	if err != nil {
		return nil, fmt.Errorf("spawn root: %w", err)
	}
	s.root = root
	go s.monitorNodes()
	return s, nil
}

func (s *System) failFatal(err error) {
	s.cfg.Logger.Error("fatal actor failure", "err", err)
	s.fatalOnce.Do(func() { s.fatal <- err })
}

// Fatal delivers the first actor panic: the scheduler's state may be
// inconsistent, so the process should stop (and revive from the store).
func (s *System) Fatal() <-chan error { return s.fatal }

// monitorNodes sends every node actor a liveness check once a second.
func (s *System) monitorNodes() {
	defer close(s.done)
	period := min(time.Second, s.cfg.NodeOfflineTimeout/4)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			for _, pid := range s.router.all() {
				s.as.Root.Send(pid, &nodeCheck{})
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
func (s *System) Heartbeat(m *NodeHeartbeat) { s.router.route(m.Heartbeat.GetNodeId(), m) }

// Trees returns the tree names in configuration order.
func (s *System) Trees() []string { return slices.Clone(s.names) }

// Result returns a tree's latest fair-share result (nil before the first
// update or for an unknown tree).
func (s *System) Result(tree string) *scheduler.Result {
	if t := s.trees[tree]; t != nil {
		return t.ledger.result()
	}
	return nil
}

// NodeCount is the number of node sessions.
func (s *System) NodeCount() int { return s.router.count() }

// Stop stops every actor and waits for them.
func (s *System) Stop() {
	close(s.stop)
	<-s.done
	for _, pid := range s.router.all() {
		_ = s.as.Root.StopFuture(pid).Wait()
	}
	_ = s.as.Root.StopFuture(s.root).Wait()
	for _, name := range s.names {
		_ = s.as.Root.StopFuture(s.trees[name].pid).Wait()
		_ = s.as.Root.StopFuture(s.trees[name].placer).Wait()
	}
	s.as.Shutdown()
}
