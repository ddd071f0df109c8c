package main

import (
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
