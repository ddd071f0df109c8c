package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/internal/treeconf"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

func newTreeCmd() *cobra.Command {
	var cf configFlags
	tree := &cobra.Command{Use: "tree", Short: "Create, show, change and remove pool trees", Args: noArgs,
		Long: "Pool trees live in the scheduler's configuration bucket and change while it runs. A tree's document\n" +
			"holds the keys of a trees file's `config` (main_resource, max_operation_count, node_tag_filter,\n" +
			"pool_config_presets, ...). Exit status 2 is bad command-line input, 1 a request the scheduler refused.",
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() }}
	cf.add(tree)

	var createDoc docSource
	create := &cobra.Command{
		Use: "create NAME [-f FILE | --config DOC]", Short: "Create a tree (the first tree becomes the default tree)",
		Args: exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := treeName(cmd, args[0])
			if err != nil {
				return err
			}
			doc, err := treeDocument(&createDoc)
			if err != nil {
				return err
			}
			return withClient(cmd, &cf, func(c *cfgClient) error {
				d, err := c.CreateTree(c.ctx, name, string(doc))
				if err != nil {
					return err
				}
				return writeDoc(cmd.OutOrStdout(), cf.output, treeOut(d))
			})
		},
	}
	createDoc.add(create, "the tree's")

	get := &cobra.Command{
		Use: "get NAME", Short: "Show a tree's configuration", Args: exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := treeName(cmd, args[0])
			if err != nil {
				return err
			}
			return withClient(cmd, &cf, func(c *cfgClient) error {
				d, err := c.GetTree(c.ctx, name)
				if err != nil {
					return err
				}
				return writeDoc(cmd.OutOrStdout(), cf.output, treeOut(d))
			})
		},
	}

	var setDoc docSource
	var setRev uint64
	set := &cobra.Command{
		Use:   "set NAME KEY VALUE | set NAME -f FILE",
		Short: "Change one key of a tree (VALUE is YAML, null removes the key), or replace its whole document",
		Example: "  sharetree tree set physical max_running_operation_count_per_pool 10\n" +
			"  sharetree tree set physical integral_guarantees.smooth_period 30s\n" +
			"  sharetree tree set physical -f physical.yaml --revision 12",
		Args: rangeArgs(1, 3, "NAME KEY VALUE, or NAME with -f FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := treeName(cmd, args[0])
			if err != nil {
				return err
			}
			req := &pb.SetTreeRequest{Tree: name, ExpectedRevision: setRev}
			if err := setArgs(cmd, args[1:], &setDoc, &req.Key, &req.Value, &req.Config, treeDocument); err != nil {
				return err
			}
			return withClient(cmd, &cf, func(c *cfgClient) error {
				d, err := c.SetTree(c.ctx, req)
				if err != nil {
					return err
				}
				return writeDoc(cmd.OutOrStdout(), cf.output, treeOut(d))
			})
		},
	}
	setDoc.add(set, "the tree's whole")
	set.Flags().Uint64Var(&setRev, "revision", 0, "change only if the tree is at this revision (0: retry on concurrent changes)")

	var rmRev uint64
	remove := &cobra.Command{
		Use: "remove NAME", Short: "Remove a tree that has no pools and no operations", Args: exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := treeName(cmd, args[0])
			if err != nil {
				return err
			}
			return withClient(cmd, &cf, func(c *cfgClient) error {
				r, err := c.RemoveTree(c.ctx, name, rmRev)
				if err != nil {
					return err
				}
				return writeRemoved(cmd.OutOrStdout(), cf.output, docOut{Tree: r.GetTree(), Revision: r.GetRevision()})
			})
		},
	}
	remove.Flags().Uint64Var(&rmRev, "revision", 0, "remove only if the tree is at this revision")

	list := &cobra.Command{
		Use: "list", Short: "List the trees", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withClient(cmd, &cf, func(c *cfgClient) error {
				r, err := c.ListTrees(c.ctx)
				if err != nil {
					return err
				}
				return writeTrees(cmd.OutOrStdout(), cf.output, r)
			})
		},
	}
	tree.AddCommand(create, get, set, remove, list)
	return tree
}

// treeDocument reads a tree document and checks it locally, so a bad file
// fails with its name and line before anything is sent.
func treeDocument(src *docSource) ([]byte, error) {
	data, name, err := src.read()
	if err != nil {
		return nil, err
	}
	if _, err := scenario.ParseTreeDoc(name, data); err != nil {
		return nil, err
	}
	return data, nil
}

// setArgs fills a set request from KEY VALUE or -f/--config.
func setArgs(cmd *cobra.Command, rest []string, src *docSource, key, value, config *string,
	read func(*docSource) ([]byte, error)) error {
	switch {
	case len(rest) == 2 && !src.given():
		*key, *value = rest[0], rest[1]
		return nil
	case len(rest) == 0 && src.given():
		doc, err := read(src)
		if err != nil {
			return err
		}
		*config = string(doc)
		if *config == "" {
			*config = "{}"
		}
		return nil
	}
	return usageError{fmt.Errorf("%s: give KEY VALUE, or the whole document with -f FILE or --config DOC", cmd.CommandPath())}
}

func treeOut(d *pb.TreeDocument) docOut {
	return docOut{Tree: d.GetTree(), Revision: d.GetRevision(), Config: json.RawMessage(d.GetConfig())}
}

func writeRemoved(w io.Writer, output string, d docOut) error {
	if output != "table" {
		return writeOut(w, output, map[string]any{"tree": d.Tree, "pool": d.Pool, "removed": true, "revision": d.Revision})
	}
	if d.Pool != "" {
		_, err := fmt.Fprintf(w, "removed pool %s/%s (it was at revision %d)\n", d.Tree, d.Pool, d.Revision)
		return err
	}
	_, err := fmt.Fprintf(w, "removed tree %s (it was at revision %d)\n", d.Tree, d.Revision)
	return err
}

func writeTrees(w io.Writer, output string, r *pb.ListTreesResponse) error {
	trees := make([]docOut, 0, len(r.GetTrees()))
	for _, t := range r.GetTrees() {
		trees = append(trees, treeOut(t))
	}
	if output != "table" {
		return writeOut(w, output, map[string]any{"default_tree": r.GetDefaultTree(), "trees": trees})
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TREE\tDEFAULT\tREVISION\tCONFIG")
	for _, t := range trees {
		def := ""
		if t.Tree == r.GetDefaultTree() {
			def = "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", t.Tree, def, t.Revision, t.Config)
	}
	return tw.Flush()
}

// cfgClient is a connected client and the command's context.
type cfgClient struct {
	*treeconf.Client
	ctx context.Context
}

// withClient connects, runs f and closes the connection.
func withClient(cmd *cobra.Command, cf *configFlags, f func(*cfgClient) error) error {
	nc, c, err := cf.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := withTimeout(cmd, cf.timeout)
	defer cancel()
	return f(&cfgClient{Client: c, ctx: ctx})
}
