package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sharetree/sharetree/internal/scenario"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

func newPoolCmd() *cobra.Command {
	var cf configFlags
	pool := &cobra.Command{Use: "pool", Short: "Create, show, change and remove pools", Args: noArgs,
		Long: "Pools live in the scheduler's configuration bucket and change while it runs. A pool's document holds\n" +
			"parent and the pool keys of a trees file (weight, strong_guarantee_resources, integral_guarantees,\n" +
			"max_running_operation_count, config_presets, ...). Exit status 2 is bad command-line input, 1 a request\n" +
			"the scheduler refused.",
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() }}
	cf.add(pool)

	var createDoc docSource
	var parent string
	create := &cobra.Command{
		Use: "create TREE/POOL [--parent PARENT] [-f FILE | --config DOC]", Short: "Create a pool",
		Example: "  sharetree pool create physical/research --parent project-root --config '{weight: 2}'",
		Args:    exactArgs(1, "TREE/POOL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			tree, name, err := treePool(cmd, args[0])
			if err != nil {
				return err
			}
			doc, err := poolDocument(&createDoc)
			if err != nil {
				return err
			}
			if parent != "" {
				if err := subjects.ValidateToken("--parent", parent); err != nil {
					return usageError{err}
				}
				if doc, err = withParent(doc, parent); err != nil {
					return err
				}
			}
			return withClient(cmd, &cf, func(c *cfgClient) error {
				d, err := c.CreatePool(c.ctx, tree, name, string(doc))
				if err != nil {
					return err
				}
				return writeDoc(cmd.OutOrStdout(), cf.output, poolOut(d))
			})
		},
	}
	createDoc.add(create, "the pool's")
	create.Flags().StringVar(&parent, "parent", "", "parent pool (default: the root)")

	get := &cobra.Command{
		Use: "get TREE/POOL", Short: "Show a pool's configuration", Args: exactArgs(1, "TREE/POOL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			tree, name, err := treePool(cmd, args[0])
			if err != nil {
				return err
			}
			return withClient(cmd, &cf, func(c *cfgClient) error {
				d, err := c.GetPool(c.ctx, tree, name)
				if err != nil {
					return err
				}
				return writeDoc(cmd.OutOrStdout(), cf.output, poolOut(d))
			})
		},
	}

	var setDoc docSource
	var setRev uint64
	set := &cobra.Command{
		Use:   "set TREE/POOL KEY VALUE | set TREE/POOL -f FILE",
		Short: "Change one key of a pool (VALUE is YAML, null removes the key), or replace its whole document",
		Example: "  sharetree pool set physical/research weight 2\n" +
			"  sharetree pool set physical/research integral_guarantees '{guarantee_type: burst, resource_flow: {cpu: 1000}, burst_guarantee_resources: {cpu: 2000}}'\n" +
			"  sharetree pool set physical/research resource_limits.cpu 64\n" +
			"  sharetree pool set physical/research weight null",
		Args: rangeArgs(1, 3, "TREE/POOL KEY VALUE, or TREE/POOL with -f FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			tree, name, err := treePool(cmd, args[0])
			if err != nil {
				return err
			}
			req := &pb.SetPoolRequest{Tree: tree, Pool: name, ExpectedRevision: setRev}
			if err := setArgs(cmd, args[1:], &setDoc, &req.Key, &req.Value, &req.Config, poolDocument); err != nil {
				return err
			}
			return withClient(cmd, &cf, func(c *cfgClient) error {
				d, err := c.SetPool(c.ctx, req)
				if err != nil {
					return err
				}
				return writeDoc(cmd.OutOrStdout(), cf.output, poolOut(d))
			})
		},
	}
	setDoc.add(set, "the pool's whole")
	set.Flags().Uint64Var(&setRev, "revision", 0, "change only if the pool is at this revision (0: retry on concurrent changes)")

	var rmRev uint64
	remove := &cobra.Command{
		Use: "remove TREE/POOL", Short: "Remove a pool that has no child pools and no operations", Args: exactArgs(1, "TREE/POOL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			tree, name, err := treePool(cmd, args[0])
			if err != nil {
				return err
			}
			return withClient(cmd, &cf, func(c *cfgClient) error {
				r, err := c.RemovePool(c.ctx, tree, name, rmRev)
				if err != nil {
					return err
				}
				return writeRemoved(cmd.OutOrStdout(), cf.output, docOut{Tree: r.GetTree(), Pool: r.GetPool(), Revision: r.GetRevision()})
			})
		},
	}
	remove.Flags().Uint64Var(&rmRev, "revision", 0, "remove only if the pool is at this revision")

	list := &cobra.Command{
		Use: "list TREE", Short: "List a tree's pools, parents first", Args: exactArgs(1, "TREE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			tree, err := treeName(cmd, args[0])
			if err != nil {
				return err
			}
			return withClient(cmd, &cf, func(c *cfgClient) error {
				r, err := c.ListPools(c.ctx, tree)
				if err != nil {
					return err
				}
				return writePools(cmd.OutOrStdout(), cf.output, r)
			})
		},
	}
	pool.AddCommand(create, get, set, remove, list)
	return pool
}

// poolDocument reads a pool document and checks it locally.
func poolDocument(src *docSource) ([]byte, error) {
	data, name, err := src.read()
	if err != nil {
		return nil, err
	}
	if _, err := scenario.ParsePoolDoc(name, data); err != nil {
		return nil, err
	}
	return data, nil
}

// withParent adds --parent to a pool document.
func withParent(doc []byte, parent string) ([]byte, error) {
	d, err := scenario.ParsePoolDoc("--config", doc)
	if err != nil {
		return nil, err
	}
	if d.Config.Parent != "" && string(d.Config.Parent) != parent {
		return nil, usageError{fmt.Errorf("--parent %q and the document's parent %q differ", parent, d.Config.Parent)}
	}
	d.Config.Parent = scheduler.PoolID(parent)
	return json.Marshal(scenario.EncodePoolDoc(d))
}

func poolOut(d *pb.PoolDocument) docOut {
	return docOut{Tree: d.GetTree(), Pool: d.GetPool(), Revision: d.GetRevision(), Config: json.RawMessage(d.GetConfig())}
}

func writePools(w io.Writer, output string, r *pb.ListPoolsResponse) error {
	pools := make([]docOut, 0, len(r.GetPools()))
	for _, p := range r.GetPools() {
		pools = append(pools, poolOut(p))
	}
	if output != "table" {
		return writeOut(w, output, map[string]any{"pools": pools})
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POOL\tPARENT\tREVISION\tCONFIG")
	for _, p := range pools {
		m := configValue(p.Config)
		parent, _ := m["parent"].(string)
		delete(m, "parent")
		rest, _ := json.Marshal(m)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", p.Pool, parent, p.Revision, rest)
	}
	return tw.Flush()
}
