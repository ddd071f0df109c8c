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
	"Actors.NodeOfflineTimeout":    "node-offline-timeout",
	"Actors.NodeLostTimeout":       "node-lost-timeout",
	"Actors.ProgressPersistPeriod": "progress-persist-period",
	"Actors.ProgressWriteRate":     "progress-write-rate",
	"Actors.JournalBatchInterval":  "journal-batch-interval",
	"Actors.PreemptionRateLimit":   "preemption-rate-limit",
	"Actors.MaxHeartbeatPasses":    "max-heartbeat-passes",
	"Actors.FairShareEventPeriod":  "fair-share-event-period",
	"StorageProbePeriod":           "storage-probe-period",
	"Replicas":                     "replicas",
	"MaxStore":                     "max-store",
	"EventMaxBytes":                "event-max-bytes",
	"JournalMaxBytes":              "journal-max-bytes",
	"DashboardMaxBytes":            "dashboard-max-bytes",
	"Auth":                         "auth",
	"NKey":                         "nkey",
	"TLSCert":                      "tls-cert",
	"TLSCA":                        "tls-ca",
	"Leader.Name":                  "server-name",
	"Leader.TTL":                   "lease-ttl",
	"Dashboard.Window":             "dashboard-window",
	"Dashboard.Resolution":         "dashboard-resolution",
	"Dashboard.MaxPools":           "dashboard-pools",
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
	"MaxHeartbeatPasses":      "max-heartbeat-passes",
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
	return usageError{namedByFlag(err, flags)}
}

// namedByFlag rewrites err, when it is a bad field that a flag sets, to
// name the flag instead of the field.
func namedByFlag(err error, flags map[string]string) error {
	if fe, ok := cfgerr.Field(err); ok {
		for _, field := range []string{fe.Field, fe.Base()} {
			if flag, ok := flags[field]; ok {
				return &flagFieldError{flag: flag, field: fe}
			}
		}
	}
	return err
}

// flagFieldError is a bad field named by its flag; it still wraps the
// field error (and so the configuration's sentinel).
type flagFieldError struct {
	flag  string
	field *cfgerr.FieldError
}

func (e *flagFieldError) Error() string { return fmt.Sprintf("--%s: %s", e.flag, e.field.Reason) }
func (e *flagFieldError) Unwrap() error { return e.field }
