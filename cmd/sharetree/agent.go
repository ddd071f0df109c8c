package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/sharetree/sharetree/internal/agenthttp"
	"github.com/sharetree/sharetree/internal/natsauth"
	"github.com/sharetree/sharetree/internal/wire"
	"github.com/sharetree/sharetree/nodeagent"
)

// agentReconnectWait is the pause between reconnection attempts to NATS.
const agentReconnectWait = time.Second

// agentFlags are the agent command's flags.
type agentFlags struct {
	natsURL   string
	nodeID    string
	resources string
	tags      string
	period    time.Duration
	workDir   string
	logLevel  string
	nkey      string
	tlsCA     string
	httpAddr  string
}

func newAgentCmd() *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:   "agent --node-id ID --resources cpu=8,memory=16Gi,user_slots=8",
		Short: "Run a node agent: heartbeat this node to the scheduler and run the jobs it starts",
		Long: "agent runs on an exec node. It connects to NATS (reconnecting forever), heartbeats the node's resources,\n" +
			"tags and jobs to the scheduler, runs the jobs the scheduler starts as processes in their own process groups\n" +
			"(or simulated jobs), and delivers aborts and interruption signals. SIGINT or SIGTERM stops it: running\n" +
			"jobs are killed. Bad flags exit with status 2 and a message naming the flag.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, level, err := f.config()
			if err != nil {
				return err
			}
			var key *natsauth.Key
			if f.nkey != "" {
				if key, err = natsauth.ReadSeed(f.nkey); err != nil {
					return usageError{fmt.Errorf("agent: --nkey: %w", err)}
				}
			}
			auth, err := natsauth.AgentOptions(cfg.NodeID, key)
			if err != nil {
				return usageError{fmt.Errorf("agent: --node-id: %w", err)}
			}
			ca, err := trustCA(f.tlsCA)
			if err != nil {
				return usageError{fmt.Errorf("agent: %w", err)}
			}
			auth = append(auth, ca...)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runAgent(ctx, f.natsURL, f.httpAddr, cfg, cmd.ErrOrStderr(), level, auth...)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.natsURL, "nats-url", nats.DefaultURL, "NATS server URL(s), comma-separated")
	fl.StringVar(&f.nodeID, "node-id", "", "this node's id (letters, digits, '_' and '-'); required")
	fl.StringVar(&f.resources, "resources", "", "the node's total resources, e.g. cpu=8,memory=16Gi,user_slots=8; required")
	fl.StringVar(&f.tags, "tags", "", "comma-separated node tags")
	fl.DurationVar(&f.period, "heartbeat-period", nodeagent.DefaultHeartbeatPeriod, "time between heartbeats (the scheduler may change it)")
	fl.StringVar(&f.workDir, "work-dir", "", "directory for jobs' temporary directories (default the system temp dir)")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fl.StringVar(&f.tlsCA, "tls-ca", "", "PEM file of the certificate authority to trust for a NATS server that requires TLS (default: the system's)")
	fl.StringVar(&f.httpAddr, "http-addr", "", "host:port of the agent's HTTP listener: Prometheus /metrics (heartbeats, jobs, epoch, connection, labelled with the node) and /healthz (503 when NATS is down or the last 3 heartbeats failed); port 0 picks a free one; \"\" (the default) disables it")
	fl.StringVar(&f.nkey, "nkey", "", "file holding this agent's nkey seed (`sharetree nkey` makes one), for a NATS server that requires it; the agent receives on its own inbox, _INBOX_<node-id>, either way")
	return cmd
}

// config turns the flags into an agent config; bad input is a usageError
// naming the flag.
func (f agentFlags) config() (nodeagent.Config, slog.Level, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nodeagent.Config{}, 0, usageError{fmt.Errorf("agent: --log-level %q: want debug, info, warn or error", f.logLevel)}
	}
	if f.nodeID == "" {
		return nodeagent.Config{}, 0, usageError{fmt.Errorf("agent: --node-id is required")}
	}
	if f.resources == "" {
		return nodeagent.Config{}, 0, usageError{fmt.Errorf("agent: --resources is required (for example cpu=8,memory=16Gi,user_slots=8)")}
	}
	res, err := wire.ParseResources(f.resources)
	if err != nil {
		return nodeagent.Config{}, 0, usageError{fmt.Errorf("agent: --resources: %w", err)}
	}
	if f.httpAddr != "" {
		if _, port, err := net.SplitHostPort(f.httpAddr); err != nil || port == "" {
			return nodeagent.Config{}, 0, usageError{fmt.Errorf("agent: --http-addr %q: want host:port (port 0 picks a free one)", f.httpAddr)}
		}
	}
	if f.period <= 0 {
		// Validate takes 0 for the default; a flag of 0 is a mistake.
		return nodeagent.Config{}, 0, usageError{fmt.Errorf("agent: --heartbeat-period: must be positive, got %s", f.period)}
	}
	var tags []string
	for _, t := range strings.Split(f.tags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	cfg := nodeagent.Config{NodeID: f.nodeID, Resources: res, Tags: tags, HeartbeatPeriod: f.period, WorkDir: f.workDir}
	if err := cfg.Validate(); err != nil {
		return nodeagent.Config{}, 0, usageError{fmt.Errorf("agent: %w", namedByFlag(err, agentFlagNames))}
	}
	return cfg, level, nil
}

// runAgent connects to NATS and runs the agent until ctx is done, with
// its HTTP listener on httpAddr unless that is empty.
func runAgent(ctx context.Context, natsURL, httpAddr string, cfg nodeagent.Config, stderr io.Writer, level slog.Level, auth ...nats.Option) error {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	cfg.Logger = logger
	log := logger.With("component", "nats", "node", cfg.NodeID)
	nc, err := nats.Connect(natsURL, append(auth,
		nats.Name("sharetree-agent "+cfg.NodeID),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(agentReconnectWait),
		nats.RetryOnFailedConnect(true), // an agent may start before NATS does
		nats.ConnectHandler(func(c *nats.Conn) { log.Info("connected to NATS", "url", c.ConnectedUrlRedacted()) }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Warn("disconnected from NATS", "err", err) }),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("reconnected to NATS", "url", c.ConnectedUrlRedacted()) }),
		nats.ErrorHandler(func(_ *nats.Conn, s *nats.Subscription, err error) {
			subject := ""
			if s != nil {
				subject = s.Subject
			}
			log.Warn("NATS error", "subject", subject, "err", err)
		}))...,
	)
	if err != nil {
		return fmt.Errorf("agent: connect to %s: %w", natsURL, err)
	}
	defer nc.Close()
	a, err := nodeagent.New(cfg, nc)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	if httpAddr != "" {
		h, err := agenthttp.Listen(agenthttp.Config{Addr: httpAddr}, agenthttp.Source{Node: cfg.NodeID, Stats: a.Stats, Connected: nc.IsConnected})
		if err != nil {
			return fmt.Errorf("agent: --http-addr: %w", err)
		}
		defer func() {
			if err := h.Close(); err != nil {
				logger.Warn("http listener", "err", err)
			}
		}()
		logger.Info("http listening", "addr", h.Addr(), "metrics", "http://"+h.Addr()+"/metrics", "health", "http://"+h.Addr()+"/healthz")
	}
	return a.Run(ctx)
}
