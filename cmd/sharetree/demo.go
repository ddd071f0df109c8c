package main

import (
	_ "embed"

	"github.com/spf13/cobra"

	"github.com/sharetree/sharetree/internal/scenario"
)

//go:embed examples/demo.yaml
var demoScenario []byte

func newDemoCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Show the fair-share engine at work on the built-in example cluster",
		Long: "demo runs the what-if calculator on the built-in example (examples/demo.yaml): the pool-tree\n" +
			"documentation's project pools (adhoc, batch, backup) beside a burst and a relaxed integral pool, through\n" +
			"steps that show guarantees, weights, integral volumes and operation limits. The live demo (scheduler,\n" +
			"node agents and NATS in one process) replaces it when the running scheduler lands.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput("demo", output); err != nil {
				return err
			}
			f, err := scenario.Parse("examples/demo.yaml", demoScenario)
			if err != nil {
				return err
			}
			return runAndWrite(cmd, f, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: json or table")
	return cmd
}
