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
// protojson reads: a simulated_duration in Go's notation ("1h30m",
// "250ms") becomes seconds ("5400s"), a short enum value its full name.
// Anything else is left for protojson to judge.
func normalizeSpecDoc(doc any) {
	switch v := doc.(type) {
	case map[string]any:
		for k, x := range v {
			s, isString := x.(string)
			switch {
			case isString && k == "simulated_duration":
				if d, err := time.ParseDuration(s); err == nil {
					v[k] = strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
				}
			case isString && enumPrefixes[k] != "" && !strings.HasPrefix(strings.ToUpper(s), enumPrefixes[k]):
				v[k] = enumPrefixes[k] + strings.ToUpper(s)
			default:
				normalizeSpecDoc(x)
			}
		}
	case []any:
		for _, x := range v {
			normalizeSpecDoc(x)
		}
	}
}
