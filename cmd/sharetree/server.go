package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sharetree/sharetree/internal/failpoint"
	"github.com/sharetree/sharetree/internal/natsauth"
	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/treeconf"
	"github.com/sharetree/sharetree/scheduler"
)

// defaultTrees is used when --pools is not given: one tree, no pools.
func defaultTrees() *scenario.TreesFile {
	return &scenario.TreesFile{DefaultTree: "default", Trees: []scenario.TreeSpec{{Name: "default", Config: scheduler.DefaultTreeConfig()}}}
}

func newServerCmd() *cobra.Command {
	cfg := server.DefaultConfig()
	var (
		pools, logLevel, authFile, nkeyFile string
	)
	cfg.Port = 4222
	cfg.HTTPAddr = server.DefaultHTTPAddr
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the scheduler (embedded NATS with JetStream unless --nats-url is given)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := newLogger(cmd.ErrOrStderr(), logLevel)
			if err != nil {
				return err
			}
			cfg.Logger = logger
			cfg.Trees = defaultTrees()
			if pools != "" {
				if cfg.Trees, err = scenario.ParseTreesFile(pools); err != nil {
					return err
				}
				// The rules the configuration bucket enforces, which the
				// engine's own checks above do not all cover.
				if err := treeconf.CheckTrees(cfg.Trees); err != nil {
					return usageError{fmt.Errorf("%s: %w", pools, err)}
				}
			}
			if authFile != "" {
				if cfg.Auth, err = natsauth.ReadFile(authFile); err != nil {
					return usageError{fmt.Errorf("--auth: %w", err)}
				}
			}
			if cfg.TLSCert != "" && cfg.TLSKey != "" {
				if _, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey); err != nil {
					return usageError{fmt.Errorf("--tls-cert, --tls-key: %w", err)}
				}
			}
			if nkeyFile != "" {
				if cfg.NKey, err = natsauth.ReadSeed(nkeyFile); err != nil {
					return usageError{fmt.Errorf("--nkey: %w", err)}
				}
			}
			if err := cfg.Validate(); err != nil {
				return configError(err, serverFlags)
			}
			if spec := os.Getenv(failpoint.EnvVar); spec != "" {
				if err := failpoint.Enable(spec, nil); err != nil {
					return usageError{fmt.Errorf("%s: %w", failpoint.EnvVar, err)}
				}
				logger.Warn("failpoints armed: the process kills itself when one fires (crash tests only)", "failpoints", spec)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			standby, wait := false, time.Second
			for {
				lost, err := serve(ctx, &cfg, hup, authFile, logger)
				switch {
				case err != nil && standby:
					// The lease was lost, maybe with NATS gone: keep trying
					// to stand by until NATS is back.
					logger.Warn("scheduler not started again; retrying", "err", err, "in", wait)
					select {
					case <-ctx.Done():
						logger.Info("shutting down")
						return nil
					case <-time.After(wait):
					}
					wait = min(2*wait, 30*time.Second)
					continue
				case err != nil || !lost:
					return err
				}
				// Stand by for the lease again, without taking it over
				// from a server of the same name (which is what took it).
				standby, wait = true, time.Second
				cfg.Leader.TakeOver = false
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DataDir, "data-dir", "sharetree-data", "directory of the embedded NATS server's JetStream files")
	f.StringVar(&cfg.Listen, "listen", cfg.Listen, "host the embedded NATS server listens on")
	f.IntVar(&cfg.Port, "port", cfg.Port, "port of the embedded NATS server (-1: any free port)")
	f.StringVar(&cfg.NATSURL, "nats-url", "", "join this NATS server instead of embedding one")
	f.StringVar(&cfg.HTTPAddr, "http-addr", cfg.HTTPAddr, "host:port of the HTTP listener (dashboard under /dashboard/, orchid JSON under /orchid/, Prometheus /metrics, /healthz); port 0 picks a free one, \"\" disables it")
	f.BoolVar(&cfg.SyncAlways, "sync-always", cfg.SyncAlways, "the embedded NATS server fsyncs every JetStream write before acknowledging it (false: every two minutes; an acknowledged submission may then be lost in a power loss); the events stream is not synced either way")
	f.StringVar(&pools, "pools", "", "pool trees file (version, default_tree, trees with config and pools); default: one tree \"default\" without pools")
	f.DurationVar(&cfg.Actors.HeartbeatPeriod, "heartbeat-period", time.Second, "heartbeat period agents are told to use")
	f.DurationVar(&cfg.Actors.StatePersistPeriod, "state-persist-period", cfg.Actors.StatePersistPeriod, "how often each pool tree writes its integral pools' accumulated volumes to the scheduler bucket (also written on shutdown; a crash loses at most this much)")
	f.DurationVar(&cfg.Actors.NodeOfflineTimeout, "node-offline-timeout", cfg.Actors.NodeOfflineTimeout, "a node not heard from for this long gets no new jobs and no longer counts in its tree's resources; its jobs keep running")
	f.DurationVar(&cfg.Actors.NodeLostTimeout, "node-lost-timeout", cfg.Actors.NodeLostTimeout, "a node not heard from for this long is forgotten: its jobs are failed as lost and run again elsewhere (at least --node-offline-timeout)")
	f.DurationVar(&cfg.Actors.JobRevivalTimeout, "job-revival-timeout", cfg.Actors.JobRevivalTimeout, "after a restart or failover, the longest the revived operations wait for the nodes to report the jobs they still run (those are adopted, not restarted) before the jobs no node reported start again; the wait ends sooner once every node of the roster has reported (0: no wait)")
	f.DurationVar(&cfg.Actors.ProgressPersistPeriod, "progress-persist-period", cfg.Actors.ProgressPersistPeriod, "how often, at most, a running operation writes its completed jobs to the operations bucket (a restarted scheduler runs none of them again)")
	f.Float64Var(&cfg.Actors.ProgressWriteRate, "progress-write-rate", cfg.Actors.ProgressWriteRate, "at most this many writes of completed jobs a second across all operations (each operation then writes less often than --progress-persist-period)")
	f.DurationVar(&cfg.Actors.JournalBatchInterval, "journal-batch-interval", cfg.Actors.JournalBatchInterval, "least time between two fsynced writes of the completions journal (completed jobs are acknowledged to their nodes once stored; capped at half of --heartbeat-period; 0: write as soon as the previous write ended)")
	f.DurationVar(&cfg.Actors.FairShareEventPeriod, "fair-share-event-period", cfg.Actors.FairShareEventPeriod, "how often each tree publishes a fair-share snapshot event (about 100 bytes per pool: raise it for trees of thousands of pools, whose snapshots would otherwise fill the events stream's 1 GiB within hours)")
	f.IntVar(&cfg.Actors.MaxHeartbeatPasses, "max-heartbeat-passes", cfg.Actors.MaxHeartbeatPasses, "at most this many node heartbeats in their scheduling pass at once; beyond, a heartbeat is shed: answered UNAVAILABLE (throttled) at once and counted, its node kept alive (0: no limit; see docs/OPERATIONS.md)")
	f.Float64Var(&cfg.Actors.PreemptionRateLimit, "preemption-rate-limit", cfg.Actors.PreemptionRateLimit, "jobs each pool tree may interrupt per second for starving operations (0 turns preemption off; graceful preemption is not counted)")
	f.IntVar(&cfg.GCPercent, "gc-percent", cfg.GCPercent, "garbage collector target percentage for the process (0: Go's default or GOGC; GOGC, when set, wins)")
	f.Int64Var(&cfg.MaxStore, "max-store", cfg.MaxStore, "bytes of disk the embedded NATS server's JetStream may use; the events stream, the completions journal and the dashboard stream reserve theirs, the buckets share the rest, and when it is used up the scheduler fails closed (no job starts) until space is freed")
	f.Int64Var(&cfg.EventMaxBytes, "event-max-bytes", cfg.EventMaxBytes, "bytes the events stream keeps (the oldest events are dropped beyond)")
	f.Int64Var(&cfg.DashboardMaxBytes, "dashboard-max-bytes", cfg.DashboardMaxBytes, "bytes the dashboard stream keeps of the charts' samples (for --dashboard-window, so that a new leader's charts go back as far as its predecessor's; the oldest are dropped beyond)")
	f.Int64Var(&cfg.JournalMaxBytes, "journal-max-bytes", cfg.JournalMaxBytes, "bytes the completions journal may hold (it holds the last minutes' completions; when full, completions wait unacknowledged)")
	f.IntVar(&cfg.Replicas, "replicas", cfg.Replicas, "copies JetStream keeps of every stream and bucket the scheduler writes: 3 on a NATS cluster (--nats-url) of three or more servers; 1 with the embedded server")
	f.StringVar(&authFile, "auth", "", "auth file securing the embedded NATS server: the nkeys of its admins, clients and agents (see docs/OPERATIONS.md); without it anyone may connect. SIGHUP reads it again: removed keys are disconnected at once, added ones may connect")
	f.StringVar(&cfg.TLSCert, "tls-cert", "", "PEM certificate the embedded NATS server presents; with --tls-key, every client must then use TLS (clients and agents take --tls-ca)")
	f.StringVar(&cfg.TLSKey, "tls-key", "", "PEM key of --tls-cert")
	f.StringVar(&cfg.TLSCA, "tls-ca", "", "PEM file of the certificate authority to trust when joining a NATS server (--nats-url) over TLS (default: the system's)")
	f.StringVar(&nkeyFile, "nkey", "", "file holding the scheduler's nkey seed, to join a NATS server (--nats-url) that requires one")
	f.DurationVar(&cfg.StorageProbePeriod, "storage-probe-period", cfg.StorageProbePeriod, "how often the scheduler checks that JetStream answers (and, while a bucket refuses writes, tries one): while the storage takes no writes, no job starts")
	f.StringVar(&cfg.Leader.Name, "server-name", cfg.Leader.Name, "this server's name in the leader lease (default: the host name); servers sharing a NATS server (--nats-url) need distinct names, and a server restarted under its name takes its lease over at once")
	f.DurationVar(&cfg.Leader.TTL, "lease-ttl", cfg.Leader.TTL, "how long the leader lease lives unrenewed (whole seconds, at least 2s): a standby takes over within it after the leader dies; the leader renews every third of it and stops acting after two thirds without a renewal")
	f.DurationVar(&cfg.Dashboard.Window, "dashboard-window", cfg.Dashboard.Window, "how far back the dashboard's charts go (kept in the leader's memory)")
	f.DurationVar(&cfg.Dashboard.Resolution, "dashboard-resolution", cfg.Dashboard.Resolution, "how often the dashboard samples each tree for its charts")
	f.IntVar(&cfg.Dashboard.MaxPools, "dashboard-pools", cfg.Dashboard.MaxPools, "pools per tree whose history the dashboard keeps: the root and the pools nearest to it")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	return cmd
}

// serve runs the scheduler until ctx ends (false, nil), it fails (the
// error) or it loses the leader lease (true, nil). Start waits while
// another server holds the lease.
func serve(ctx context.Context, cfg *server.Config, hup <-chan os.Signal, authFile string, logger *slog.Logger) (lost bool, err error) {
	logger.Info("starting", "name", cfg.Leader.Name, "lease_ttl", cfg.Leader.TTL)
	srv, err := server.Start(ctx, *cfg)
	if err != nil {
		if ctx.Err() != nil {
			logger.Info("shutting down")
			return false, nil
		}
		return false, err
	}
	defer srv.Close()
	logger.Info("serving", "nats_url", srv.URL(), "http", srv.HTTPAddr(), "epoch", srv.Epoch())
	for {
		select {
		case <-ctx.Done():
			logger.Info("shutting down")
			return false, nil
		case err := <-srv.Fatal():
			return false, fmt.Errorf("scheduler stopped: %w", err)
		case <-srv.Lost():
			logger.Warn("no longer the leader; stopping, then standing by", "err", srv.LeaseErr())
			return true, nil
		case <-hup:
			reloadAuth(srv, cfg, authFile, logger)
		}
	}
}

// reloadAuth reads the --auth file again (on SIGHUP) and makes it the
// embedded NATS server's users. A file that does not parse, or a server
// that cannot take it, leaves the users in force as they were, and the
// error is logged.
func reloadAuth(srv *server.Server, cfg *server.Config, authFile string, logger *slog.Logger) {
	if authFile == "" {
		logger.Warn("SIGHUP: no --auth file to reload; nothing changed")
		return
	}
	f, err := natsauth.ReadFile(authFile)
	if err != nil {
		logger.Error("SIGHUP: auth file not reloaded; the users in force stay", "file", authFile, "err", err)
		return
	}
	if _, err := srv.ReloadAuth(f); err != nil {
		logger.Error("SIGHUP: auth file not reloaded; the users in force stay", "file", authFile, "err", err)
		return
	}
	cfg.Auth = f // a scheduler started again (after standing by) keeps it
}

// newLogger builds a text slog logger at the named level.
func newLogger(w interface{ Write([]byte) (int, error) }, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError{fmt.Errorf("--log-level %q: want debug, info, warn or error", level)}
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// withTimeout is a context for one client command.
func withTimeout(cmd *cobra.Command, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(cmd.Context(), d)
}
