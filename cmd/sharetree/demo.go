package main

import (
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sharetree/sharetree/internal/demo"
	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/internal/server"
)

//go:embed examples/demo.yaml
var demoScenario []byte

// seedTrees is the pool-tree seed's example as an apply file: the demo's
// tree, with the demo's integral pools added.
//
//go:embed examples/pool-trees.yaml
var seedTrees []byte

func newDemoCmd() *cobra.Command {
	var (
		output   string
		whatIf   bool
		duration time.Duration
		refresh  time.Duration
		agents   int
		logLevel string
		httpAddr string
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a live scheduler with in-process agents and watch it share the cluster",
		Long: "demo starts, in one process, an embedded NATS server, the scheduler, 8 node agents running simulated\n" +
			"jobs, the pool-tree documentation's project pools (adhoc, batch, backup) beside a burst and a relaxed\n" +
			"integral pool, and a workload that shows guarantees, weights, integral pools and operation limits. It\n" +
			"prints each pool's fair share, usage and demand until Ctrl-C or --duration.\n" +
			"With --what-if it runs the what-if calculator on the same example instead (no scheduler).",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput("demo", output); err != nil {
				return err
			}
			if whatIf {
				f, err := scenario.Parse("examples/demo.yaml", demoScenario)
				if err != nil {
					return err
				}
				return runAndWrite(cmd, f, output)
			}
			if duration < 0 {
				return usageError{fmt.Errorf("--duration %s must be >= 0", duration)}
			}
			if refresh <= 0 {
				return usageError{fmt.Errorf("--refresh %s must be positive", refresh)}
			}
			if agents < 1 || agents > 1000 {
				return usageError{fmt.Errorf("--agents %d must be in [1, 1000]", agents)}
			}
			if err := server.CheckHTTPAddr(httpAddr); err != nil {
				return configError(err, map[string]string{"HTTPAddr": "http-addr"})
			}
			logger, err := newLogger(cmd.ErrOrStderr(), logLevel)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return demo.Run(ctx, demo.Config{
				Duration: duration, Out: cmd.OutOrStdout(), Terminal: isTerminal(cmd.OutOrStdout()),
				Refresh: refresh, Agents: agents, Logger: logger, HTTPAddr: httpAddr,
				SeedTrees: seedTrees, SeedName: "examples/pool-trees.yaml",
			})
		},
	}
	cmd.Flags().DurationVar(&duration, "duration", 0, "stop after this long (0: until Ctrl-C)")
	cmd.Flags().DurationVar(&refresh, "refresh", time.Second, "how often the view is redrawn")
	cmd.Flags().IntVar(&agents, "agents", 8, "number of in-process node agents (20 cores, 80 GiB, 20 slots each)")
	cmd.Flags().StringVar(&logLevel, "log-level", "error", "scheduler log level: debug, info, warn or error")
	cmd.Flags().StringVar(&httpAddr, "http-addr", "127.0.0.1:0", "host:port of the scheduler's HTTP listener (orchid, metrics); port 0 picks a free one, \"\" disables it")
	cmd.Flags().BoolVar(&whatIf, "what-if", false, "run the what-if calculator on the example instead of the live demo")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "what-if output format: json or table")
	return cmd
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
