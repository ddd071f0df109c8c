package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sharetree/sharetree/internal/loadgen"
	"github.com/sharetree/sharetree/internal/wire"
)

// errTargetsMissed is returned by `load --check` when a target is not met.
var errTargetsMissed = errors.New("load: targets not met")

func newLoadCmd() *cobra.Command {
	cfg := loadgen.DefaultConfig()
	var (
		nodeRes, jobRes, output, cpuProfile, memProfile, heapProfile, traceFile, logLevel string
		check, serve, serverProcess                                                       bool
		port                                                                              int
	)
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Drive a scheduler with thousands of simulated node agents and report heartbeat and job-start throughput",
		Long: "load submits --operations operations of short simulated jobs, then runs --agents simulated node agents that\n" +
			"heartbeat every --heartbeat-period over real NATS (--agents-per-connection agents share a connection), and\n" +
			"reports heartbeats per second, the heartbeat round trip (p50/p90/p99/max, and per half of the window to show\n" +
			"a growing backlog), job starts per second (in the window and during the initial fill of the slots), slot\n" +
			"utilisation and the process's CPU. The first --warmup is excluded from the figures.\n\n" +
			"By default it starts its own scheduler in-process (embedded NATS in a temporary directory, one tree \"load\"\n" +
			"with --pools pools load-0 … load-<n-1>, operation-count limits raised so that every operation runs). With\n" +
			"--nats-url it targets a running scheduler: its tree must hold those pools (or use --pools 0).\n\n" +
			"--server-process runs that scheduler in a child process (this command with --serve) so that the generator\n" +
			"does not share the scheduler's Go runtime; the report then shows the two processes' CPU apart, and\n" +
			"--cpuprofile, --memprofile, --heapprofile and --trace profile the scheduler process over its whole life.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput("load", output); err != nil {
				return err
			}
			logger, err := newLogger(cmd.ErrOrStderr(), logLevel)
			if err != nil {
				return err
			}
			cfg.Logger = logger
			if cfg.NodeResources, err = wire.ParseResources(nodeRes); err != nil {
				return usageError{fmt.Errorf("--node-resources: %w", err)}
			}
			if cfg.JobResources, err = wire.ParseResources(jobRes); err != nil {
				return usageError{fmt.Errorf("--job-resources: %w", err)}
			}
			if err := checkLoadFlags(&cfg); err != nil {
				return err
			}
			if serve && serverProcess {
				return usageError{errors.New("--serve and --server-process exclude each other")}
			}
			if serverProcess && cfg.NATSURL != "" {
				return usageError{errors.New("--server-process and --nats-url exclude each other")}
			}
			if port < -1 || port > 65535 {
				return usageError{fmt.Errorf("--port %d: want a port (0 to 65535) or -1 for any free port", port)}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if serverProcess {
				child, err := startServerProcess(cmd)
				if err != nil {
					return err
				}
				defer child.stop()
				cfg.NATSURL, cfg.ServerPID = child.url, child.cmd.Process.Pid
				cpuProfile, memProfile, heapProfile, traceFile = "", "", "", "" // the child's
			}
			// Each profile goes to a file created now (closed when the
			// command returns).
			for _, out := range []struct {
				flag, path string
				dst        *io.Writer
			}{
				{"cpuprofile", cpuProfile, &cfg.CPUProfile},
				{"memprofile", memProfile, &cfg.MemProfile},
				{"heapprofile", heapProfile, &cfg.HeapProfile},
				{"trace", traceFile, &cfg.Trace},
			} {
				if out.path == "" {
					continue
				}
				f, err := os.Create(out.path)
				if err != nil {
					return fmt.Errorf("--%s: %w", out.flag, err)
				}
				defer f.Close()
				*out.dst = f
			}
			if serve {
				return serveLoad(ctx, cmd, cfg, port)
			}
			rep, err := loadgen.Run(ctx, cfg)
			if err != nil {
				return err
			}
			if output == "json" {
				data, err := rep.JSON()
				if err != nil {
					return err
				}
				if _, err := fmt.Fprintf(cmd.OutOrStdout(), "%s\n", data); err != nil {
					return err
				}
			} else if _, err := fmt.Fprint(cmd.OutOrStdout(), rep.String()); err != nil {
				return err
			}
			if check {
				for _, c := range rep.Checks {
					if !c.OK {
						return errTargetsMissed
					}
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Agents, "agents", cfg.Agents, "simulated node agents")
	f.IntVar(&cfg.Operations, "operations", cfg.Operations, "operations submitted before the agents start")
	f.IntVar(&cfg.Pools, "pools", cfg.Pools, "pools load-0 … load-<n-1> the operations are spread over (0: no pool)")
	f.IntVar(&cfg.JobsPerOperation, "jobs-per-operation", 0, "jobs of each operation (0: enough to keep every slot busy for the whole run)")
	f.DurationVar(&cfg.Duration, "duration", cfg.Duration, "measured window")
	f.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "time before the window, excluded from the figures")
	f.DurationVar(&cfg.HeartbeatPeriod, "heartbeat-period", cfg.HeartbeatPeriod, "heartbeat period of every agent (and of the embedded scheduler)")
	f.DurationVar(&cfg.HeartbeatTimeout, "heartbeat-timeout", cfg.HeartbeatTimeout, "wait for a heartbeat's response before counting it failed")
	f.DurationVar(&cfg.JobDuration, "job-duration", cfg.JobDuration, "duration of each simulated job")
	f.StringVar(&nodeRes, "node-resources", "cpu=8,user_slots=8", "resources of each agent's node")
	f.StringVar(&jobRes, "job-resources", "cpu=1,user_slots=1", "resources of each job")
	f.IntVar(&cfg.AgentsPerConn, "agents-per-connection", cfg.AgentsPerConn, "agents sharing one NATS connection and one sending goroutine")
	f.StringVar(&cfg.NodePrefix, "node-prefix", cfg.NodePrefix, "node ids are <prefix>-<index>")
	f.StringVar(&cfg.NATSURL, "nats-url", "", "target the scheduler on this NATS server instead of starting one")
	f.BoolVar(&serverProcess, "server-process", false, "start the scheduler in a child process (this command with --serve) instead of in-process")
	f.BoolVar(&serve, "serve", false, "only run the scheduler a load run would embed, print \"nats_url <url>\" and serve until interrupted or stdin closes")
	f.IntVar(&port, "port", -1, "with --serve: the NATS port (-1: any free port)")
	f.StringVar(&cfg.DataDir, "data-dir", "", "JetStream directory of the embedded scheduler (default: a temporary directory, removed)")
	f.BoolVar(&cfg.SyncAlways, "sync-always", cfg.SyncAlways, "the embedded scheduler fsyncs JetStream writes before acknowledging them, as sharetree server does by default")
	f.DurationVar(&cfg.FairShareUpdatePeriod, "fair-share-update-period", 0, "fair_share_update_period of the embedded scheduler's tree (0: the default, 200ms)")
	f.IntVar(&cfg.MaxHeartbeatPasses, "max-heartbeat-passes", cfg.MaxHeartbeatPasses, "the embedded scheduler's heartbeat shedding limit (see sharetree server --max-heartbeat-passes; 0: no shedding)")
	f.DurationVar(&cfg.JournalBatchInterval, "journal-batch-interval", cfg.JournalBatchInterval, "least time between two writes of the embedded scheduler's completions journal (0: as soon as the previous write ended)")
	f.DurationVar(&cfg.Targets.P99, "target-p99", cfg.Targets.P99, "heartbeat round-trip p99 target (0: no check)")
	f.Float64Var(&cfg.Targets.StartsPerSecond, "target-starts", cfg.Targets.StartsPerSecond, "job starts per second target (0: no check)")
	f.BoolVar(&check, "check", false, "exit with status 1 when a target is not met")
	f.StringVar(&traceFile, "trace", "", "write a runtime execution trace (go tool trace) of the measured window to this file")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the measured window (scheduler included when embedded) to this file")
	f.StringVar(&memProfile, "memprofile", "", "write the allocation profile (go tool pprof -sample_index=alloc_space; since the process started) at the end of the window to this file; its inuse figures are as of the last garbage collection")
	f.StringVar(&heapProfile, "heapprofile", "", "write the in-use heap profile (go tool pprof -sample_index=inuse_space) at the end of the window to this file, after a garbage collection run once the window's figures are taken")
	f.StringVarP(&output, "output", "o", "table", "output format: json or table")
	f.StringVar(&logLevel, "log-level", "warn", "debug, info, warn or error")
	return cmd
}

// checkLoadFlags validates the configuration the flags made, naming the
// flag of a bad field.
func checkLoadFlags(cfg *loadgen.Config) error {
	if err := cfg.Validate(); err != nil {
		return configError(err, loadFlags)
	}
	return nil
}

// serverChild is the scheduler process of `load --server-process`.
type serverChild struct {
	cmd   *exec.Cmd
	stdin io.Closer
	url   string
	done  chan error
}

// startServerProcess starts this command again with --serve and the flags
// given to this one, and waits for the URL it prints.
func startServerProcess(cmd *cobra.Command) (*serverChild, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--server-process: %w", err)
	}
	args := []string{"load", "--serve"}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if f.Name != "server-process" {
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	c := exec.Command(exe, args...)
	c.Stderr = cmd.ErrOrStderr()
	stdin, err := c.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("--server-process: %w", err)
	}
	child := &serverChild{cmd: c, stdin: stdin, done: make(chan error, 1)}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	go func() { _, _ = io.Copy(io.Discard, stdout); child.done <- c.Wait() }()
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "nats_url ")
	if err != nil || !ok {
		child.stop()
		return nil, fmt.Errorf("--server-process: the scheduler process did not start (read %q: %v)", line, err)
	}
	child.url = url
	return child, nil
}

// stop ends the scheduler process (SIGTERM, then SIGKILL after 30 s).
func (s *serverChild) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.stdin.Close()
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// serveLoad is `load --serve`: the scheduler alone, profiled over its whole
// life into cfg.CPUProfile, cfg.MemProfile and cfg.Trace (opened by the
// caller) when set, until ctx ends or stdin closes (the parent's end);
// loadgen.Serve writes cfg.HeapProfile then, before the scheduler stops.
func serveLoad(ctx context.Context, cmd *cobra.Command, cfg loadgen.Config, port int) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, cmd.InOrStdin())
		cancel()
	}()
	if cfg.CPUProfile != nil {
		if err := pprof.StartCPUProfile(cfg.CPUProfile); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	if cfg.Trace != nil {
		if err := trace.Start(cfg.Trace); err != nil {
			return fmt.Errorf("--trace: %w", err)
		}
		defer trace.Stop()
	}
	if cfg.MemProfile != nil {
		defer func() {
			if werr := pprof.Lookup("allocs").WriteTo(cfg.MemProfile, 0); werr != nil && err == nil {
				err = fmt.Errorf("--memprofile: %w", werr)
			}
		}()
	}
	return loadgen.Serve(ctx, cfg, port, func(url string) {
		_, _ = fmt.Fprintf(cmd.OutOrStdout(), "nats_url %s\n", url)
	})
}
