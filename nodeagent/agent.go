package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// Buffers of the channel subscriptions. A signal dropped because its buffer
// is full is repeated by the next heartbeat response.
const (
	signalBuffer = 64
	replyBuffer  = 8
)

// Agent is one exec node's agent. Create it with New and run it with Run;
// Stats may be called at any time from any goroutine.
type Agent struct {
	cfg        Config
	nc         *nats.Conn
	log        *slog.Logger
	hbSubject  string
	sigSubject string
	inbox      string // replies arrive on inbox.<sequence>
	limits     *pb.Resources
	defaultSig syscall.Signal
	started    atomic.Bool
	counters   counters
	wg         sync.WaitGroup // process waiters and output copiers

	mu      sync.Mutex
	running map[string]*job // by job id
	// allocated is what the running jobs hold (see checkCapacityLocked).
	allocated scheduler.Resources
	finished  map[string]*pb.FinishedJob // by job id, until acknowledged
	epoch     uint64                     // highest leader epoch seen
	seq       uint64                     // sequence of the last heartbeat built
	stopping  bool                       // Run is returning: start nothing
}

// New checks cfg (see Config.Validate) and returns an agent that will talk
// over nc. nc stays the caller's: the agent never closes it, and many agents
// may share it.
func New(cfg Config, nc *nats.Conn) (*Agent, error) {
	if nc == nil {
		return nil, fmt.Errorf("%w: nil NATS connection", ErrInvalidConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	hb, err := subjects.NodeHeartbeat(cfg.NodeID)
	if err != nil {
		return nil, fmt.Errorf("%w: NodeID: %w", ErrInvalidConfig, err)
	}
	sig, err := subjects.NodeSignal(cfg.NodeID)
	if err != nil {
		return nil, fmt.Errorf("%w: NodeID: %w", ErrInvalidConfig, err)
	}
	defSig, err := parseSignal(cfg.InterruptionSignal)
	if err != nil {
		return nil, fmt.Errorf("%w: InterruptionSignal: %w", ErrInvalidConfig, err)
	}
	return &Agent{
		cfg:        cfg,
		nc:         nc,
		log:        cfg.Logger.With("component", "nodeagent", "node", cfg.NodeID),
		hbSubject:  hb,
		sigSubject: sig,
		inbox:      nc.NewInbox(),
		limits:     wire.ToResources(cfg.Resources),
		defaultSig: defSig,
		running:    make(map[string]*job),
		finished:   make(map[string]*pb.FinishedJob),
	}, nil
}

// NodeID returns the agent's node id.
func (a *Agent) NodeID() string { return a.cfg.NodeID }

// Incarnation returns the incarnation the agent reports.
func (a *Agent) Incarnation() string { return a.cfg.Incarnation }

// Run heartbeats and serves the scheduler's commands until ctx is done. It
// then kills every job's process group, waits for the processes to exit,
// and returns nil. It returns an error only when it cannot start (already
// run, or a subscription fails). Run may be called once.
func (a *Agent) Run(ctx context.Context) error {
	if !a.started.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer a.stopJobs()
	sigCh := make(chan *nats.Msg, signalBuffer)
	sigSub, err := a.nc.ChanSubscribe(a.sigSubject, sigCh)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSubscribe, a.sigSubject, err)
	}
	defer a.unsubscribe(sigSub)
	repCh := make(chan *nats.Msg, replyBuffer)
	repSub, err := a.nc.ChanSubscribe(a.inbox+".*", repCh)
	if err != nil {
		return fmt.Errorf("%w: %s.*: %w", ErrSubscribe, a.inbox, err)
	}
	defer a.unsubscribe(repSub)
	// A reconnect: the heartbeat in flight, if any, is given up at once
	// (see loop.reconnected).
	connected := a.nc.StatusChanged(nats.CONNECTED)
	defer a.nc.RemoveStatusListener(connected)

	a.log.Info("node agent started", "incarnation", a.cfg.Incarnation, "resources", a.cfg.Resources.String(),
		"tags", a.cfg.Tags, "heartbeat_period", a.cfg.HeartbeatPeriod)
	l := &loop{a: a, period: a.cfg.HeartbeatPeriod, ticker: time.NewTicker(a.cfg.HeartbeatPeriod),
		timeout: time.NewTimer(time.Hour)}
	l.timeout.Stop()
	a.counters.period.Store(int64(l.period))
	defer l.ticker.Stop()
	defer l.timeout.Stop()
	l.heartbeat()
	for {
		select {
		case <-ctx.Done():
			a.log.Info("node agent stopping", "reason", context.Cause(ctx))
			return nil
		case <-l.ticker.C:
			l.heartbeat()
		case <-l.timeout.C:
			l.timedOut()
		case <-connected:
			l.reconnected()
		case m := <-repCh:
			l.reply(m)
		case m := <-sigCh:
			a.signal(m)
		}
	}
}

func (a *Agent) unsubscribe(s *nats.Subscription) {
	if err := s.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		a.log.Debug("unsubscribe", "subject", s.Subject, "err", err)
	}
}
