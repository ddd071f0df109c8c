package sim

import (
	"bytes"
	"embed"
	"encoding/csv"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/sharetree/sharetree/internal/chart"
	"github.com/sharetree/sharetree/scheduler"
)

//go:embed templates/report.html
var templates embed.FS

var reportTemplate = template.Must(template.ParseFS(templates, "templates/report.html"))

// reportPage is the HTML report's data.
type reportPage struct {
	Title, Duration, Total, Resource, SamplePeriod string
	Nodes                                          int
	Style                                          template.CSS
	Counts                                         [][2]string
	Operations                                     []operationRow
	Pools                                          []poolCharts
}

type operationRow struct {
	ID, Pool, State, Refused                               string
	Submit, Queued, Start, Finish, Done, Interrupted, Lost string
}

type poolCharts struct {
	Name, Parent string
	Charts       []template.HTML
}

// WriteHTML writes a self-contained HTML report of res (no script, no
// external asset): the counts, every operation, and per pool the seeds'
// figures in resource r — usage and demand, usage and fair share, and an
// integral pool's accumulated volume. nodes and samplePeriod are the
// file's.
func WriteHTML(w io.Writer, res *Result, r scheduler.ResourceType, nodes int, samplePeriod time.Duration) error {
	p := reportPage{Title: res.Name, Duration: res.Duration.String(), Total: chart.Resources(&res.Total), Resource: r.String(),
		SamplePeriod: samplePeriod.String(), Nodes: nodes, Style: template.CSS(chart.Style)} // #nosec G203 -- a constant
	if p.Title == "" {
		p.Title = "Simulation"
	}
	p.Counts = countRows(&res.Counts)
	for _, o := range res.Operations {
		p.Operations = append(p.Operations, operationRowOf(o))
	}
	t0 := time.Unix(0, 0).UTC()
	times := make([]time.Time, len(res.Samples))
	for k, s := range res.Samples {
		times[k] = t0.Add(s.At)
	}
	for i, info := range res.Pools {
		series := func(pick func(*PoolSample) float64) []float64 {
			out := make([]float64, len(res.Samples))
			for k := range res.Samples {
				out[k] = pick(&res.Samples[k].Pools[i])
			}
			return out
		}
		usage := series(func(s *PoolSample) float64 { return s.Usage[r] })
		pc := poolCharts{Name: info.Name, Parent: info.Parent}
		ud := chart.Chart{Title: "Usage and demand (" + r.String() + ")", Resource: r, Times: times, Lines: []chart.Line{
			{Name: "usage", Class: "l-usage", Values: usage},
			{Name: "demand", Class: "l-demand", Values: series(func(s *PoolSample) float64 { return s.Demand[r] })}}}
		uf := chart.Chart{Title: "Usage and fair share (" + r.String() + ")", Resource: r, Times: times, Lines: []chart.Line{
			{Name: "usage", Class: "l-usage", Values: usage},
			{Name: "fair share", Class: "l-fair", Values: series(func(s *PoolSample) float64 { return s.FairShare[r] })}}}
		pc.Charts = []template.HTML{ud.SVG(), uf.SVG()}
		if info.Integral {
			v := chart.Chart{Title: "Accumulated volume (" + r.String() + "·s)", Resource: r, Volume: true, Times: times, Lines: []chart.Line{
				{Name: "accumulated volume", Class: "l-volume", Values: series(func(s *PoolSample) float64 { return s.Volume[r] })}}}
			pc.Charts = append(pc.Charts, v.SVG())
		}
		p.Pools = append(p.Pools, pc)
	}
	var b bytes.Buffer
	if err := reportTemplate.Execute(&b, p); err != nil {
		return fmt.Errorf("sim: report: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func countRows(c *Counts) [][2]string {
	return [][2]string{
		{"fair-share updates", strconv.Itoa(c.Updates)},
		{"node passes", strconv.Itoa(c.NodePasses)},
		{"job starts", strconv.Itoa(c.JobStarts)},
		{"jobs completed", strconv.Itoa(c.JobCompletions)},
		{"jobs preempted for starving operations", strconv.Itoa(c.Preemptions)},
		{"jobs of graceful operations interrupted", strconv.Itoa(c.GracefulInterrupts)},
		{"operations refused", strconv.Itoa(c.Refused)},
		{"job time lost to interruptions", roundDuration(c.LostJobTime)},
		{"job time of jobs still running at the end", roundDuration(c.UnfinishedJobTime)},
	}
}

func operationRowOf(o OperationResult) operationRow {
	row := operationRow{ID: o.ID, Pool: o.Pool, State: o.State, Refused: o.Refused, Queued: "—", Start: "—", Finish: "—",
		Done: fmt.Sprintf("%d / %d", o.Completed, o.Jobs), Interrupted: strconv.Itoa(o.Interrupted), Lost: roundDuration(o.LostJobTime)}
	if row.Pool == "" {
		row.Pool = scheduler.RootID
	}
	if !o.Submitted {
		row.Submit = "after the end"
		return row
	}
	row.Submit = roundDuration(o.SubmitAt)
	if o.State == "running" || o.State == "completed" {
		row.Queued = roundDuration(o.AdmittedAt - o.SubmitAt)
	}
	if o.Started {
		row.Start = roundDuration(o.StartAt - o.SubmitAt)
	}
	if o.Finished {
		row.Finish = roundDuration(o.FinishAt - o.SubmitAt)
	}
	return row
}

func roundDuration(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }

// WriteSeriesCSV writes every sample of every pool as CSV: time in
// seconds, pool, usage, demand, fair share and accumulated volume per
// resource, starvation status, running and waiting operations.
func WriteSeriesCSV(w io.Writer, res *Result) error {
	cw := csv.NewWriter(w)
	header := []string{"time_seconds", "pool"}
	for _, what := range []string{"usage", "demand", "fair_share", "accumulated_volume"} {
		for _, r := range scheduler.AllResources {
			header = append(header, what+"_"+r.String())
		}
	}
	header = append(header, "starvation_status", "running_operations", "waiting_operations")
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, s := range res.Samples {
		for i, info := range res.Pools {
			p := &s.Pools[i]
			row := []string{number(s.At.Seconds()), info.Name}
			for _, v := range []*scheduler.Resources{&p.Usage, &p.Demand, &p.FairShare, &p.Volume} {
				for _, r := range scheduler.AllResources {
					row = append(row, number(v[r]))
				}
			}
			row = append(row, p.Starvation.String(), strconv.Itoa(p.RunningOperations), strconv.Itoa(p.WaitingOperations))
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteOperationsCSV writes every operation as CSV; times are seconds from
// time zero, empty when they did not happen.
func WriteOperationsCSV(w io.Writer, res *Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"id", "pool", "state", "submit_seconds", "admitted_seconds", "first_start_seconds", "finish_seconds",
		"jobs", "completed", "interrupted", "lost_job_seconds", "refused"}); err != nil {
		return err
	}
	at := func(ok bool, d time.Duration) string {
		if !ok {
			return ""
		}
		return number(d.Seconds())
	}
	for _, o := range res.Operations {
		admitted := o.State == "running" || o.State == "completed"
		if err := cw.Write([]string{o.ID, o.Pool, o.State, at(o.Submitted, o.SubmitAt), at(admitted, o.AdmittedAt), at(o.Started, o.StartAt),
			at(o.Finished, o.FinishAt), strconv.Itoa(o.Jobs), strconv.Itoa(o.Completed), strconv.Itoa(o.Interrupted),
			number(o.LostJobTime.Seconds()), o.Refused}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func number(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
