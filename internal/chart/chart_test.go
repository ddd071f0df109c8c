package chart

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
)

var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// svgElements parses an SVG document and counts its elements by name.
func svgElements(t *testing.T, svg string) map[string]int {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	counts := map[string]int{}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return counts
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		if s, ok := tok.(xml.StartElement); ok {
			counts[s.Name.Local]++
		}
	}
}

func TestChartIsWellFormedAndEscapesItsTexts(t *testing.T) {
	ts := []time.Time{t0, t0.Add(time.Second), t0.Add(2 * time.Second), t0.Add(3 * time.Second), t0.Add(4 * time.Second)}
	nan := math.NaN()
	c := Chart{Title: `usage <&"'> of a`, Resource: scheduler.CPU, Times: ts, Lines: []Line{
		{Name: "whole", Class: "l-usage", Values: []float64{1, 2, 3, 4, 5}},
		// A gap splits a line: two points, then one alone.
		{Name: `<b>gap</b>`, Class: "l-demand", Values: []float64{1, 2, nan, 4, math.Inf(1)}},
	}}
	svg := string(c.SVG())
	got := svgElements(t, svg)
	want := map[string]int{"svg": 1, "text": 1 + 2 + (yTicks + 1) + 3, "rect": 2, "line": (yTicks + 1) + 2, "polyline": 2, "circle": 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("elements (-want +got):\n%s", diff)
	}
	for _, raw := range []string{"<b>", `<&"'>`} {
		if strings.Contains(svg, raw) {
			t.Errorf("%q is not escaped", raw)
		}
	}
	// The top of the plot is 5 (a round number): the first point of the
	// whole line sits one fifth of the way up, at the left; the last at
	// the top right.
	if !strings.Contains(svg, `points="84.0,178.0 249.0,142.0 414.0,106.0 579.0,70.0 744.0,34.0"`) {
		t.Errorf("the whole line is not where it belongs:\n%s", svg)
	}
}

func TestChartOfOneSampleOrNone(t *testing.T) {
	one := Chart{Title: "one", Times: []time.Time{t0}, Lines: []Line{{Name: "u", Class: "l-usage", Values: []float64{0}}}}
	if got := svgElements(t, string(one.SVG())); got["circle"] != 1 || got["polyline"] != 0 {
		t.Errorf("one sample: %v, want one circle", got)
	}
	none := Chart{Title: "none"}
	if got := svgElements(t, string(none.SVG())); got["circle"]+got["polyline"] != 0 {
		t.Errorf("no sample: %v", got)
	}
}

func TestNiceCeil(t *testing.T) {
	for _, tc := range []struct{ in, want float64 }{
		{-1, 1}, {0, 1}, {0.3, 0.5}, {1, 1}, {1.01, 2}, {2.2, 2.5}, {3, 5}, {7, 10}, {120, 200}, {250, 250}, {9e9, 1e10},
	} {
		if got := niceCeil(tc.in); math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("niceCeil(%g) = %g, want %g", tc.in, got, tc.want)
		}
	}
}

func TestAmounts(t *testing.T) {
	for _, tc := range []struct {
		r    scheduler.ResourceType
		v    float64
		want string
	}{
		{scheduler.CPU, 0, "0"}, {scheduler.CPU, 0.125, "0.125"}, {scheduler.CPU, 12.5, "12.5"}, {scheduler.CPU, 1500, "1500"},
		{scheduler.CPU, -0.0001, "0"}, {scheduler.CPU, math.NaN(), "—"},
		{scheduler.Memory, 512, "512 B"}, {scheduler.Memory, 3 << 30, "3 GiB"}, {scheduler.Network, 1536, "1.5 KiB"},
	} {
		if got := Amount(tc.r, tc.v); got != tc.want {
			t.Errorf("Amount(%s, %g) = %q, want %q", tc.r, tc.v, got, tc.want)
		}
	}
	ticks := Chart{Resource: scheduler.CPU, Volume: true}
	for v, want := range map[float64]string{0: "0·s", 5000: "5000·s", 25000: "25k·s", 1.5e6: "1.5M·s"} {
		if got := ticks.amount(v); got != want {
			t.Errorf("tick %g = %q, want %q", v, got, want)
		}
	}
	if got := Percent(0.1234); got != "12.34%" {
		t.Errorf("Percent(0.1234) = %q", got)
	}
}

func TestVectors(t *testing.T) {
	r := scheduler.Resources{scheduler.CPU: 12, scheduler.Memory: 3 << 30}
	s := scheduler.Share{scheduler.CPU: 0.25}
	got := []string{Resources(&r), Resources(&scheduler.Resources{}), Shares(&s), Shares(&scheduler.Share{})}
	if diff := cmp.Diff([]string{"cpu 12, memory 3 GiB", "0", "cpu 25%", "0"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
