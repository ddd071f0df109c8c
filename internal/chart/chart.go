package chart

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sharetree/sharetree/scheduler"
)

// Line is one series of a chart; NaN marks a sample without a value.
type Line struct {
	Name string
	// Class is the line's CSS class (its colour and dash, see Style):
	// l-usage, l-demand, l-fair, l-volume, l-ref, l-ref2.
	Class  string
	Values []float64
}

// Chart is a line chart of one resource over time, drawn as inline SVG.
type Chart struct {
	Title    string
	Resource scheduler.ResourceType
	// Volume: the values are resource·seconds.
	Volume bool
	// Times are the samples' times, one per value of each line.
	Times []time.Time
	Lines []Line
}

// Style is the CSS of the charts' classes, for a page that shows them.
const Style = `svg.chart { width: 100%; max-width: 760px; background: #fff; border: 1px solid #e4e7ec; }
svg.chart text { font: 11px system-ui, sans-serif; fill: #5b6577; }
svg.chart text.title { font-size: 13px; font-weight: 600; fill: #1d2330; }
svg.chart .grid { stroke: #eef1f5; } svg.chart .axis { stroke: #8b95a8; }
svg.chart polyline { fill: none; stroke-width: 1.8; }
.l-usage { stroke: #2a6fdb; fill: #2a6fdb; } .l-demand { stroke: #d9822b; fill: #d9822b; }
.l-fair { stroke: #2b9e5f; fill: #2b9e5f; } .l-volume { stroke: #8e44ad; fill: #8e44ad; }
.l-ref { stroke: #5b6577; fill: #5b6577; stroke-dasharray: 6 4; } .l-ref2 { stroke: #a4262c; fill: #a4262c; stroke-dasharray: 2 3; }
rect.swatch { stroke-width: 2; }
`

// The chart's geometry, in SVG user units.
const (
	chartW, chartH             = 760, 250
	marginL, marginR           = 84, 16
	marginT, marginB           = 34, 36
	plotW, plotH               = chartW - marginL - marginR, chartH - marginT - marginB
	yTicks                     = 4
	legendStep, legendSwatchSz = 150, 10
)

// SVG renders the chart. Every text in it is escaped.
func (c *Chart) SVG() template.HTML {
	var b strings.Builder
	f := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	f(`<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="%s">`, chartW, chartH, template.HTMLEscapeString(c.Title))
	f(`<text class="title" x="%d" y="14">%s</text>`, marginL, template.HTMLEscapeString(c.Title))
	for k, l := range c.Lines {
		x := marginL + 260 + k*legendStep
		f(`<rect class="swatch %s" x="%d" y="5" width="%d" height="%d"/>`, l.Class, x, legendSwatchSz, legendSwatchSz)
		f(`<text class="legend" x="%d" y="14">%s</text>`, x+legendSwatchSz+4, template.HTMLEscapeString(l.Name))
	}
	top := c.top()
	for k := 0; k <= yTicks; k++ {
		v := top * float64(k) / yTicks
		y := c.y(v, top)
		f(`<line class="grid" x1="%d" x2="%d" y1="%s" y2="%s"/>`, marginL, marginL+plotW, num(y), num(y))
		f(`<text class="tick" x="%d" y="%s" text-anchor="end">%s</text>`, marginL-6, num(y+4), template.HTMLEscapeString(c.amount(v)))
	}
	if n := len(c.Times); n > 0 {
		for _, k := range []int{0, n / 2, n - 1} {
			if k == n/2 && (k == 0 || k == n-1) {
				continue
			}
			anchor := map[int]string{0: "start", n - 1: "end"}[k]
			if anchor == "" {
				anchor = "middle"
			}
			f(`<text class="tick" x="%s" y="%d" text-anchor="%s">%s</text>`, num(c.x(k)), marginT+plotH+18, anchor, c.Times[k].UTC().Format("15:04:05"))
		}
	}
	for _, l := range c.Lines {
		var pts []string
		flush := func() {
			switch len(pts) {
			case 0:
			case 1:
				xy := strings.Split(pts[0], ",")
				f(`<circle class="%s" cx="%s" cy="%s" r="2.5"/>`, l.Class, xy[0], xy[1])
			default:
				f(`<polyline class="%s" points="%s"/>`, l.Class, strings.Join(pts, " "))
			}
			pts = pts[:0]
		}
		for k, v := range l.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				flush()
				continue
			}
			pts = append(pts, num(c.x(k))+","+num(c.y(v, top)))
		}
		flush()
	}
	f(`<line class="axis" x1="%d" x2="%d" y1="%d" y2="%d"/>`, marginL, marginL+plotW, marginT+plotH, marginT+plotH)
	f(`<line class="axis" x1="%d" x2="%d" y1="%d" y2="%d"/>`, marginL, marginL, marginT, marginT+plotH)
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // #nosec G203 -- built above, every text escaped
}

// top is the value at the top of the plot: the largest value rounded up
// to a round number (1 when there is none).
func (c *Chart) top() float64 {
	hi := 0.0
	for _, l := range c.Lines {
		for _, v := range l.Values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				hi = max(hi, v)
			}
		}
	}
	return niceCeil(hi)
}

// niceCeil rounds v > 0 up to 1, 2, 2.5 or 5 times a power of ten; 1 for
// v <= 0.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if v <= m*p*(1+1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// x is sample k's horizontal position: the first sample at the left, the
// last at the right, by time (a single sample at the right).
func (c *Chart) x(k int) float64 {
	n := len(c.Times)
	if n < 2 {
		return marginL + plotW
	}
	span := c.Times[n-1].Sub(c.Times[0])
	if span <= 0 {
		return marginL + plotW
	}
	return marginL + plotW*float64(c.Times[k].Sub(c.Times[0]))/float64(span)
}

func (c *Chart) y(v, top float64) float64 {
	return marginT + float64(plotH*(1-v/top)) // rounded first: never fused (see docs/DETERMINISM.md)
}

// amount is a tick's label: k, M, G for large counts (bytes in binary
// units), "·s" after a volume.
func (c *Chart) amount(v float64) string {
	s := Amount(c.Resource, v)
	if c.Resource != scheduler.Memory && c.Resource != scheduler.Network {
		for _, u := range []struct {
			scale  float64
			suffix string
		}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
			if math.Abs(v) >= 10*u.scale || (math.Abs(v) >= u.scale && u.scale >= 1e6) {
				s = Decimal(v/u.scale) + u.suffix
				break
			}
		}
	}
	if c.Volume {
		s += "·s"
	}
	return s
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// Amount formats an amount of a resource: bytes of memory and network in
// binary units, the others as numbers of at most three decimals.
func Amount(r scheduler.ResourceType, v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	if r == scheduler.Memory || r == scheduler.Network {
		units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
		k := 0
		for math.Abs(v) >= 1024 && k < len(units)-1 {
			v /= 1024
			k++
		}
		return Decimal(v) + " " + units[k]
	}
	return Decimal(v)
}

// Decimal writes v with fewer decimals the larger it is.
func Decimal(v float64) string {
	prec := 3
	switch a := math.Abs(v); {
	case a >= 1000:
		prec = 0
	case a >= 100:
		prec = 1
	case a >= 10:
		prec = 2
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// Resources formats a vector's non-zero amounts ("cpu 12, memory 3 GiB";
// "0" when there is none).
func Resources(r *scheduler.Resources) string {
	return vector(r[:], Amount)
}

// Shares formats a share vector's non-zero shares as percentages of the
// cluster ("cpu 25%"; "0" when there is none).
func Shares(s *scheduler.Share) string {
	return vector(s[:], func(_ scheduler.ResourceType, v float64) string { return Percent(v) })
}

// vector writes each non-zero component as "<resource> <value>".
func vector(v []float64, value func(scheduler.ResourceType, float64) string) string {
	var parts []string
	for _, t := range scheduler.AllResources {
		if v[t] != 0 {
			parts = append(parts, t.String()+" "+value(t, v[t]))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ", ")
}

// Percent formats a share of the cluster as a percentage.
func Percent(share float64) string {
	if math.IsNaN(share) || math.IsInf(share, 0) {
		return "—"
	}
	return Decimal(100*share) + "%"
}
