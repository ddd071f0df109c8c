package natsembed

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("natsembed: invalid config")

// ErrStart is wrapped when the server does not come up.
var ErrStart = errors.New("natsembed: server did not start")

// Config configures an embedded server.
type Config struct {
	// Host to listen on. Default "127.0.0.1".
	Host string
	// Port to listen on; -1 picks a free port. Default -1.
	Port int
	// StoreDir holds JetStream's files. Required.
	StoreDir string
	// SyncAlways makes JetStream fsync every write before acknowledging it,
	// so an acknowledged write survives a power loss. Default false (the
	// server's periodic sync).
	SyncAlways bool
	// MaxPayload is the largest message in bytes. Default 8 MiB.
	MaxPayload int32
	// MaxStore is how many bytes of disk JetStream may use for all its
	// streams and buckets together. Streams with a size limit reserve it
	// when created (a stream whose limit does not fit is refused); the
	// rest is shared by those without one (the key-value buckets). A write
	// beyond it is refused ("insufficient resources"). Default 8 GiB.
	MaxStore int64
	// StartTimeout bounds the wait for the server to accept connections.
	// Default 10s.
	StartTimeout time.Duration
	// ServerName names the server in logs and monitoring. Default
	// "sharetree".
	ServerName string
	// Nkeys, when set, are the only users that may connect, each with its
	// permissions (see internal/natsauth); nil lets anyone connect.
	Nkeys []*server.NkeyUser
	// TLSCertFile and TLSKeyFile, when set (both), are the certificate
	// and key the server presents: every client connection must then use
	// TLS (in-process connections excepted).
	TLSCertFile, TLSKeyFile string
}

// DefaultMaxStore is Config.MaxStore's default: 8 GiB.
const DefaultMaxStore = 8 << 30

// Default returns the defaults with the given store directory.
func Default(storeDir string) Config {
	return Config{Host: "127.0.0.1", Port: -1, StoreDir: storeDir, MaxPayload: 8 << 20, MaxStore: DefaultMaxStore, StartTimeout: 10 * time.Second, ServerName: "sharetree"}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.StoreDir == "":
		return fmt.Errorf("%w: store dir is empty", ErrConfig)
	case c.Port < -1 || c.Port > 65535:
		return fmt.Errorf("%w: port %d is not in [-1, 65535]", ErrConfig, c.Port)
	case c.MaxPayload <= 0:
		return fmt.Errorf("%w: max payload %d must be positive", ErrConfig, c.MaxPayload)
	case c.MaxStore <= 0:
		return fmt.Errorf("%w: max store %d must be positive", ErrConfig, c.MaxStore)
	case c.StartTimeout <= 0:
		return fmt.Errorf("%w: start timeout %s must be positive", ErrConfig, c.StartTimeout)
	case (c.TLSCertFile == "") != (c.TLSKeyFile == ""):
		return fmt.Errorf("%w: TLS needs both a certificate and a key file (certificate %q, key %q)", ErrConfig, c.TLSCertFile, c.TLSKeyFile)
	}
	return nil
}

// ErrReload is wrapped when the server refuses new options.
var ErrReload = errors.New("natsembed: reload refused")

// Server is a running embedded server.
type Server struct {
	*server.Server
	js   *server.JetStreamConfig // what JetStream started with
	opts *server.Options         // what it started with, before the server's defaults
}

// Start starts a server and waits until it accepts connections.
func Start(cfg Config, logger *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opts := &server.Options{
		ServerName:         cfg.ServerName,
		Host:               cfg.Host,
		Port:               cfg.Port,
		JetStream:          true,
		StoreDir:           cfg.StoreDir,
		SyncAlways:         cfg.SyncAlways,
		MaxPayload:         cfg.MaxPayload,
		NoSigs:             true,
		NoLog:              true,
		JetStreamMaxMemory: 1 << 30,
		JetStreamMaxStore:  cfg.MaxStore,
		Nkeys:              cfg.Nkeys,
	}
	if cfg.TLSCertFile != "" {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: cfg.TLSCertFile, KeyFile: cfg.TLSKeyFile})
		if err != nil {
			return nil, fmt.Errorf("%w: TLS: %w", ErrConfig, err)
		}
		opts.TLSConfig, opts.TLS, opts.TLSTimeout = tc, true, 2
	}
	base := opts.Clone()
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	go s.Start()
	if !s.ReadyForConnections(cfg.StartTimeout) {
		s.Shutdown()
		return nil, fmt.Errorf("%w: not ready for connections after %s", ErrStart, cfg.StartTimeout)
	}
	if logger != nil {
		logger.Info("embedded nats-server started", "url", s.ClientURL(), "store_dir", cfg.StoreDir)
	}
	return &Server{Server: s, js: &server.JetStreamConfig{StoreDir: opts.StoreDir, MaxMemory: opts.JetStreamMaxMemory,
		MaxStore: opts.JetStreamMaxStore, SyncAlways: opts.SyncAlways}, opts: base}, nil
}

// SetUsers replaces the users allowed to connect (Config.Nkeys) while the
// server runs. Connections of users no longer listed are closed with an
// authorization violation (their reconnects are refused), and the new
// permissions apply to those that stay. Not safe for concurrent use. A
// server started without users cannot be given some (nor the reverse):
// that would open or close it to everyone.
func (s *Server) SetUsers(users []*server.NkeyUser) error {
	if (len(s.opts.Nkeys) == 0) != (len(users) == 0) {
		return fmt.Errorf("%w: a server started with %d users cannot be given %d: that would open it to anyone or close it to everyone", ErrReload, len(s.opts.Nkeys), len(users))
	}
	next := s.opts.Clone()
	next.Nkeys = users
	if err := s.ReloadOptions(next); err != nil {
		return fmt.Errorf("%w: %w", ErrReload, err)
	}
	s.opts = next
	return nil
}

// StopJetStream turns JetStream off, keeping its files, while the server
// goes on serving core NATS: every JetStream request then finds no
// responder, as during a storage outage (fault injection for tests).
func (s *Server) StopJetStream() error { return s.ShutdownJetStream() }

// StartJetStream turns JetStream on again, as it started, after
// StopJetStream: the streams come back from their files.
func (s *Server) StartJetStream() error {
	c := *s.js
	return s.EnableJetStream(&c)
}

// Stop shuts the server down and waits for it.
func (s *Server) Stop() {
	s.Shutdown()
	s.WaitForShutdown()
}
