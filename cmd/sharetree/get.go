package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/orchid"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

func newGetCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "get TREE | get TREE/POOL [ATTRIBUTE] | get op ID [ATTRIBUTE]",
		Short: "Show live attributes of a tree, a pool or an operation (the orchid)",
		Long: "get reads the scheduler's orchid over NATS: every attribute of the what-if report, live, with\n" +
			"operation counts, pending reasons and queue positions.\n\n" +
			"  get TREE                      the whole tree: its pools, then its operations\n" +
			"  get TREE/POOL [ATTRIBUTE]     one pool; TREE/<Root> is the root\n" +
			"  get op ID [ATTRIBUTE]         an operation, in each tree it is admitted in\n\n" +
			"ATTRIBUTE is an attribute name or a path into it: fair_share, fair_share.total, usage_share.cpu.\n" +
			"Exit status 2 is bad input (a bad name, an attribute no element has), 1 a request the scheduler\n" +
			"refused (an unknown tree, pool or operation, an attribute the element does not have).",
		Example: "  sharetree get physical\n" +
			"  sharetree get physical/research\n" +
			"  sharetree get physical/research fair_share.total -o json\n" +
			"  sharetree get 'physical/<Root>' operation_count\n" +
			"  sharetree get op 0191b6c2-7f3a pending_reason",
		Args: rangeArgs(1, 3, "TREE, TREE/POOL [ATTRIBUTE] or op ID [ATTRIBUTE]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			q, err := parseGet(cmd, args)
			if err != nil {
				return err
			}
			return cf.with(cmd, cf.timeout, func(ctx context.Context, c *client.Client) error {
				// The answer is rendered whole before anything is printed:
				// a reply that turns out bad halfway prints nothing.
				var out bytes.Buffer
				if err := getAndRender(ctx, orchid.NewClient(c), q, cf.output, &out); err != nil {
					return err
				}
				_, err := cmd.OutOrStdout().Write(out.Bytes())
				return err
			})
		},
	}
	cf.add(cmd)
	return cmd
}

// getAndRender asks the orchid what q asks and renders the answer to w.
func getAndRender(ctx context.Context, oc *orchid.Client, q getQuery, output string, w io.Writer) error {
	if q.op != "" {
		v, err := oc.Operation(ctx, q.op, q.path.Attribute)
		if err != nil {
			return err
		}
		return writeOperationView(w, output, v, q.path.Attribute)
	}
	doc, err := oc.Get(ctx, q.path)
	if err != nil {
		return err
	}
	switch {
	case output == "json":
		_, err = fmt.Fprintf(w, "%s\n", doc)
		return err
	case q.path.Kind == subjects.OrchidTree:
		return writeTreeView(w, doc)
	}
	return writeAttributes(w, strings.Join(q.path.Attribute, "."), doc)
}

// getQuery is what `sharetree get` asks: an orchid path, or an operation
// across its trees (op, with path.Attribute).
type getQuery struct {
	path subjects.OrchidPath
	op   string
}

// parseGet checks the arguments before anything is sent.
func parseGet(cmd *cobra.Command, args []string) (getQuery, error) {
	bad := func(err error) (getQuery, error) {
		return getQuery{}, usageError{fmt.Errorf("%s: %w", cmd.CommandPath(), err)}
	}
	var q getQuery
	var attr string
	switch {
	case args[0] == "op" && len(args) >= 2:
		if err := subjects.ValidateToken("operation id", args[1]); err != nil {
			return bad(err)
		}
		q.op = args[1]
		if len(args) == 3 {
			attr = args[2]
		}
	case strings.Contains(args[0], "/"):
		if len(args) > 2 {
			return bad(fmt.Errorf("want TREE/POOL [ATTRIBUTE], got %d arguments", len(args)))
		}
		tree, pool, _ := strings.Cut(args[0], "/")
		q.path = subjects.OrchidPath{Kind: subjects.OrchidPool, Tree: tree, Name: pool}
		if pool == scheduler.RootID {
			q.path.Kind, q.path.Name = subjects.OrchidRoot, ""
		}
		if len(args) == 2 {
			attr = args[1]
		}
	default:
		if len(args) > 1 {
			return bad(fmt.Errorf("an attribute needs TREE/POOL or op ID (TREE/%s for the root), got %q", scheduler.RootID, strings.Join(args, " ")))
		}
		q.path = subjects.OrchidPath{Kind: subjects.OrchidTree, Tree: args[0]}
	}
	if attr != "" {
		q.path.Attribute = strings.Split(attr, ".")
		if err := orchid.CheckAttribute(q.path.Attribute); err != nil {
			return bad(err)
		}
	}
	if q.op == "" {
		if _, err := subjects.Orchid(q.path); err != nil {
			return bad(err)
		}
	} else {
		for _, a := range q.path.Attribute {
			if err := subjects.ValidateToken("attribute", a); err != nil {
				return bad(err)
			}
		}
	}
	return q, nil
}

// attributeRows flattens a value into KEY VALUE rows: an object holding
// objects is split into its members, anything else is one row.
func attributeRows(key string, v json.RawMessage) [][2]string {
	fields, err := orchid.Fields(v)
	if err == nil && slices.ContainsFunc(fields, func(f orchid.Field) bool { return strings.HasPrefix(string(f.Value), "{") }) {
		var out [][2]string
		for _, f := range fields {
			k := f.Key
			if key != "" {
				k = key + "." + f.Key
			}
			out = append(out, attributeRows(k, f.Value)...)
		}
		return out
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		s = string(v)
	}
	return [][2]string{{key, s}}
}

// writeAttributes prints an element (or one attribute of it) as KEY VALUE
// rows in the document's order; a single plain value alone.
func writeAttributes(w io.Writer, key string, doc json.RawMessage) error {
	rows := attributeRows(key, doc)
	if len(rows) == 1 && rows[0][0] == key && key != "" {
		_, err := fmt.Fprintln(w, rows[0][1])
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ATTRIBUTE\tVALUE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", r[0], r[1])
	}
	return tw.Flush()
}

// element is what the tree table shows of a pool or an operation.
type element struct {
	Parent    string `json:"parent"`
	FairShare struct {
		Total map[string]float64 `json:"total"`
	} `json:"fair_share"`
	UsageShare       map[string]float64 `json:"usage_share"`
	DemandShare      map[string]float64 `json:"demand_share"`
	StarvationStatus string             `json:"starvation_status"`
	Operations       int                `json:"operation_count"`
	Running          int                `json:"running_operation_count"`
	Lightweight      int                `json:"lightweight_running_operation_count"`
	MaxRunning       int                `json:"max_running_operation_count"`
	State            string             `json:"state"`
	PendingReason    string             `json:"pending_reason"`
	QueuePosition    int                `json:"queue_position"`
}

// dominant is a share's largest component.
func dominant(s map[string]float64) float64 {
	m := 0.0
	for _, v := range s {
		m = max(m, v)
	}
	return m
}

// writeTreeView prints a tree's pools and operations, in the document's
// order, with their dominant shares.
func writeTreeView(w io.Writer, doc json.RawMessage) error {
	fields, err := orchid.Fields(doc)
	if err != nil {
		return err
	}
	section := func(name string) ([]orchid.Field, error) {
		for _, f := range fields {
			if f.Key == name {
				members, err := orchid.Fields(f.Value)
				if err != nil {
					return nil, fmt.Errorf("the tree's %s: %w", name, err)
				}
				return members, nil
			}
		}
		return nil, nil
	}
	pools, err := section("pools")
	if err != nil {
		return err
	}
	ops, err := section("operations")
	if err != nil {
		return err
	}
	var head struct {
		Tree       string `json:"tree"`
		UpdateTime string `json:"update_time"`
		Reviving   bool   `json:"reviving"`
	}
	if err := json.Unmarshal(doc, &head); err != nil {
		return err
	}
	fmt.Fprintf(w, "# tree %s, updated %s\n", head.Tree, head.UpdateTime)
	if head.Reviving {
		fmt.Fprintln(w, "# reviving: a new leader computed this before its nodes reported their jobs; usage may be too low")
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POOL\tPARENT\tFAIR SHARE\tUSAGE\tDEMAND\tOPERATIONS\tRUNNING\tLIGHTWEIGHT\tMAX RUNNING\tSTARVATION")
	for _, f := range pools {
		var e element
		if err := json.Unmarshal(f.Value, &e); err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%.4f\t%.4f\t%.4f\t%d\t%d\t%d\t%d\t%s\n", f.Key, e.Parent, dominant(e.FairShare.Total),
			dominant(e.UsageShare), dominant(e.DemandShare), e.Operations, e.Running, e.Lightweight, e.MaxRunning, e.StarvationStatus)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(ops) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "OPERATION\tPOOL\tSTATE\tFAIR SHARE\tUSAGE\tDEMAND\tSTARVATION\tPENDING REASON")
	for _, f := range ops {
		var e element
		if err := json.Unmarshal(f.Value, &e); err != nil {
			return err
		}
		reason := ""
		if e.PendingReason != "" {
			reason = fmt.Sprintf("%s; position %d in the queue", e.PendingReason, e.QueuePosition)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4f\t%.4f\t%.4f\t%s\t%s\n", f.Key, e.Parent, e.State, dominant(e.FairShare.Total),
			dominant(e.UsageShare), dominant(e.DemandShare), e.StarvationStatus, reason)
	}
	return tw.Flush()
}

// writeOperationView prints an operation in each of its trees.
func writeOperationView(w io.Writer, output string, v *orchid.OperationView, attribute []string) error {
	if output == "json" {
		return writeOut(w, "json", v)
	}
	fmt.Fprintf(w, "# operation %s, %s\n", v.ID, v.State)
	trees := make([]string, 0, len(v.Trees))
	for t := range v.Trees {
		trees = append(trees, t)
	}
	slices.Sort(trees)
	for i, t := range trees {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "# tree %s\n", t)
		if err := writeAttributes(w, strings.Join(attribute, "."), v.Trees[t]); err != nil {
			return err
		}
	}
	return nil
}
