package scenario

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/sharetree/sharetree/scheduler"
)

// Failure is an expectation the report does not meet.
type Failure struct {
	Step        int
	Expectation Expectation
	Got         string
}

func (f Failure) String() string {
	e := f.Expectation
	return fmt.Sprintf("%s: step %d: %s.%s: %s", e.Path, f.Step, e.Element, e.Attribute, f.Got)
}

// Check compares every step's expectations with the report, reading the
// attributes from the report's JSON (what `sharetree fairshare` prints).
func Check(f *File, rep *Report) ([]Failure, error) {
	var out []Failure
	for si, step := range f.Steps {
		if len(step.Expect) == 0 {
			continue
		}
		if si >= len(rep.Steps) {
			return nil, fmt.Errorf("report has %d steps, expectations name step %d", len(rep.Steps), si)
		}
		raw, err := json.Marshal(rep.Steps[si].Elements)
		if err != nil {
			return nil, err
		}
		var elements map[string]map[string]any
		if err := json.Unmarshal(raw, &elements); err != nil {
			return nil, err
		}
		for _, exp := range step.Expect {
			if msg := checkOne(elements, exp, f.Tolerance); msg != "" {
				out = append(out, Failure{Step: si, Expectation: exp, Got: msg})
			}
		}
	}
	return out, nil
}

func checkOne(elements map[string]map[string]any, exp Expectation, tol float64) string {
	el, ok := elements[exp.Element]
	if !ok {
		return "no such element in the report"
	}
	var v any = map[string]any(el)
	for _, part := range strings.Split(exp.Attribute, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Sprintf("attribute %q: %v is not an object", part, v)
		}
		if v, ok = m[part]; !ok {
			return fmt.Sprintf("attribute %q is missing", part)
		}
	}
	switch {
	case exp.Number != nil:
		got, ok := v.(float64)
		if !ok {
			return fmt.Sprintf("got %v, want number %g", v, *exp.Number)
		}
		if math.Abs(got-*exp.Number) > tol {
			return fmt.Sprintf("got %.12g, want %.12g (tolerance %g)", got, *exp.Number, tol)
		}
	case exp.String != nil:
		if got, ok := v.(string); !ok || got != *exp.String {
			return fmt.Sprintf("got %v, want %q", v, *exp.String)
		}
	case exp.Share != nil:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Sprintf("got %v, want a share", v)
		}
		var bad []string
		for r := range scheduler.NumResources {
			rt := scheduler.ResourceType(r)
			if !exp.Share.Set.Has(rt) {
				continue
			}
			got, _ := m[rt.String()].(float64)
			if want := exp.Share.Values[r]; math.Abs(got-want) > tol {
				bad = append(bad, fmt.Sprintf("%s got %.12g want %.12g", rt, got, want))
			}
		}
		if len(bad) > 0 {
			return strings.Join(bad, "; ") + fmt.Sprintf(" (tolerance %g)", tol)
		}
	}
	return ""
}
