package server

import (
	"errors"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/internal/cfgerr"
	"github.com/sharetree/sharetree/internal/dashboard"
	"github.com/sharetree/sharetree/internal/leader"
	"github.com/sharetree/sharetree/internal/natsauth"
	"github.com/sharetree/sharetree/internal/natsembed"
	"github.com/sharetree/sharetree/internal/scenario"
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("server: invalid config")

// Config configures a scheduler process.
type Config struct {
	// NATSURL joins an existing NATS server; empty embeds one.
	NATSURL string
	// DataDir holds the embedded server's JetStream files. Required when
	// embedding.
	DataDir string
	// Listen is the embedded server's host (default 127.0.0.1) and Port its
	// port (-1: a free one; default 4222 from the CLI).
	Listen string
	Port   int
	// HTTPAddr is the HTTP listener (host:port) of the orchid's JSON API
	// and the Prometheus metrics; port 0 picks a free one (see
	// Server.HTTPAddr). Empty disables it. Default "127.0.0.1:0" here,
	// DefaultHTTPAddr from the CLI.
	HTTPAddr string
	// SyncAlways makes the embedded NATS server fsync every JetStream write
	// before acknowledging it, so that an acknowledged submission or state
	// change survives a power loss, not only a crash of the process (the
	// server's own default syncs every two minutes). The events stream opts
	// out (eventStreamConfig). Default true; it does not apply to a server
	// joined with NATSURL, whose operator sets sync_interval.
	SyncAlways bool
	// Trees is the pool-tree configuration.
	Trees *scenario.TreesFile
	// Actors configures the live scheduler.
	Actors actors.Config
	// EventRetention bounds the events stream by age (default 24h).
	EventRetention time.Duration
	// EventMaxBytes bounds the events stream by size (default 1 GiB); the
	// oldest events are dropped beyond it.
	EventMaxBytes int64
	// JournalMaxBytes bounds the completions journal (default 1 GiB). It
	// holds what completed in the last minutes (the operations' own
	// writes let the scheduler drop the rest); when full, completions wait
	// unacknowledged, reported again by their nodes, instead of old ones
	// being lost.
	JournalMaxBytes int64
	// DashboardMaxBytes bounds the dashboard stream (default 256 MiB),
	// which keeps the dashboard's samples for Dashboard.Window so that a
	// new leader's charts go back as far as its predecessor's; the oldest
	// samples are dropped beyond it (about 40 kB per tree and sample at
	// 200 pools: 256 MiB is about 9 trees' hour at a 5 s resolution).
	DashboardMaxBytes int64
	// MaxStore is how many bytes of disk the embedded NATS server's
	// JetStream may use (default 8 GiB; it does not apply with NATSURL,
	// whose operator sets the limits). The events stream, the journal and
	// the dashboard stream reserve their limits out of it; the buckets (operations, the
	// scheduler's state, the configuration, the lease) share the rest.
	// When it is used up, the writes that need more are refused: the
	// scheduler fails closed (no job starts) until space is freed.
	MaxStore int64
	// GCPercent, when positive, is the garbage collector's target
	// percentage (runtime/debug.SetGCPercent), which Start sets for the
	// whole process unless the GOGC environment variable is set. Default
	// 400: at 5,000 heartbeats a second the scheduler allocates ≈ 125 MiB/s
	// and a heap of ≈ 300 MiB is collected every second at Go's 100; the
	// marking slows every goroutine for a tenth of the time and most
	// heartbeats slower than 20 ms fell in it. 400 collects a quarter as
	// often for ≈ 2.5 times the memory (see docs/BENCHMARKS.md). 0 leaves
	// the runtime's setting.
	GCPercent int
	// EventBuffer is how many events may wait to be published before new
	// ones are dropped and counted (default 65536).
	EventBuffer int
	// Auth, when set, secures the embedded NATS server: only its users
	// connect, each with its role's permissions (see internal/natsauth);
	// the scheduler connects with a key it makes at start. It does not
	// apply with NATSURL, whose operator sets the users (give the
	// scheduler's key in NKey then).
	Auth *natsauth.File
	// NKey is the key the scheduler connects to NATSURL with (nil: none).
	NKey *natsauth.Key
	// TLSCert and TLSKey (PEM files, both or neither) make the embedded
	// NATS server require TLS of every client, presenting this
	// certificate; the scheduler's own connections are in-process.
	TLSCert, TLSKey string
	// TLSCA (a PEM file) is the certificate authority the scheduler
	// trusts when it joins NATSURL over TLS ("": the system's).
	TLSCA string
	// Replicas is how many copies JetStream keeps of every stream and
	// bucket the scheduler writes (the operations, its own state, the
	// journal, the events, the configuration, the leader lease): 3 on a
	// NATS cluster of three or more servers, so that one server's loss
	// loses nothing and stops nothing. Default 1; 1 with the embedded
	// server (a single server); at most 5.
	Replicas int
	// StorageProbePeriod is how often the server asks JetStream whether it
	// is up, and, while a bucket refuses writes, tries a write to it (see
	// storageHealth): while the storage takes no writes, no job starts. A
	// probe not answered within twice the period (at least 1s) failed.
	// Default 1s.
	StorageProbePeriod time.Duration
	// Dashboard configures the web dashboard served under /dashboard/ by
	// the HTTP listener (see internal/dashboard); DefaultConfig sets its
	// defaults.
	Dashboard dashboard.Config
	// Leader configures the leader lease. Several servers may share one
	// NATS server (NATSURL): the one holding the lease schedules, the
	// others wait in Start as standbys and take over when it is gone (see
	// internal/leader and docs/OPERATIONS.md). Leader.Name names the server
	// (default: the host name; give each server of a NATS server its own).
	// Leader.Logger is set from Logger.
	Leader leader.Config
	// Logger for the process (default discard).
	Logger *slog.Logger
}

// DefaultConfig returns the defaults; Trees and DataDir still need setting.
func DefaultConfig() Config {
	return Config{
		Listen: "127.0.0.1", Port: -1,
		HTTPAddr:           "127.0.0.1:0",
		SyncAlways:         true,
		Actors:             actors.DefaultConfig(),
		EventRetention:     24 * time.Hour,
		EventMaxBytes:      1 << 30,
		JournalMaxBytes:    1 << 30,
		DashboardMaxBytes:  256 << 20,
		MaxStore:           natsembed.DefaultMaxStore,
		EventBuffer:        1 << 16,
		GCPercent:          400,
		Leader:             leader.DefaultConfig(DefaultServerName()),
		StorageProbePeriod: time.Second,
		Replicas:           1,
		Dashboard:          dashboard.Config{}.Defaults(),
		Logger:             slog.New(slog.DiscardHandler),
	}
}

// DefaultServerName is the host name, with every character that a server
// name may not hold (see leader.Config.Name) written '_', or "sharetree"
// when the host has no name.
func DefaultServerName() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "sharetree"
	}
	if len(h) > 128 {
		h = h[:128]
	}
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r > '~' {
			return '_'
		}
		return r
	}, h)
}

// Validate checks the configuration. A bad field's error is a
// *cfgerr.FieldError wrapping ErrConfig (the actors' fields under
// "Actors.").
func (c *Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return cfgerr.New(ErrConfig, field, format, args...)
	}
	switch {
	case c.NATSURL == "" && c.DataDir == "":
		return bad("DataDir", "is required with the embedded NATS server")
	case c.NATSURL != "" && c.Auth != nil:
		return bad("Auth", "secures the embedded NATS server only; with NATSURL its operator sets the users (give the scheduler's key in NKey)")
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return bad("TLSCert", "and TLSKey go together (certificate %q, key %q)", c.TLSCert, c.TLSKey)
	case c.NATSURL != "" && c.TLSCert != "":
		return bad("TLSCert", "is the embedded NATS server's certificate; with NATSURL its operator sets TLS (give the CA in TLSCA)")
	case c.NATSURL == "" && c.TLSCA != "":
		return bad("TLSCA", "is the authority to trust for NATSURL; the scheduler reaches its embedded server in-process")
	case c.NATSURL == "" && c.NKey != nil:
		return bad("NKey", "is the key for NATSURL; the embedded server's scheduler key is made at start (set Auth to secure it)")
	case c.NATSURL == "" && (c.Port < -1 || c.Port > 65535):
		return bad("Port", "must be a port (0 to 65535) or -1 for any free one, got %d", c.Port)
	case c.Trees == nil || len(c.Trees.Trees) == 0:
		return bad("Trees", "no pool trees")
	case c.EventRetention <= 0:
		return bad("EventRetention", "must be positive, got %s", c.EventRetention)
	case c.EventMaxBytes <= 0:
		return bad("EventMaxBytes", "must be positive, got %d", c.EventMaxBytes)
	case c.JournalMaxBytes <= 0:
		return bad("JournalMaxBytes", "must be positive, got %d", c.JournalMaxBytes)
	case c.NATSURL == "" && c.MaxStore <= 0:
		return bad("MaxStore", "must be positive, got %d", c.MaxStore)
	case c.DashboardMaxBytes <= 0:
		return bad("DashboardMaxBytes", "must be positive, got %d", c.DashboardMaxBytes)
	case c.NATSURL == "" && c.MaxStore <= c.EventMaxBytes+c.JournalMaxBytes+c.DashboardMaxBytes:
		return bad("MaxStore", "must exceed what the events stream (%d bytes), the completions journal (%d bytes) and the dashboard stream (%d bytes) reserve of it, got %d (the buckets need the rest)",
			c.EventMaxBytes, c.JournalMaxBytes, c.DashboardMaxBytes, c.MaxStore)
	case c.GCPercent < 0:
		return bad("GCPercent", "must be >= 0, got %d", c.GCPercent)
	case c.EventBuffer <= 0:
		return bad("EventBuffer", "must be positive, got %d", c.EventBuffer)
	case c.Replicas < 1 || c.Replicas > 5:
		return bad("Replicas", "must be 1 to 5, got %d", c.Replicas)
	case c.NATSURL == "" && c.Replicas != 1:
		return bad("Replicas", "must be 1 with the embedded NATS server (a single server), got %d", c.Replicas)
	case c.StorageProbePeriod <= 0:
		return bad("StorageProbePeriod", "must be positive, got %s", c.StorageProbePeriod)
	case c.Logger == nil:
		return bad("Logger", "is nil")
	}
	if err := CheckHTTPAddr(c.HTTPAddr); err != nil {
		return err
	}
	if err := c.Actors.Validate(); err != nil {
		return cfgerr.Within(ErrConfig, "Actors", err)
	}
	if err := c.Leader.Validate(); err != nil {
		return cfgerr.Within(ErrConfig, "Leader", err)
	}
	if err := c.Dashboard.Validate(); err != nil {
		return cfgerr.Within(ErrConfig, "Dashboard", err)
	}
	return nil
}
