package loadgen

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is what a run measured. Durations are in seconds (fields ending in
// _s in JSON) and latencies in milliseconds (_ms). "Window" figures cover
// the measured window only (after the warmup); the others cover the whole
// run.
type Report struct {
	// Mode is "embedded" (the run started its own scheduler), "process"
	// (the scheduler runs in a process of its own, Config.ServerPID) or
	// "external".
	Mode    string `json:"mode"`
	NATSURL string `json:"nats_url"`
	// SyncAlways is Config.SyncAlways for a scheduler the run started
	// (embedded or process); nil for an external one, whose NATS server's
	// operator chose.
	SyncAlways *bool `json:"sync_always,omitempty"`
	// Interrupted: the context ended the run early.
	Interrupted bool `json:"interrupted,omitempty"`

	Agents           int     `json:"agents"`
	Connections      int     `json:"connections"`
	NodeResources    string  `json:"node_resources"`
	JobResources     string  `json:"job_resources"`
	SlotsPerNode     int     `json:"slots_per_node"`
	Slots            int     `json:"slots"`
	Operations       int     `json:"operations"`
	Pools            int     `json:"pools"`
	JobsPerOperation int     `json:"jobs_per_operation"`
	HeartbeatPeriod  float64 `json:"heartbeat_period_s"`
	JobDuration      float64 `json:"job_duration_s"`
	Warmup           float64 `json:"warmup_s"`
	Duration         float64 `json:"duration_s"`

	Submit     SubmitStats    `json:"submit"`
	Heartbeats HeartbeatStats `json:"heartbeats"`
	// RTT is the heartbeat round trip of the window's answered heartbeats.
	RTT Latency `json:"rtt"`
	// RTTFirstHalf and RTTSecondHalf split the window in two by send time:
	// a latency that grows from one to the other is a growing backlog.
	RTTFirstHalf  Latency `json:"rtt_first_half"`
	RTTSecondHalf Latency `json:"rtt_second_half"`
	// SendLag is how late the load generator sent the window's heartbeats
	// after they were due: if it is large, the generator (not the
	// scheduler) is the bottleneck and the figures are not valid.
	SendLag Latency      `json:"send_lag"`
	Jobs    JobStats     `json:"jobs"`
	Process ProcessStats `json:"process"`
	// FairShare is the embedded scheduler's fair-share updates of the
	// tree in the window (nil when the scheduler is not embedded).
	FairShare *FairShareStats `json:"fair_share,omitempty"`
	// Nodes is the embedded scheduler's node sessions at the window's end
	// and the nodes it took offline or declared lost since it started (nil
	// when the scheduler is not embedded). Every agent of a run
	// heartbeats throughout, so any such node was taken offline or lost
	// falsely.
	Nodes *NodeStats `json:"nodes,omitempty"`
	// Errors are the distinct heartbeat failures with their counts (at most
	// 10 kinds).
	Errors []ErrorCount `json:"errors,omitempty"`
	// Checks compare the figures with Config.Targets.
	Checks []Check `json:"checks"`
}

// NodeStats counts the scheduler's node sessions (actors.System.NodeCount)
// and its node liveness transitions (actors.System.NodeTransitions).
type NodeStats struct {
	Sessions    int    `json:"sessions"`
	WentOffline uint64 `json:"went_offline"`
	Lost        uint64 `json:"lost"`
}

// FairShareStats describes the fair-share updates of the tree in the
// window, from the tree's counters (actors.UpdateStats) at its start and
// end.
type FairShareStats struct {
	Updates  uint64 `json:"updates"`
	Failures uint64 `json:"failures"`
	// MeanMs is the engine's mean time per update in the window, LastMs
	// the last update's.
	MeanMs float64 `json:"mean_ms"`
	LastMs float64 `json:"last_ms"`
	// SnapshotLockMs and PublishLockMs are the mean time per update that
	// it held the ledger's mutex, which heartbeats' scheduling passes
	// wait for: to copy the snapshot, and to publish the result.
	SnapshotLockMs float64 `json:"snapshot_lock_ms"`
	PublishLockMs  float64 `json:"publish_lock_ms"`
	// RecycledResults and AllocatedResults count the Results the window's
	// updates wrote into: recycled memory or new.
	RecycledResults  uint64 `json:"recycled_results"`
	AllocatedResults uint64 `json:"allocated_results"`
	// OperationsPerUpdate is the mean number of operations an update
	// read; RecomputedPercent is the share of them, over the window, that
	// the engine computed afresh because their inputs (usage, demand,
	// pending jobs…) changed since the update before, or they were new
	// (see scheduler.Reuse): the churn the engine's time follows.
	OperationsPerUpdate float64 `json:"operations_per_update"`
	RecomputedPercent   float64 `json:"recomputed_percent"`
}

// SubmitStats describes the submission of the operations.
type SubmitStats struct {
	Submitted  int     `json:"submitted"`
	Refused    int     `json:"refused"`
	FirstError string  `json:"first_error,omitempty"`
	Seconds    float64 `json:"duration_s"`
	PerSecond  float64 `json:"per_second"`
}

// HeartbeatStats counts the window's heartbeats (by send time).
type HeartbeatStats struct {
	// TargetPerSecond is agents / period.
	TargetPerSecond float64 `json:"target_per_second"`
	Sent            uint64  `json:"sent"`
	// Answered got a usable response; PerSecond is Answered per second.
	Answered  uint64  `json:"answered"`
	PerSecond float64 `json:"per_second"`
	// Failed got an error response, could not be sent, or was not
	// answered before the timeout (TimedOut counts those).
	Failed   uint64 `json:"failed"`
	TimedOut uint64 `json:"timed_out"`
	// Skipped counts periods that came while the agent's previous
	// heartbeat was still in flight: no heartbeat was sent.
	Skipped uint64 `json:"skipped"`
	// Late counts responses that arrived after their heartbeat had timed
	// out (whole run).
	Late uint64 `json:"late"`
	// StaleResponses were ignored for an older leader epoch (whole run).
	StaleResponses uint64 `json:"stale_responses"`
}

// Latency is a distribution of durations, in milliseconds.
type Latency struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean_ms"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
}

// JobStats describes the job starts.
type JobStats struct {
	// StartedTotal counts starts over the whole run, StartedWindow those
	// whose response arrived in the window; StartsPerSecond is
	// StartedWindow per second of the window.
	StartedTotal    uint64  `json:"started_total"`
	StartedWindow   uint64  `json:"started_window"`
	StartsPerSecond float64 `json:"starts_per_second"`
	// PeakStartsPerSecond is the most starts in one second (100 ms steps,
	// whole run).
	PeakStartsPerSecond float64 `json:"peak_starts_per_second"`
	// Fill is the initial phase, from the first heartbeat until the
	// running jobs first filled 95 % of the slots.
	Fill FillStats `json:"fill"`
	// Utilization is the mean fraction of the slots running a job in the
	// window (sampled every 100 ms).
	Utilization float64 `json:"utilization"`
	// FinishedReported counts jobs reported finished (whole run).
	FinishedReported uint64 `json:"finished_reported"`
	// Duplicates counts starts of jobs the agent already had; Aborted and
	// Interrupted count jobs the scheduler aborted or interrupted; Signals
	// counts job signals applied (whole run).
	Duplicates  uint64 `json:"duplicates"`
	Aborted     uint64 `json:"aborted"`
	Interrupted uint64 `json:"interrupted"`
	Signals     uint64 `json:"signals"`
}

// FillStats is the initial phase while slots were free.
type FillStats struct {
	Reached         bool    `json:"reached"`
	Seconds         float64 `json:"duration_s"`
	Starts          uint64  `json:"starts"`
	StartsPerSecond float64 `json:"starts_per_second"`
}

// ProcessStats is this process over the window (the embedded scheduler
// included).
type ProcessStats struct {
	GOMAXPROCS int     `json:"gomaxprocs"`
	CPUSeconds float64 `json:"cpu_s"`
	// CPUCores is CPUSeconds per second of the window.
	CPUCores float64 `json:"cpu_cores"`
	// ServerCPUCores is the scheduler process's CPU per second of the
	// window in "process" mode (-1 where unknown, 0 in the other modes,
	// where CPUCores includes the embedded scheduler).
	ServerCPUCores float64 `json:"server_cpu_cores"`
	// OtherCPUCores is what the rest of the machine used meanwhile (from
	// /proc/stat; -1 where unknown): figures taken while other processes
	// compete for the cores are not the scheduler's.
	OtherCPUCores float64 `json:"other_cpu_cores"`
	MaxRSSMiB     float64 `json:"max_rss_mib"`
	HeapMiB       float64 `json:"heap_mib"`
	Goroutines    int     `json:"goroutines"`
	// AllocMiBPerSecond is the heap allocation rate over the window, GCs
	// the garbage collections that ended in it, GCPauseMs their total
	// stop-the-world pauses and GCPauseMaxMs the longest.
	AllocMiBPerSecond float64 `json:"alloc_mib_per_s"`
	GCs               uint32  `json:"gcs"`
	GCPauseMs         float64 `json:"gc_pause_ms"`
	GCPauseMaxMs      float64 `json:"gc_pause_max_ms"`
}

// ErrorCount is a kind of heartbeat failure.
type ErrorCount struct {
	Error string `json:"error"`
	Count uint64 `json:"count"`
}

// Check is one target.
type Check struct {
	Name   string `json:"name"`
	Target string `json:"target"`
	Value  string `json:"value"`
	OK     bool   `json:"ok"`
}

// JSON returns the report as indented JSON.
func (r *Report) JSON() ([]byte, error) {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	return data, nil
}

// String renders the report as a table.
func (r *Report) String() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(w, "%s\t%s\n", k, fmt.Sprintf(format, args...)) }
	lat := func(l Latency) string {
		return fmt.Sprintf("p50 %s  p90 %s  p99 %s  max %s  (mean %s, n=%d)", ms(l.P50), ms(l.P90), ms(l.P99), ms(l.Max), ms(l.Mean), l.Count)
	}
	mode := r.Mode
	if r.NATSURL != "" {
		mode += " (" + r.NATSURL + ")"
	}
	switch {
	case r.SyncAlways == nil:
	case *r.SyncAlways:
		mode += "; JetStream fsyncs every write but the events'"
	default:
		mode += "; JetStream syncs every 2 minutes"
	}
	if r.Interrupted {
		mode += "  INTERRUPTED: partial figures"
	}
	row("scheduler", "%s", mode)
	row("agents", "%d over %d connections, %s each (%d slots of %s; %d slots)", r.Agents, r.Connections, r.NodeResources, r.SlotsPerNode, r.JobResources, r.Slots)
	row("operations", "%d submitted, %d refused, in %d pools, %d jobs of %s each; %.0f/s submitted (%.1fs)",
		r.Submit.Submitted, r.Submit.Refused, r.Pools, r.JobsPerOperation, secs(r.JobDuration), r.Submit.PerSecond, r.Submit.Seconds)
	if r.Submit.FirstError != "" {
		row("", "first refusal: %s", r.Submit.FirstError)
	}
	row("timing", "heartbeat every %s, warmup %s, measured %s", secs(r.HeartbeatPeriod), secs(r.Warmup), secs(r.Duration))
	h := r.Heartbeats
	row("heartbeats", "%d sent, %d answered, %d failed (%d timed out), %d skipped (previous in flight), %d late",
		h.Sent, h.Answered, h.Failed, h.TimedOut, h.Skipped, h.Late)
	row("heartbeats/s", "%.0f answered (target %.0f)", h.PerSecond, h.TargetPerSecond)
	row("round trip", "%s", lat(r.RTT))
	row("  first half", "%s", lat(r.RTTFirstHalf))
	row("  second half", "%s", lat(r.RTTSecondHalf))
	row("generator lag", "%s", lat(r.SendLag))
	j := r.Jobs
	row("job starts", "%d in the window: %.0f/s; %d in the whole run; peak %.0f/s", j.StartedWindow, j.StartsPerSecond, j.StartedTotal, j.PeakStartsPerSecond)
	if j.Fill.Reached {
		row("initial fill", "%d starts in %s: %.0f/s (first heartbeat to 95%% of slots running)", j.Fill.Starts, secs(j.Fill.Seconds), j.Fill.StartsPerSecond)
	} else {
		row("initial fill", "95%% of slots never ran at once (%d starts in %s: %.0f/s)", j.Fill.Starts, secs(j.Fill.Seconds), j.Fill.StartsPerSecond)
	}
	row("slot utilisation", "%.1f%% (window mean)", 100*j.Utilization)
	row("jobs", "%d finished reported, %d aborted, %d interrupted, %d duplicate starts, %d signals", j.FinishedReported, j.Aborted, j.Interrupted, j.Duplicates, j.Signals)
	if f := r.FairShare; f != nil {
		row("fair-share updates", "%d in the window (%d failed): engine %s mean, %s last; Results %d recycled, %d allocated",
			f.Updates, f.Failures, ms(f.MeanMs), ms(f.LastMs), f.RecycledResults, f.AllocatedResults)
		row("  ledger lock", "%s mean per update: %s snapshot + %s publish",
			ms(f.SnapshotLockMs+f.PublishLockMs), ms(f.SnapshotLockMs), ms(f.PublishLockMs))
		row("  operations", "%.0f per update, %.1f%% of them recomputed (inputs changed since the update before, or new)",
			f.OperationsPerUpdate, f.RecomputedPercent)
	}
	if n := r.Nodes; n != nil {
		row("nodes", "%d sessions at the window's end; %d taken offline, %d declared lost in the whole run", n.Sessions, n.WentOffline, n.Lost)
	}
	p := r.Process
	row("process", "%.1f CPU s in the window = %.2f of %d cores; max RSS %.0f MiB, heap %.0f MiB, %d goroutines",
		p.CPUSeconds, p.CPUCores, p.GOMAXPROCS, p.MaxRSSMiB, p.HeapMiB, p.Goroutines)
	row("memory", "%.0f MiB/s allocated, %d GCs (stop-the-world pauses %.1f ms in all, longest %.2f ms)",
		p.AllocMiBPerSecond, p.GCs, p.GCPauseMs, p.GCPauseMaxMs)
	if r.Mode == "process" {
		if p.ServerCPUCores >= 0 {
			row("server process", "%.2f of %d cores (the scheduler and its embedded NATS, apart from this generator)", p.ServerCPUCores, p.GOMAXPROCS)
		} else {
			row("server process", "CPU unknown")
		}
	}
	if p.OtherCPUCores >= 0 {
		row("other processes", "%.2f cores busy meanwhile (the machine's other load)", p.OtherCPUCores)
	}
	for _, e := range r.Errors {
		row("error", "%d× %s", e.Count, e.Error)
	}
	for _, c := range r.Checks {
		verdict := "MET"
		if !c.OK {
			verdict = "NOT MET"
		}
		row("target", "%-7s %s: %s (target %s)", verdict, c.Name, c.Value, c.Target)
	}
	_ = w.Flush()
	return b.String()
}

func ms(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0fms", v)
	case v >= 10:
		return fmt.Sprintf("%.1fms", v)
	}
	return fmt.Sprintf("%.2fms", v)
}

func secs(v float64) string {
	return time.Duration(v * float64(time.Second)).Round(time.Millisecond).String()
}

func toMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// latency summarises durations (it sorts them).
func latency(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	slices.Sort(ds)
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	q := func(p float64) float64 {
		// Nearest rank.
		i := int(math.Ceil(p*float64(len(ds)))) - 1
		return toMS(ds[min(max(i, 0), len(ds)-1)])
	}
	return Latency{
		Count: len(ds), Mean: toMS(sum / time.Duration(len(ds))),
		P50: q(0.50), P90: q(0.90), P99: q(0.99), Max: toMS(ds[len(ds)-1]),
	}
}

// topErrors returns the error kinds by count.
func topErrors(m map[string]uint64) []ErrorCount {
	out := make([]ErrorCount, 0, len(m))
	for e, n := range m {
		out = append(out, ErrorCount{Error: e, Count: n})
	}
	slices.SortFunc(out, func(a, b ErrorCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Error, b.Error)
	})
	return out
}
