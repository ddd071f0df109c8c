package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sharetree/sharetree/internal/chart"
	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/internal/sim"
	"github.com/sharetree/sharetree/scheduler"
)

func newSimCmd() *cobra.Command {
	var file, out, resource string
	cmd := &cobra.Command{
		Use:   "sim -f FILE [--out DIR]",
		Short: "Simulate a cluster, a pool tree and a workload on virtual time, with plots",
		Long: "sim runs a simulation file (YAML or JSON, see docs/SIM.md: nodes, a pool tree, operations submitted over\n" +
			"time) through the scheduler's own admission, fair-share engine, job placement and preemption on virtual\n" +
			"time, and prints what happened to every operation and pool. The same file always gives the same result.\n" +
			"With --out DIR it also writes report.html (the seeds' figures per pool, no script, works offline),\n" +
			"pools.csv (every pool's usage, demand, fair share and volume per sample) and operations.csv.\n" +
			"Bad input exits with status 2 and a message naming the file and key.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usageError{fmt.Errorf("sim: -f FILE is required")}
			}
			r, err := scheduler.ParseResourceType(resource)
			if err != nil {
				return usageError{fmt.Errorf("--resource: %w", err)}
			}
			f, err := scenario.ParseSimFile(file)
			if err != nil {
				return err
			}
			res, err := sim.Run(f)
			if err != nil {
				return err
			}
			if out != "" {
				if err := writeSimFiles(out, f, res, r); err != nil {
					return err
				}
			}
			return printSim(cmd.OutOrStdout(), f, res, r, out)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "simulation file (YAML or JSON)")
	cmd.Flags().StringVar(&out, "out", "", "directory to write report.html, pools.csv and operations.csv into (created if missing)")
	cmd.Flags().StringVar(&resource, "resource", "cpu", "resource of the summary and the charts: user_slots, cpu, gpu, memory or network")
	return cmd
}

// writeSimFiles writes the report and the CSV files into dir.
func writeSimFiles(dir string, f *scenario.SimFile, res *sim.Result, r scheduler.ResourceType) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("sim: --out: %w", err)
	}
	for _, w := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"report.html", func(w io.Writer) error {
			return sim.WriteHTML(w, res, r, len(f.Cluster.Nodes), f.Simulation.SamplePeriod)
		}},
		{"pools.csv", func(w io.Writer) error { return sim.WriteSeriesCSV(w, res) }},
		{"operations.csv", func(w io.Writer) error { return sim.WriteOperationsCSV(w, res) }},
	} {
		path := filepath.Join(dir, w.name)
		file, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("sim: %w", err)
		}
		err = w.write(file)
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("sim: %s: %w", path, err)
		}
	}
	return nil
}

// printSim prints the counts, every operation and every pool's mean usage
// and fair share in resource r.
func printSim(w io.Writer, f *scenario.SimFile, res *sim.Result, r scheduler.ResourceType, out string) error {
	name := res.Name
	if name == "" {
		name = f.Path
	}
	fmt.Fprintf(w, "sharetree sim: %s\n%s of virtual time, %d nodes, %d operations, %d fair-share updates, %d node passes\n",
		name, res.Duration, len(f.Cluster.Nodes), len(res.Operations), res.Counts.Updates, res.Counts.NodePasses)
	c := res.Counts
	fmt.Fprintf(w, "jobs: %d started, %d completed, %d preempted, %d gracefully interrupted (%s of job time lost); %d operations refused\n\n",
		c.JobStarts, c.JobCompletions, c.Preemptions, c.GracefulInterrupts, c.LostJobTime.Round(1e8), c.Refused)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OPERATION\tPOOL\tSTATE\tSUBMITTED\tFIRST JOB AFTER\tFINISHED AFTER\tJOBS DONE\tINTERRUPTED\t")
	for _, o := range res.Operations {
		pool := o.Pool
		if pool == "" {
			pool = scheduler.RootID
		}
		start, finish, submit := "-", "-", "-"
		if o.Submitted {
			submit = o.SubmitAt.String()
		}
		if o.Started {
			start = (o.StartAt - o.SubmitAt).Round(1e8).String()
		}
		if o.Finished {
			finish = (o.FinishAt - o.SubmitAt).Round(1e8).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%d\t\n", o.ID, pool, o.State, submit, start, finish, o.Completed, o.Jobs, o.Interrupted)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "POOL\tMEAN USAGE\tMEAN FAIR SHARE\tMEAN DEMAND\tSTARVING SAMPLES\t\n")
	for i, p := range res.Pools {
		var usage, fair, demand float64
		starving := 0
		for _, s := range res.Samples {
			ps := &s.Pools[i]
			usage, fair, demand = usage+ps.Usage[r], fair+ps.FairShare[r], demand+ps.Demand[r]
			if ps.Starvation != scheduler.NonStarving {
				starving++
			}
		}
		n := float64(max(len(res.Samples), 1))
		indent := strings.Repeat("  ", p.Depth)
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%d/%d\t\n", indent, p.Name, chart.Amount(r, usage/n), chart.Amount(r, fair/n), chart.Amount(r, demand/n), starving, len(res.Samples))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "(%s, over %d samples)\n", r, len(res.Samples))
	if out != "" {
		fmt.Fprintf(w, "wrote %s, %s and %s\n", filepath.Join(out, "report.html"), filepath.Join(out, "pools.csv"), filepath.Join(out, "operations.csv"))
	}
	return nil
}
