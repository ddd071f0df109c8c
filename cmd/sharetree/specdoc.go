package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// enumPrefixes are the spec's enum fields and their values' prefix: a spec
// may write `type: map` or `preemption_mode: graceful` for
// OPERATION_TYPE_MAP and PREEMPTION_MODE_GRACEFUL.
var enumPrefixes = map[string]string{
	"type":            "OPERATION_TYPE_",
	"preemption_mode": "PREEMPTION_MODE_",
}

// normalizeSpecDoc rewrites a decoded YAML spec in place into what
// protojson reads: a task's simulated_duration in Go's notation ("1h30m",
// "250ms") becomes seconds ("5400s"), a short enum value of the spec's type
// or preemption_mode its full name. Only those fields are rewritten (a
// command's env keeps its variables as written, whatever their names);
// anything else is left for protojson to judge.
func normalizeSpecDoc(doc any) {
	spec, ok := doc.(map[string]any)
	if !ok {
		return
	}
	for k, prefix := range enumPrefixes {
		if s, isString := spec[k].(string); isString && !strings.HasPrefix(strings.ToUpper(s), prefix) {
			spec[k] = prefix + strings.ToUpper(s)
		}
	}
	tasks, _ := spec["tasks"].([]any)
	for _, t := range tasks {
		task, ok := t.(map[string]any)
		if !ok {
			continue
		}
		if s, isString := task["simulated_duration"].(string); isString {
			if d, err := time.ParseDuration(s); err == nil {
				task["simulated_duration"] = strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
			}
		}
	}
}

// checkSpecValues refuses what a decoded YAML spec can hold and JSON
// cannot (NaN, infinities, mapping keys that are not strings), naming the
// path to the value; keys are visited in order so the first problem
// reported does not depend on map order.
func checkSpecValues(v any, path string) error {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch v := v.(type) {
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: want a finite number, got %g", path, v)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if err := checkSpecValues(v[k], join(k)); err != nil {
				return err
			}
		}
	case map[any]any:
		var bad []string // sorted: the key reported does not depend on map order
		for k := range v {
			if _, ok := k.(string); !ok {
				bad = append(bad, fmt.Sprint(k))
			}
		}
		if len(bad) > 0 {
			slices.Sort(bad)
			if path == "" {
				return fmt.Errorf("key %s is not a string", bad[0])
			}
			return fmt.Errorf("%s: key %s is not a string", path, bad[0])
		}
	case []any:
		for i, x := range v {
			if err := checkSpecValues(x, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}
