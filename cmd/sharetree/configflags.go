package main

import (
	"fmt"

	"github.com/sharetree/sharetree/internal/cfgerr"
)

// serverFlags names the flag of `sharetree server` that sets each field of
// server.Config that Validate checks.
var serverFlags = map[string]string{
	"DataDir":                      "data-dir",
	"Port":                         "port",
	"HTTPAddr":                     "http-addr",
	"GCPercent":                    "gc-percent",
	"Actors.HeartbeatPeriod":       "heartbeat-period",
	"Actors.StatePersistPeriod":    "state-persist-period",
	"Actors.JobRevivalTimeout":     "job-revival-timeout",
	"Actors.ProgressPersistPeriod": "progress-persist-period",
	"Actors.ProgressWriteRate":     "progress-write-rate",
	"Actors.JournalBatchInterval":  "journal-batch-interval",
	"Actors.PreemptionRateLimit":   "preemption-rate-limit",
}

// loadFlags names the flag of `sharetree load` that sets each field of
// loadgen.Config that Validate checks.
var loadFlags = map[string]string{
	"Agents":                  "agents",
	"AgentsPerConn":           "agents-per-connection",
	"Operations":              "operations",
	"Pools":                   "pools",
	"JobsPerOperation":        "jobs-per-operation",
	"JobDuration":             "job-duration",
	"HeartbeatPeriod":         "heartbeat-period",
	"HeartbeatTimeout":        "heartbeat-timeout",
	"Warmup":                  "warmup",
	"Duration":                "duration",
	"FairShareUpdatePeriod":   "fair-share-update-period",
	"JournalBatchInterval":    "journal-batch-interval",
	"Targets.P99":             "target-p99",
	"Targets.StartsPerSecond": "target-starts",
	"NodePrefix":              "node-prefix",
	"NodeResources":           "node-resources",
	"JobResources":            "job-resources",
}

// agentFlagNames names the flag of `sharetree agent` that sets each field of
// nodeagent.Config that Validate checks.
var agentFlagNames = map[string]string{
	"NodeID":          "node-id",
	"Resources":       "resources",
	"Tags":            "tags",
	"HeartbeatPeriod": "heartbeat-period",
}

// configError turns a configuration's Validate error into a usage error
// (exit 2); a bad field that a flag sets is named by that flag
// ("--heartbeat-period: must be positive, got 0s").
func configError(err error, flags map[string]string) error {
	if fe, ok := cfgerr.Field(err); ok {
		if flag, ok := flags[fe.Field]; ok {
			return usageError{fmt.Errorf("--%s: %s", flag, fe.Reason)}
		}
		if flag, ok := flags[fe.Base()]; ok {
			return usageError{fmt.Errorf("--%s: %s", flag, fe.Reason)}
		}
	}
	return usageError{err}
}
