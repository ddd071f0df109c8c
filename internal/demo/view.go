package demo

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sharetree/sharetree/scheduler"
)

// counts are per-pool operation counts for the view.
type counts struct{ running, pending int }

// render writes one frame: every pool's fair share, usage and demand in
// cpu cores, its guarantee and starvation status.
func render(w io.Writer, elapsed time.Duration, res *scheduler.Result, ops map[string]counts, nodes, started, completed int) {
	fmt.Fprintf(w, "sharetree demo — %s elapsed, %d nodes, %d jobs started, %d completed\n", elapsed.Round(time.Second), nodes, started, completed)
	if res == nil {
		fmt.Fprintln(w, "(waiting for the first fair-share update)")
		return
	}
	cpu := res.Total[scheduler.CPU]
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	// Operation counts of a pool include its subtree's.
	sub := map[string]counts{}
	parent := map[string]string{}
	for i := range res.Elements {
		parent[res.Elements[i].Name] = res.Elements[i].Parent
	}
	for pool, c := range ops {
		for p := pool; p != ""; p = parent[p] {
			s := sub[p]
			s.running += c.running
			s.pending += c.pending
			sub[p] = s
		}
	}
	fmt.Fprintln(tw, "POOL\tGUARANTEE\tFAIR SHARE\tUSAGE\tDEMAND\tOPS run/wait\tINTEGRAL\tSTATUS\t")
	for i := range res.Elements {
		e := &res.Elements[i]
		if e.Kind == scheduler.KindOperation {
			continue
		}
		name := e.Name
		if e.Kind == scheduler.KindRoot {
			name = "<root>"
		}
		name = strings.Repeat("  ", e.Depth) + name
		integral := ""
		if in := e.Integral; in != nil {
			integral = fmt.Sprintf("%s vol %.0f", in.GuaranteeType, in.AccumulatedResourceVolume[scheduler.CPU])
		}
		c := sub[e.Name]
		fmt.Fprintf(tw, "%s\t%.0f\t%.1f\t%.1f\t%.1f\t%d/%d\t%s\t%s\t\n", name,
			e.EffectiveStrongGuaranteeResources[scheduler.CPU],
			e.FairShare.Total[scheduler.CPU]*cpu, e.ResourceUsage[scheduler.CPU], e.ResourceDemand[scheduler.CPU],
			c.running, c.pending, integral, e.StarvationStatus)
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "cpu cores; fair share from the latest update; usage and demand as the scheduler sees them")
}
