package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Exit statuses.
const (
	exitOK         = 0
	exitDrainFail  = 1
	exitUsage      = 2
	exitServeError = 3
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// run parses the flags, serves until an interruption signal and drains.
func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("graceful-service", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := config{}
	fs.StringVar(&cfg.registryDir, "registry-dir", "", "directory of the service registry (required)")
	fs.StringVar(&cfg.id, "id", "", "instance id (default $SHARETREE_JOB_ID)")
	fs.StringVar(&cfg.listen, "listen", "127.0.0.1:0", "address to listen on")
	fs.DurationVar(&cfg.workDefault, "work", 50*time.Millisecond, "work time of a /work request without ?ms")
	fs.DurationVar(&cfg.drainTimeout, "drain-timeout", 5*time.Minute, "how long in-flight requests may take after the interruption signal")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if cfg.id == "" {
		cfg.id = os.Getenv("SHARETREE_JOB_ID")
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if err := cfg.validate(); err != nil {
		log.Error("bad configuration", "err", err)
		return exitUsage
	}
	log = log.With("id", cfg.id)

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)

	s, err := start(cfg, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitServeError
	}
	select {
	case sig := <-sigs:
		return s.drain(sig, sigs)
	case err := <-s.serveErr:
		log.Error("serving failed", "err", err)
		s.unregister()
		return exitServeError
	}
}

// config is the service's settings.
type config struct {
	registryDir  string
	id           string
	listen       string
	workDefault  time.Duration
	drainTimeout time.Duration
}

func (c config) validate() error {
	switch {
	case c.registryDir == "":
		return fmt.Errorf("--registry-dir is required")
	case c.id == "":
		return fmt.Errorf("no instance id: set --id or $SHARETREE_JOB_ID")
	case c.workDefault < 0 || c.workDefault > maxWork:
		return fmt.Errorf("--work must be in [0, %s], got %s", maxWork, c.workDefault)
	case c.drainTimeout <= 0:
		return fmt.Errorf("--drain-timeout must be > 0, got %s", c.drainTimeout)
	}
	return nil
}
