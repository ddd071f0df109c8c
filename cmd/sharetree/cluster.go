package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

func newClusterCmd() *cobra.Command {
	var cf configFlags
	cluster := &cobra.Command{Use: "cluster", Short: "Show and change the cluster attributes (default_tree)", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() }}
	cf.add(cluster)
	get := &cobra.Command{
		Use: "get", Short: "Show the cluster attributes", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withClient(cmd, &cf, func(c *cfgClient) error {
				d, err := c.GetCluster(c.ctx)
				if err != nil {
					return err
				}
				return writeDoc(cmd.OutOrStdout(), cf.output, docOut{Revision: d.GetRevision(), Config: json.RawMessage(d.GetConfig())})
			})
		},
	}
	var rev uint64
	set := &cobra.Command{
		Use: "set KEY VALUE", Short: "Change a cluster attribute", Example: "  sharetree cluster set default_tree physical",
		Args: exactArgs(2, "KEY VALUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "default_tree" {
				return usageError{fmt.Errorf("%s: unknown key %q (want default_tree)", cmd.CommandPath(), args[0])}
			}
			if _, err := treeName(cmd, args[1]); err != nil {
				return err
			}
			return withClient(cmd, &cf, func(c *cfgClient) error {
				d, err := c.SetCluster(c.ctx, &pb.SetClusterRequest{Key: args[0], Value: args[1], ExpectedRevision: rev})
				if err != nil {
					return err
				}
				return writeDoc(cmd.OutOrStdout(), cf.output, docOut{Revision: d.GetRevision(), Config: json.RawMessage(d.GetConfig())})
			})
		},
	}
	set.Flags().Uint64Var(&rev, "revision", 0, "change only if the attributes are at this revision")
	cluster.AddCommand(get, set)
	return cluster
}
