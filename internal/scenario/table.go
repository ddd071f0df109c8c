package scenario

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/sharetree/sharetree/scheduler"
)

// WriteTable prints a report as readable trees, one per step: every element
// indented under its parent with its fair share, usage and demand over the
// resources the cluster has.
func WriteTable(w io.Writer, rep *Report, total scheduler.Resources) error {
	var resources []scheduler.ResourceType
	for _, r := range scheduler.AllResources {
		if total[r] > 0 {
			resources = append(resources, r)
		}
	}
	for si, step := range rep.Steps {
		if si > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		title := fmt.Sprintf("step %d at %s", si, step.Time)
		if rep.Name != "" && si == 0 {
			title = cellName(rep.Name) + " — " + title
		}
		if _, err := fmt.Fprintln(w, title); err != nil {
			return err
		}
		for _, a := range step.Alerts {
			if _, err := fmt.Fprintf(w, "  alert %s: %s\n", a.Code, a.Message); err != nil {
				return err
			}
		}
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		header := []string{"ELEMENT", "STATE", "WEIGHT"}
		for _, part := range []string{"FAIR", "USAGE", "DEMAND"} {
			for _, r := range resources {
				header = append(header, part+" "+r.String())
			}
		}
		fmt.Fprintln(tw, strings.Join(header, "\t"))
		for _, e := range orderTree(step.Elements) {
			row := []string{strings.Repeat("  ", e.depth) + cellName(e.Name), stateOf(e.ElementReport), weightOf(e.ElementReport)}
			for _, s := range []ShareJSON{e.FairShare.Total, e.UsageShare, e.DemandShare} {
				for _, r := range resources {
					row = append(row, fmt.Sprintf("%.4f", s[r]))
				}
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

type treeRow struct {
	*ElementReport
	depth int
}

// orderTree lists elements depth-first from the root, children in report
// order (pending operations under their pool).
func orderTree(es Elements) []treeRow {
	children := map[string][]*ElementReport{}
	var roots []*ElementReport
	for _, e := range es {
		if e.Parent == "" {
			roots = append(roots, e)
			continue
		}
		children[e.Parent] = append(children[e.Parent], e)
	}
	var out []treeRow
	var walk func(e *ElementReport, depth int)
	walk = func(e *ElementReport, depth int) {
		out = append(out, treeRow{e, depth})
		for _, c := range children[e.Name] {
			walk(c, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	return out
}

func stateOf(e *ElementReport) string {
	switch {
	case e.State != nil && *e.State == "pending":
		return "pending"
	case e.StarvationStatus != nil && *e.StarvationStatus != "non_starving":
		return *e.StarvationStatus
	case e.Status != nil && *e.Status == "below_fair_share":
		return "below"
	default:
		return e.Kind
	}
}

func weightOf(e *ElementReport) string {
	if e.Weight == nil {
		return "-"
	}
	return fmt.Sprintf("%.3g", *e.Weight)
}

// cellName is a name as a table cell: quoted (Go syntax) when it holds a
// character that would move the table's columns or rows (a tab, a line
// break, any control character), else as it is.
func cellName(name string) string {
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return strconv.Quote(name)
	}
	return name
}
