package dashboard

import (
	"cmp"
	"embed"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/internal/chart"
	"github.com/sharetree/sharetree/scheduler"
)

//go:embed templates/*.html static/*
var assets embed.FS

// pages holds the parsed templates, one per page.
type pages struct {
	byName map[string]*template.Template
}

func parsePages() (*pages, error) {
	p := &pages{byName: map[string]*template.Template{}}
	for _, name := range []string{"trees", "tree", "pool", "error"} {
		t, err := template.New("layout.html").Funcs(template.FuncMap{"pct": chart.Percent}).
			ParseFS(assets, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard: template %s: %w", name, err)
		}
		p.byName[name] = t
	}
	return p, nil
}

// page is what every page's layout shows.
type page struct {
	Title string
	// Refresh is the reload period in seconds (0: none).
	Refresh int
	// Crumbs lead from the dashboard's start to this page.
	Crumbs []link
	// Reviving: the tree's scheduler took over recently and waits for
	// the nodes to report their jobs (actors.TreeIntrospection.Reviving).
	Reviving bool
}

type link struct{ Text, Href string }

// treesPage lists the live trees.
type treesPage struct {
	page
	Trees []treeRow
}

type treeRow struct {
	Name, Href, UpdateTime, Error        string
	Pools, Running, Pending, Lightweight int
}

// treePage is one tree: its pools and its waiting operations.
type treePage struct {
	page
	Tree, UpdateTime, Total string
	Alerts                  []string
	Pools                   []poolRow
	// PoolsTotal counts the tree's pools (the root included); Pools lists
	// the first Config.MaxRows.
	PoolsTotal int
	Pending    []pendingRow
	// PendingTotal counts every waiting operation of the tree; Pending
	// lists the first Config.MaxPending.
	PendingTotal int
}

// poolRow is one pool in the tree's table. The shares are the dominant
// ones (the largest component), as fractions of the cluster.
type poolRow struct {
	Name, Href string
	Indent     int
	// Seen: the latest update has the pool (a pool created since has no
	// shares yet).
	Seen                               bool
	Guarantee, Weight, Starvation      string
	FairShare, Usage, Demand           float64
	FairTitle, UsageTitle, DemandTitle string
	Operations, Running, Pending       int
	MaxOperations, MaxRunning          int
}

type pendingRow struct {
	ID, Pool, QueuePool, Reason, Demand string
	Position                            int
}

func dominant(s *scheduler.Share) float64 { return s.MaxComponent() }

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// buildTreePage describes a tree snapshot whose operations are the first
// waiting ones (actors.Scope.Pending), with at most maxRows pools.
func buildTreePage(in *actors.TreeIntrospection, maxRows int) *treePage {
	p := &treePage{Tree: in.Tree}
	elements := map[string]*scheduler.ElementResult{}
	var order []string
	if r := in.Result; r != nil {
		p.UpdateTime, p.Total = formatTime(r.Now), chart.Resources(&r.Total)
		for _, a := range r.Alerts {
			p.Alerts = append(p.Alerts, fmt.Sprintf("%s: %s", a.Code, a.Message))
		}
		for i := range r.Elements {
			if e := &r.Elements[i]; e.Kind != scheduler.KindOperation {
				elements[e.Name] = e
				order = append(order, e.Name)
			}
		}
	}
	counts := map[string]actors.PoolIntrospection{}
	for _, pi := range in.Pools {
		counts[pi.Name] = pi
	}
	row := func(name string) poolRow {
		c := counts[name].Counts
		r := poolRow{Name: name, Href: poolHref(in.Tree, name), Operations: c.Operations, Running: c.Running, Pending: c.Pending,
			MaxOperations: c.MaxOperations, MaxRunning: c.MaxRunning, Guarantee: "—", Weight: "—", Starvation: "—"}
		e := elements[name]
		if e == nil {
			return r
		}
		r.Seen, r.Indent = true, e.Depth
		r.FairShare, r.Usage, r.Demand = dominant(&e.FairShare.Total), dominant(&e.UsageShare), dominant(&e.DemandShare)
		r.FairTitle, r.UsageTitle, r.DemandTitle = chart.Shares(&e.FairShare.Total), chart.Shares(&e.UsageShare), chart.Shares(&e.DemandShare)
		r.Weight = chart.Decimal(e.Weight)
		r.Starvation = e.StarvationStatus.String()
		var g []string
		if sg := dominant(&e.StrongGuaranteeShare); sg > 0 {
			g = append(g, "strong "+chart.Percent(sg))
		}
		if e.Integral != nil {
			g = append(g, e.Integral.GuaranteeType.String())
		}
		if len(g) > 0 {
			r.Guarantee = strings.Join(g, ", ")
		}
		return r
	}
	// The pools in the update's order, then those it has not seen in
	// configuration order (each under its parent's depth when the parent
	// is listed); only the first maxRows are described.
	type listed struct {
		name   string
		parent string
		seen   bool
	}
	var names []listed
	seen := map[string]bool{}
	for _, name := range order {
		if _, ok := counts[name]; ok {
			seen[name] = true
			names = append(names, listed{name: name, seen: true})
		}
	}
	for _, pi := range in.Pools {
		if !seen[pi.Name] {
			names = append(names, listed{name: pi.Name, parent: pi.Parent})
		}
	}
	p.PoolsTotal = len(names)
	indent := map[string]int{}
	for _, l := range names[:min(len(names), maxRows)] {
		r := row(l.name)
		if parent, ok := indent[l.parent]; ok && !l.seen {
			r.Indent = parent + 1
		}
		indent[l.name] = r.Indent
		p.Pools = append(p.Pools, r)
	}
	for _, pi := range in.Pools {
		p.PendingTotal += pi.Counts.Pending
	}
	for _, op := range in.Operations {
		if op.Admission.State == scheduler.AdmissionRunning {
			continue
		}
		pool := string(op.Pool)
		if pool == "" {
			pool = scheduler.RootID
		}
		p.Pending = append(p.Pending, pendingRow{ID: string(op.ID), Pool: pool, QueuePool: op.Admission.QueuePool,
			Reason: op.Admission.PendingReason, Position: op.Admission.QueuePosition, Demand: chart.Resources(&op.SpecDemand)})
	}
	return p
}

func treeHref(tree string) string { return "/dashboard/trees/" + pathEscape(tree) }

func poolHref(tree, pool string) string { return treeHref(tree) + "/pools/" + pathEscape(pool) }

// poolPage is one pool: its attributes and its charts.
type poolPage struct {
	page
	Tree, Pool, Resource string
	Resources            []link
	// Attributes are the pool's latest attributes, in order.
	Attributes [][2]string
	Children   []link
	Charts     []template.HTML
	// Note says why there is no chart, or what the charts cover.
	Note string
}

// buildPoolPage describes pool from a snapshot and its history, charted
// in resource r.
func buildPoolPage(in *actors.TreeIntrospection, pool string, r scheduler.ResourceType, series []SeriesPoint, samples int, cfg Config) *poolPage {
	p := &poolPage{Tree: in.Tree, Pool: pool, Resource: r.String()}
	for _, t := range scheduler.AllResources {
		p.Resources = append(p.Resources, link{Text: t.String(), Href: poolHref(in.Tree, pool) + "?resource=" + t.String()})
	}
	var e *scheduler.ElementResult
	var total scheduler.Resources
	if res := in.Result; res != nil {
		total = res.Total
		for i := range res.Elements {
			if el := &res.Elements[i]; el.Kind != scheduler.KindOperation && el.Name == pool {
				e = el
				break
			}
		}
	}
	for _, pi := range in.Pools {
		if pi.Parent == pool && pi.Name != pool {
			p.Children = append(p.Children, link{Text: pi.Name, Href: poolHref(in.Tree, pi.Name)})
		}
		if pi.Name == pool {
			c := pi.Counts
			p.Attributes = append(p.Attributes,
				[2]string{"operations (running / waiting here / all)", fmt.Sprintf("%d / %d / %d", c.Running, c.Pending, c.Operations)},
				[2]string{"lightweight running operations", fmt.Sprint(c.LightweightRunning)},
				[2]string{"max operations / max running operations", fmt.Sprintf("%d / %d", c.MaxOperations, c.MaxRunning)})
		}
	}
	slices.SortFunc(p.Children, func(a, b link) int { return cmp.Compare(a.Text, b.Text) })
	if e != nil {
		p.Attributes = append(poolAttributes(e), p.Attributes...)
	} else {
		p.Note = "The latest fair-share update does not have this pool yet."
	}
	switch {
	case len(series) == 0 && samples == 0:
		p.Note = strings.TrimSpace(p.Note + " No history yet: the dashboard samples the trees every " + cfg.Resolution.String() + ".")
	case len(series) == 0:
		p.Note = strings.TrimSpace(p.Note + fmt.Sprintf(" This pool's history is not kept: the dashboard keeps the %d pools nearest to the root.", cfg.MaxPools))
	default:
		p.Charts = poolCharts(e, r, total, series)
		p.Note = fmt.Sprintf("%d samples from %s to %s (history window %s, one sample per %s at most).",
			len(series), formatTime(series[0].Time), formatTime(series[len(series)-1].Time), cfg.Window, cfg.Resolution)
	}
	return p
}

// poolAttributes lists a pool's attributes from its latest update.
func poolAttributes(e *scheduler.ElementResult) [][2]string {
	fs := &e.FairShare
	a := [][2]string{
		{"fair share", chart.Shares(&fs.Total)},
		{"  strong guarantee part", chart.Shares(&fs.StrongGuarantee)},
		{"  integral guarantee part", chart.Shares(&fs.IntegralGuarantee)},
		{"  weight-proportional part", chart.Shares(&fs.WeightProportional)},
		{"usage share", chart.Shares(&e.UsageShare)},
		{"demand share", chart.Shares(&e.DemandShare)},
		{"limits share", chart.Shares(&e.LimitsShare)},
		{"strong guarantee share", chart.Shares(&e.StrongGuaranteeShare)},
		{"resource usage", chart.Resources(&e.ResourceUsage)},
		{"resource demand", chart.Resources(&e.ResourceDemand)},
		{"effective strong guarantee resources", chart.Resources(&e.EffectiveStrongGuaranteeResources)},
		{"dominant resource", e.DominantResource.String()},
		{"weight", chart.Decimal(e.Weight)},
		{"status", e.Status.String()},
		{"starvation status", e.StarvationStatus.String()},
		{"fair share starvation tolerance", chart.Decimal(e.EffectiveFairShareStarvationTolerance)},
		{"fair share starvation timeout", e.EffectiveFairShareStarvationTimeout.String()},
		{"satisfaction", chart.Decimal(e.Satisfaction)},
	}
	if !e.BelowFairShareSince.IsZero() {
		a = append(a, [2]string{"below fair share since", formatTime(e.BelowFairShareSince)})
	}
	if ig := e.Integral; ig != nil {
		a = append(a,
			[2]string{"integral guarantee type", ig.GuaranteeType.String()},
			[2]string{"accumulated resource volume", chart.Resources(&ig.AccumulatedResourceVolume) + " (·s)"},
			[2]string{"accumulated resource ratio volume", chart.Decimal(ig.AccumulatedResourceRatioVolume)},
			[2]string{"integral pool capacity", chart.Resources(&ig.IntegralPoolCapacity) + " (·s)"},
			[2]string{"specified burst ratio", chart.Decimal(ig.SpecifiedBurstRatio)},
			[2]string{"specified resource flow ratio", chart.Decimal(ig.SpecifiedResourceFlowRatio)})
		if d := ig.EstimatedBurstUsageDurationSeconds; d != nil {
			a = append(a, [2]string{"estimated burst usage duration", (time.Duration(*d * float64(time.Second))).Round(time.Second).String()})
		}
	}
	return a
}

// poolCharts draws the seeds' figures for resource r: usage against
// demand (with the strong guarantee and an integral pool's burst
// guarantee), usage against fair share, and an integral pool's
// accumulated volume (with its capacity).
func poolCharts(e *scheduler.ElementResult, r scheduler.ResourceType, total scheduler.Resources, series []SeriesPoint) []template.HTML {
	times := make([]time.Time, len(series))
	usage, demand, fair, volume := make([]float64, len(series)), make([]float64, len(series)), make([]float64, len(series)), make([]float64, len(series))
	integral := false
	for k, s := range series {
		times[k] = s.Time
		usage[k], demand[k], fair[k] = s.Usage[r], s.Demand[r], s.FairShare[r]
		volume[k] = math.NaN()
		if s.Integral {
			volume[k], integral = s.Volume[r], true
		}
	}
	constant := func(v float64) []float64 {
		out := make([]float64, len(series))
		for k := range out {
			out[k] = v
		}
		return out
	}
	unit := r.String()
	ud := chart.Chart{Title: "Usage and demand (" + unit + ")", Resource: r, Times: times,
		Lines: []chart.Line{{Name: "usage", Class: "l-usage", Values: usage}, {Name: "demand", Class: "l-demand", Values: demand}}}
	if e != nil {
		if g := e.EffectiveStrongGuaranteeResources[r]; g > 0 {
			ud.Lines = append(ud.Lines, chart.Line{Name: "strong guarantee", Class: "l-ref", Values: constant(g)})
		}
		if ig := e.Integral; ig != nil && ig.GuaranteeType == scheduler.GuaranteeBurst && ig.SpecifiedBurstRatio > 0 {
			ud.Lines = append(ud.Lines, chart.Line{Name: "burst guarantee", Class: "l-ref2", Values: constant(ig.SpecifiedBurstRatio * total[r])})
		}
	}
	uf := chart.Chart{Title: "Usage and fair share (" + unit + ")", Resource: r, Times: times,
		Lines: []chart.Line{{Name: "usage", Class: "l-usage", Values: usage}, {Name: "fair share", Class: "l-fair", Values: fair}}}
	out := []template.HTML{ud.SVG(), uf.SVG()}
	if integral {
		v := chart.Chart{Title: "Accumulated volume (" + unit + "·s)", Resource: r, Volume: true, Times: times,
			Lines: []chart.Line{{Name: "accumulated volume", Class: "l-volume", Values: volume}}}
		if e != nil && e.Integral != nil {
			v.Lines = append(v.Lines, chart.Line{Name: "capacity", Class: "l-ref", Values: constant(e.Integral.IntegralPoolCapacity[r])})
		}
		out = append(out, v.SVG())
	}
	return out
}
