package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sharetree/sharetree/internal/scenario"
)

func newFairshareCmd() *cobra.Command {
	var file, output string
	cmd := &cobra.Command{
		Use:   "fairshare -f FILE",
		Short: "What-if calculator: run fair-share updates on a scenario and report every element",
		Long: "fairshare reads a what-if scenario (YAML or JSON: a cluster, a pool tree, operations and optional steps)\n" +
			"and prints what the fair-share engine computes for every pool and operation: fair share and its split into\n" +
			"strong guarantee, integral guarantee and weight-proportional parts, demand, usage, limits, integral volumes,\n" +
			"starvation status and pending reasons. Bad input exits with status 2 and a message naming the file and key.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usageError{fmt.Errorf("fairshare: -f FILE is required")}
			}
			if err := checkOutput("fairshare", output); err != nil {
				return err
			}
			f, err := scenario.ParseFile(file)
			if err != nil {
				return err
			}
			return runAndWrite(cmd, f, output)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "scenario file (YAML or JSON)")
	cmd.Flags().StringVarP(&output, "output", "o", "json", "output format: json or table")
	return cmd
}

// checkOutput validates an -o value.
func checkOutput(command, output string) error {
	if output != "json" && output != "table" {
		return usageError{fmt.Errorf("%s: -o must be json or table, got %q", command, output)}
	}
	return nil
}

// runAndWrite runs a parsed scenario and prints its report.
func runAndWrite(cmd *cobra.Command, f *scenario.File, output string) error {
	rep, err := scenario.Run(f)
	if err != nil {
		return err
	}
	if output == "table" {
		return scenario.WriteTable(cmd.OutOrStdout(), rep, f.Cluster.Total)
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", data)
	return err
}
