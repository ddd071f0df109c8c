package server

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/internal/dashboard"
	"github.com/sharetree/sharetree/internal/leader"
	"github.com/sharetree/sharetree/internal/natsauth"
	"github.com/sharetree/sharetree/internal/natsembed"
	"github.com/sharetree/sharetree/internal/orchid"
	"github.com/sharetree/sharetree/internal/treeconf"
	"github.com/sharetree/sharetree/subjects"
)

// Version is the service version reported by micro.
const Version = "0.1.0"

// Server is a running scheduler process.
type Server struct {
	cfg      Config
	embedded *natsembed.Server
	// schedulerKey is the public nkey the scheduler's own connections use
	// on an embedded server with users (see ReloadAuth); auth guards
	// cfg.Auth's replacement.
	schedulerKey string
	auth         sync.Mutex
	// nc carries JetStream (events, buckets), the configuration service
	// and the job signals; svcConn the scheduler service (heartbeats and
	// the operation API), on a connection of its own.
	nc       *conn
	svcConn  *conn
	svc      micro.Service
	sys      *actors.System
	events   *eventSink
	rejected atomic.Uint64
	epoch    uint64
	// lease is the leader lease this server holds (see internal/leader).
	lease *leader.Lease
	// fenced counts the writes its fences refused.
	fenced atomic.Uint64
	// store and journal are the fenced stores the actors write to.
	store   *kvStore
	journal *jsJournal
	// storage says whether the stores take writes; prober keeps it
	// current (see storageHealth).
	storage *storageHealth
	prober  *storageProber
	// The live tree configuration: its bucket, its service, the watch that
	// applies changes.
	confStore *treeconf.Store
	confSvc   micro.Service
	// state keeps the trees' fair-share state (see kvState).
	state *kvState
	// The orchid: its NATS service and the HTTP listener (nil when
	// disabled).
	orchidSvc micro.Service
	http      *httpServer
	// dashCancel stops the dashboard's sampler; dashDone is closed when
	// it stopped.
	dashArchive *dashboardArchive // nil without one
	dashCancel  context.CancelFunc
	dashDone    chan struct{}
	watchCancel context.CancelFunc
	watchDone   chan struct{}
	// closing ends stepDownOnLoss; stepDownDone is closed when it ended.
	closing      chan struct{}
	stepDownDone chan struct{}
	closeOnce    sync.Once
}

// Start brings the scheduler up; Close stops it.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg}
	if cfg.GCPercent > 0 && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(cfg.GCPercent)
	}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	if cfg.HTTPAddr != "" {
		// Listening from the start: a standby answers /healthz too.
		var err error
		if s.http, err = listenHTTP(cfg.HTTPAddr, cfg.Leader.Name); err != nil {
			return nil, err
		}
		cfg.Logger.Info("http listening", "addr", s.http.Addr(), "orchid", "http://"+s.http.Addr()+"/orchid/trees",
			"metrics", "http://"+s.http.Addr()+"/metrics", "health", "http://"+s.http.Addr()+"/healthz")
	}
	url := cfg.NATSURL
	var opts []nats.Option // the scheduler's credentials
	if cfg.NKey != nil {
		opts = append(opts, cfg.NKey.Option())
	}
	if cfg.TLSCA != "" {
		opts = append(opts, nats.RootCAs(cfg.TLSCA))
	}
	if url == "" {
		ec := natsembed.Default(cfg.DataDir)
		ec.Host, ec.Port, ec.SyncAlways, ec.MaxStore = cfg.Listen, cfg.Port, cfg.SyncAlways, cfg.MaxStore
		if cfg.Auth != nil {
			key, err := natsauth.NewKey()
			if err != nil {
				return nil, fmt.Errorf("the scheduler's nkey: %w", err)
			}
			s.schedulerKey = key.Public()
			ec.Nkeys = natsauth.Users(cfg.Auth, s.schedulerKey)
			opts = append(opts, key.Option())
		}
		ec.TLSCertFile, ec.TLSKeyFile = cfg.TLSCert, cfg.TLSKey
		emb, err := natsembed.Start(ec, cfg.Logger)
		if err != nil {
			return nil, err
		}
		s.embedded, url = emb, emb.ClientURL()
		if cfg.TLSCert != "" {
			// In-process connections need no TLS (nor a certificate for
			// the loopback address): the URL says nats, not tls.
			opts = append(opts, nats.InProcessServer(emb.Server))
			url = "nats://" + strings.TrimPrefix(url, "tls://")
		}
	}
	var err error
	if s.nc, err = connect(url, "sharetree-scheduler", opts...); err != nil {
		return nil, err
	}
	nc := s.nc.nc
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	// Only the lease's holder goes on; the others wait here as standbys.
	lcfg := cfg.Leader
	lcfg.Logger, lcfg.Replicas = cfg.Logger, cfg.Replicas
	if s.lease, err = leader.Acquire(ctx, js, lcfg); err != nil {
		return nil, err
	}
	if err := ensureEventStream(ctx, js, cfg.EventRetention, cfg.EventMaxBytes, cfg.Replicas, cfg.Logger); err != nil {
		return nil, err
	}
	opsKV, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: subjects.OperationsBucket, History: 1, Storage: jetstream.FileStorage, Replicas: cfg.Replicas})
	if err != nil {
		return nil, fmt.Errorf("operations bucket: %w", err)
	}
	schedKV, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: subjects.SchedulerBucket, History: 5, Storage: jetstream.FileStorage, Replicas: cfg.Replicas})
	if err != nil {
		return nil, fmt.Errorf("scheduler bucket: %w", err)
	}
	journal, err := openJournal(ctx, js, cfg.Replicas, cfg.JournalMaxBytes, cfg.Logger)
	if err != nil {
		return nil, err
	}
	// The new epoch, and the fences on every store, come before anything
	// is read: what an earlier leader wrote before them is read below, and
	// what it writes after them is refused.
	var epochRev uint64
	if s.epoch, epochRev, err = bumpEpoch(ctx, schedKV); err != nil {
		return nil, fmt.Errorf("leader epoch: %w", err)
	}
	store := &kvStore{kv: opsKV}
	state := &kvState{kv: schedKV, fence: &fence{js: js, subject: subjects.KVKey(subjects.SchedulerBucket, subjects.EpochKey), seq: epochRev, refused: &s.fenced}}
	opsStream, err := js.Stream(ctx, subjects.KVStream(subjects.OperationsBucket))
	if err != nil {
		return nil, fmt.Errorf("operations bucket: %w", err)
	}
	if store.fence, err = raiseFence(ctx, js, opsStream, subjects.KVKey(subjects.OperationsBucket, subjects.FenceKey), s.epoch, &s.fenced); err != nil {
		return nil, err
	}
	if journal.fence, err = raiseFence(ctx, js, journal.stream, subjects.CompletionsFence(), s.epoch, &s.fenced); err != nil {
		return nil, fmt.Errorf("completions journal: %w", err)
	}
	s.store, s.journal = store, journal
	s.storage = newStorageHealth(cfg.Logger)
	store.health, state.health, journal.health = s.storage, s.storage, s.storage
	s.prober = &storageProber{health: s.storage, js: js, ops: store.fence, state: state.fence, epoch: s.epoch,
		period: cfg.StorageProbePeriod, timeout: max(2*cfg.StorageProbePeriod, time.Second), stop: make(chan struct{}), done: make(chan struct{})}
	go s.prober.run()
	revived, err := store.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("revive operations: %w", err)
	}
	persisted, err := state.Load(ctx, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("load the trees' state: %w", err)
	}
	if s.events, err = newEventSink(nc, s.epoch, cfg.EventBuffer, s.lease.Valid, cfg.Logger); err != nil {
		return nil, err
	}
	deps := actors.Deps{Events: s.events, Signals: &signalSink{nc: nc, leading: s.lease.Valid, logger: cfg.Logger}, Store: store, State: state, Journal: journal, Storage: s.storage, Epoch: s.epoch,
		Roster: &kvRoster{kv: schedKV, fence: state.fence, epoch: s.epoch, logger: cfg.Logger.With("component", "roster")}}
	// The pool trees live in the configuration bucket; the trees file seeds
	// it on the first start only.
	if s.confStore, err = treeconf.OpenStore(ctx, js, cfg.Replicas, cfg.Logger); err != nil {
		return nil, fmt.Errorf("tree configuration bucket: %w", err)
	}
	seeded, err := s.confStore.Seed(ctx, cfg.Trees)
	if err != nil {
		return nil, fmt.Errorf("seed the tree configuration: %w", err)
	}
	if !seeded {
		cfg.Logger.Info("tree configuration bucket already holds trees; the trees file is not applied (use `sharetree apply`)")
	}
	snap, err := s.confStore.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("load the tree configuration: %w", err)
	}
	configured := map[string]bool{}
	for _, t := range snap.Trees {
		configured[t.Tree.Name] = true
	}
	state.dropUnconfigured(ctx, persisted, configured, cfg.Logger)
	s.state = state
	last := map[string]actors.TreeSpec{}
	trees := treeSpecs(snap, cfg.Trees, last, persisted)
	for _, t := range snap.Trees {
		if t.Err != nil {
			return nil, fmt.Errorf("tree configuration: tree %s: %w", t.Tree.Name, t.Err)
		}
	}
	for _, t := range trees {
		last[t.Name] = t
	}
	actorCfg := cfg.Actors
	actorCfg.Logger = cfg.Logger
	if s.sys, err = actors.Start(actorCfg, deps, trees, snap.DefaultTree, revived); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.Background())
	s.watchCancel, s.watchDone = cancel, make(chan struct{})
	snaps, err := s.confStore.Watch(wctx)
	if err != nil {
		close(s.watchDone)
		return nil, fmt.Errorf("watch the tree configuration: %w", err)
	}
	go s.watchTrees(wctx, snaps, last)
	if s.confSvc, err = treeconf.NewService(nc, s.confStore, s.sys, cfg.Logger, treeconf.WithLeading(s.lease.Valid)); err != nil {
		return nil, fmt.Errorf("configuration service: %w", err)
	}
	if s.svcConn, err = connect(url, "sharetree-scheduler-service", opts...); err != nil {
		return nil, err
	}
	svc, err := micro.AddService(s.svcConn.nc, micro.Config{
		Name: subjects.SchedulerService, Version: Version,
		Description: "sharetree scheduler: node heartbeats and the operation API",
	})
	if err != nil {
		return nil, fmt.Errorf("micro service: %w", err)
	}
	s.svc = svc
	if err := addService(svc, &service{sys: s.sys, nc: s.svcConn.nc, rejected: &s.rejected, leading: s.lease.Valid}); err != nil {
		return nil, err
	}
	// The endpoints' subscriptions reach the NATS server only with the
	// connection's next flush; until then a request finds no responders.
	if err := s.svcConn.nc.Flush(); err != nil {
		return nil, fmt.Errorf("micro service subscriptions: %w", err)
	}
	o := orchid.New(s.sys, cfg.Actors.RequestTimeout, cfg.Logger)
	if s.orchidSvc, err = orchid.NewService(nc, o, s.lease.Valid); err != nil {
		return nil, err
	}
	if s.http != nil {
		d, err := dashboard.New(s.sys, o, cfg.Dashboard, cfg.Logger)
		if err != nil {
			return nil, err
		}
		// The charts' history outlives this leader in the dashboard
		// stream; without it, it starts empty (nothing else depends on it).
		if err := ensureDashboardStream(ctx, js, cfg.Dashboard.Window, cfg.DashboardMaxBytes, cfg.Replicas); err != nil {
			cfg.Logger.Warn("the dashboard's history will not be kept for the next leader", "err", err)
		} else {
			s.dashArchive = &dashboardArchive{js: js, logger: cfg.Logger.With("component", "dashboard")}
			d.SetArchive(s.dashArchive)
		}
		ctx, cancel := context.WithCancel(context.Background())
		s.dashCancel, s.dashDone = cancel, make(chan struct{})
		go func() {
			defer close(s.dashDone)
			d.Run(ctx)
		}()
		if err := s.http.lead(o, d, s.Health, s.counters()...); err != nil {
			return nil, err
		}
	}
	s.closing, s.stepDownDone = make(chan struct{}), make(chan struct{})
	go s.stepDownOnLoss()
	cfg.Logger.Info("scheduler started", "nats", url, "name", cfg.Leader.Name, "epoch", s.epoch, "trees", s.sys.Trees(), "revived_operations", len(revived),
		"trees_with_persisted_volumes", len(persisted))
	ok = true
	return s, nil
}

// conn is a NATS connection and the channel its closed handler closes.
type conn struct {
	nc     *nats.Conn
	closed chan struct{}
}

func connect(url, name string, opts ...nats.Option) (*conn, error) {
	c := &conn{closed: make(chan struct{})}
	nc, err := nats.Connect(url, append([]nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second),
		nats.ClosedHandler(func(*nats.Conn) { close(c.closed) })}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS at %s: %w", url, err)
	}
	c.nc = nc
	return c, nil
}

// drain drains the connection, waiting up to timeout for it to close.
func (c *conn) drain(timeout time.Duration) {
	if err := c.nc.Drain(); err == nil {
		select {
		case <-c.closed:
		case <-time.After(timeout):
		}
	}
	c.nc.Close()
}

// URL is the NATS URL clients and agents connect to.
func (s *Server) URL() string {
	if s.embedded != nil {
		return s.embedded.ClientURL()
	}
	return s.nc.nc.ConnectedUrl()
}

// System is the running actor system.
func (s *Server) System() *actors.System { return s.sys }

// HTTPAddr is the bound address of the HTTP listener ("" when disabled).
func (s *Server) HTTPAddr() string {
	if s.http == nil {
		return ""
	}
	return s.http.Addr()
}

// Epoch is this process's leader epoch.
func (s *Server) Epoch() uint64 { return s.epoch }

// stepDownOnLoss stops the services as soon as the leader lease is lost,
// so that requests go to the new leader (until then they are answered
// UNAVAILABLE, see service.leading); the rest stops with Close.
func (s *Server) stepDownOnLoss() {
	defer close(s.stepDownDone)
	select {
	case <-s.lease.Lost():
	case <-s.closing:
		return
	}
	s.cfg.Logger.Warn("leader lease lost: the services stop; close the server", "err", s.lease.Err())
	for _, svc := range []micro.Service{s.svc, s.confSvc, s.orchidSvc} {
		if err := svc.Stop(); err != nil {
			s.cfg.Logger.Warn("service not stopped", "service", svc.Info().Name, "err", err)
		}
	}
}

// Lost is closed when the server loses the leader lease: it no longer
// answers requests or writes anything, and should be closed (and, to stand
// by, started again with the lease's TakeOver off). LeaseErr says why.
func (s *Server) Lost() <-chan struct{} { return s.lease.Lost() }

// LeaseErr is why the leader lease was lost (nil while it is held).
func (s *Server) LeaseErr() error { return s.lease.Err() }

// Leading reports whether the server acts as the leader now (see
// leader.Lease.Valid).
func (s *Server) Leading() bool { return s.lease.Valid() }

// Fatal delivers an unrecoverable actor failure.
func (s *Server) Fatal() <-chan error { return s.sys.Fatal() }

// Close stops the service, the actors, the event publisher and NATS. Only
// the first call does anything.
func (s *Server) Close() { s.closeOnce.Do(s.close) }

func (s *Server) close() {
	if s.closing != nil {
		close(s.closing)
		<-s.stepDownDone
	}
	if s.http != nil {
		if err := s.http.Close(); err != nil {
			s.cfg.Logger.Warn("http listener stopped", "err", err)
		}
	}
	if s.dashCancel != nil {
		s.dashCancel()
		<-s.dashDone
	}
	if s.orchidSvc != nil {
		_ = s.orchidSvc.Stop()
	}
	if s.confSvc != nil {
		_ = s.confSvc.Stop()
	}
	if s.watchCancel != nil {
		s.watchCancel()
		<-s.watchDone
	}
	if s.svc != nil {
		_ = s.svc.Stop()
	}
	if s.sys != nil {
		s.sys.Stop()
	}
	if s.events != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s.events.close(ctx)
		cancel()
		s.cfg.Logger.Info("scheduler stopped", "events_dropped", s.events.drops.Load(),
			"events_failed", s.events.fails.Load(), "requests_rejected", s.rejected.Load())
	}
	if s.svcConn != nil {
		s.svcConn.drain(10 * time.Second)
	}
	if s.prober != nil {
		close(s.prober.stop)
		<-s.prober.done
	}
	if s.lease != nil {
		// Last, after the final writes: a standby takes over at once.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := s.lease.Release(ctx); err != nil {
			s.cfg.Logger.Warn("leader lease not released; a standby takes over when it runs out", "err", err)
		}
		cancel()
	}
	if s.nc != nil {
		s.nc.drain(10 * time.Second)
	}
	if s.embedded != nil {
		s.embedded.Stop()
	}
}
