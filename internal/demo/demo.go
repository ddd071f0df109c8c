package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/server"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("demo: invalid config")

// Config configures a demo run.
type Config struct {
	// Duration stops the demo after this long; 0 runs until ctx is done.
	Duration time.Duration
	// Out receives the live view.
	Out io.Writer
	// Terminal redraws the view in place (ANSI); otherwise frames are
	// printed one after another.
	Terminal bool
	// Refresh is the view's period. Default 1s.
	Refresh time.Duration
	// Agents is the number of in-process node agents. Default 8.
	Agents int
	// Logger receives the scheduler's logs. Default: discard.
	Logger *slog.Logger
	// SeedTrees is the pool-tree seed's example as an apply file (required;
	// `sharetree demo` passes cmd/sharetree/examples/pool-trees.yaml), and
	// SeedName names it in errors. The demo adds its integral pools and
	// tree settings (trees.yaml) on top.
	SeedTrees []byte
	SeedName  string
	// HTTPAddr is the scheduler's HTTP listener (the orchid and metrics);
	// port 0 picks a free one, "" disables it.
	HTTPAddr string
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	switch {
	case c.Duration < 0:
		return fmt.Errorf("%w: duration %s must be >= 0", ErrConfig, c.Duration)
	case c.Out == nil:
		return fmt.Errorf("%w: no output", ErrConfig)
	case c.Refresh <= 0:
		return fmt.Errorf("%w: refresh %s must be positive", ErrConfig, c.Refresh)
	case c.Agents < 1 || c.Agents > 1000:
		return fmt.Errorf("%w: agents %d must be in [1, 1000]", ErrConfig, c.Agents)
	case len(c.SeedTrees) == 0:
		return fmt.Errorf("%w: no seed trees (the pool-tree example's apply file)", ErrConfig)
	}
	return nil
}

// Run runs the demo until ctx is done or the duration passes.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Refresh == 0 {
		cfg.Refresh = time.Second
	}
	if cfg.Agents == 0 {
		cfg.Agents = 8
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	if cfg.SeedName == "" {
		cfg.SeedName = "seed trees"
	}
	trees, err := demoTrees(cfg.SeedName, cfg.SeedTrees)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "sharetree-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	scfg := server.DefaultConfig()
	scfg.DataDir, scfg.Trees, scfg.Logger, scfg.HTTPAddr = dir, trees, cfg.Logger, cfg.HTTPAddr
	// The demo lasts minutes: a sample a second, pages reloading every 2s.
	scfg.Dashboard.Resolution, scfg.Dashboard.Refresh = time.Second, 2*time.Second
	srv, err := server.Start(ctx, scfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	nc, err := nats.Connect(srv.URL(), nats.Name("sharetree-demo"))
	if err != nil {
		return err
	}
	defer nc.Close()
	fmt.Fprintf(cfg.Out, "sharetree demo: scheduler on %s (epoch %d), %d agents; Ctrl-C to stop\n", srv.URL(), srv.Epoch(), cfg.Agents)
	if addr := srv.HTTPAddr(); addr != "" {
		fmt.Fprintf(cfg.Out, "dashboard: http://%s/dashboard/trees/physical\n", addr)
		fmt.Fprintf(cfg.Out, "orchid: http://%s/orchid/trees/physical (metrics: http://%s/metrics; sharetree get physical --nats-url %s)\n", addr, addr, srv.URL())
	}

	agentCtx, cancelAgents := context.WithCancel(ctx)
	agents, wait, err := startAgents(agentCtx, nc, cfg.Agents, dir)
	defer wait()
	if err != nil {
		cancelAgents()
		return err
	}
	defer cancelAgents()

	cl := client.New(nc, 5*time.Second)
	start := time.Now()
	pending := workload()
	ids := map[string]string{}
	tick := time.NewTicker(cfg.Refresh)
	defer tick.Stop()
	for {
		if ctx.Err() != nil {
			// Over (a tick and the end can be ready together, and select
			// may take the tick): nothing more is submitted.
			fmt.Fprintln(cfg.Out, "demo finished")
			return nil
		}
		for len(pending) > 0 && time.Since(start) >= pending[0].at {
			a := pending[0]
			pending = pending[1:]
			id, err := cl.Submit(ctx, a.spec)
			if err != nil {
				return fmt.Errorf("submit %s: %w", a.name, err)
			}
			ids[a.name] = id
		}
		counts := poolCounts(ctx, cl)
		started, completed := 0, 0
		for _, a := range agents {
			st := a.Stats()
			started += int(st.JobsStarted)
			completed += int(st.JobsCompleted)
		}
		if cfg.Terminal {
			fmt.Fprint(cfg.Out, "\033[H\033[2J")
		} else {
			fmt.Fprintln(cfg.Out)
		}
		render(cfg.Out, time.Since(start), srv.System().Result("physical"), counts, srv.System().NodeCount(), started, completed)
		select {
		case <-ctx.Done():
			fmt.Fprintln(cfg.Out, "demo finished")
			return nil
		case err := <-srv.Fatal():
			return err
		case <-tick.C:
		}
	}
}

// poolCounts counts running and pending operations per pool.
func poolCounts(ctx context.Context, cl *client.Client) map[string]counts {
	out := map[string]counts{}
	ops, err := cl.List(ctx, &pb.ListOperationsRequest{States: []pb.OperationState{
		pb.OperationState_OPERATION_STATE_RUNNING, pb.OperationState_OPERATION_STATE_PENDING}})
	if err != nil {
		return out
	}
	for _, o := range ops {
		for _, t := range o.GetTrees() {
			c := out[t.GetPool()]
			if o.GetState() == pb.OperationState_OPERATION_STATE_RUNNING {
				c.running++
			} else {
				c.pending++
			}
			out[t.GetPool()] = c
		}
	}
	return out
}

func startAgents(ctx context.Context, nc *nats.Conn, n int, dir string) ([]*nodeagent.Agent, func(), error) {
	var wg sync.WaitGroup
	agents := make([]*nodeagent.Agent, 0, n)
	for i := range n {
		acfg := nodeagent.DefaultConfig(fmt.Sprintf("node-%02d", i), scheduler.Resources{
			scheduler.CPU: 20, scheduler.Memory: 80 << 30, scheduler.UserSlots: 20,
		})
		acfg.WorkDir = dir
		a, err := nodeagent.New(acfg, nc)
		if err != nil {
			return nil, wg.Wait, err
		}
		agents = append(agents, a)
		wg.Add(1)
		go func() { defer wg.Done(); _ = a.Run(ctx) }()
	}
	return agents, wg.Wait, nil
}
