package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sharetree/sharetree/internal/scenario"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

func newApplyCmd() *cobra.Command {
	var (
		cf            configFlags
		file          string
		prune, dryRun bool
	)
	cmd := &cobra.Command{
		Use:   "apply -f TREES.yaml [--prune] [--dry-run]",
		Short: "Make the live pool trees match a trees file (create, update, and with --prune remove)",
		Long: "apply reads a trees file (the format of `sharetree server --pools`: version, default_tree, trees with\n" +
			"name, config and pools), validates the whole resulting configuration, and writes what differs. With\n" +
			"--prune, trees and pools the file does not name are removed (refused while they have operations).\n" +
			"--dry-run prints the changes without writing. Exit status 2 is bad command-line input or a file that\n" +
			"does not parse, 1 a configuration the scheduler refused.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usageError{errors.New("apply: -f TREES.yaml is required")}
			}
			if err := cf.check(); err != nil {
				return err
			}
			data, err := readFile(file)
			if err != nil {
				return err
			}
			if _, err := scenario.DecodeTrees(file, data); err != nil {
				return err
			}
			return withClient(cmd, &cf, func(c *cfgClient) error {
				r, err := c.Apply(c.ctx, data, prune, dryRun)
				if err != nil {
					return err
				}
				return writeApply(cmd.OutOrStdout(), cf.output, r)
			})
		},
	}
	cf.add(cmd)
	cmd.Flags().StringVarP(&file, "file", "f", "", "trees file (YAML or JSON; - for stdin)")
	cmd.Flags().BoolVar(&prune, "prune", false, "remove the trees and pools the file does not name")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the changes without writing them")
	return cmd
}

// changeOut is one change as apply prints it.
type changeOut struct {
	Action   string          `json:"action"`
	Kind     string          `json:"kind"`
	Tree     string          `json:"tree,omitempty"`
	Pool     string          `json:"pool,omitempty"`
	Keys     []string        `json:"keys,omitempty"`
	Before   json.RawMessage `json:"before,omitempty"`
	After    json.RawMessage `json:"after,omitempty"`
	Revision uint64          `json:"revision,omitempty"`
}

func writeApply(w io.Writer, output string, r *pb.ApplyResponse) error {
	changes := make([]changeOut, 0, len(r.GetChanges()))
	for _, c := range r.GetChanges() {
		co := changeOut{
			Action: strings.ToLower(strings.TrimPrefix(c.GetAction().String(), "CONFIG_CHANGE_ACTION_")),
			Kind:   strings.ToLower(strings.TrimPrefix(c.GetKind().String(), "CONFIG_OBJECT_KIND_")),
			Tree:   c.GetTree(), Pool: c.GetPool(), Keys: c.GetKeys(), Revision: c.GetRevision(),
		}
		if c.GetBefore() != "" {
			co.Before = json.RawMessage(c.GetBefore())
		}
		if c.GetAfter() != "" {
			co.After = json.RawMessage(c.GetAfter())
		}
		changes = append(changes, co)
	}
	if output != "table" {
		return writeOut(w, output, map[string]any{"applied": r.GetApplied(), "changes": changes})
	}
	if len(changes) == 0 {
		_, err := fmt.Fprintln(w, "no changes: the configuration already matches")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION\tOBJECT\tKEYS")
	for _, c := range changes {
		obj := c.Kind
		switch {
		case c.Pool != "":
			obj = fmt.Sprintf("pool %s/%s", c.Tree, c.Pool)
		case c.Tree != "":
			obj = "tree " + c.Tree
		}
		keys := describeKeys(c)
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Action, obj, keys)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.GetApplied() {
		_, err := fmt.Fprintf(w, "applied %d changes\n", len(changes))
		return err
	}
	_, err := fmt.Fprintf(w, "dry run: %d changes, nothing written\n", len(changes))
	return err
}

// describeKeys prints the keys of a change with their new values (old ->
// new for updates).
func describeKeys(c changeOut) string {
	before, after := configValue(c.Before), configValue(c.After)
	parts := make([]string, 0, len(c.Keys))
	for _, k := range c.Keys {
		b, inB := before[k]
		a, inA := after[k]
		switch {
		case c.Action == "remove":
			parts = append(parts, k)
		case inB && inA:
			parts = append(parts, fmt.Sprintf("%s: %s -> %s", k, compact(b), compact(a)))
		case inA:
			parts = append(parts, fmt.Sprintf("%s: %s", k, compact(a)))
		default:
			parts = append(parts, fmt.Sprintf("%s: (removed)", k))
		}
	}
	return strings.Join(parts, "; ")
}
