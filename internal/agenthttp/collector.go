package agenthttp

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharetree/sharetree/nodeagent"
)

// metric is one of the agent's metrics and how to read it from a
// snapshot.
type metric struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(s *nodeagent.Stats, connected bool) float64
	// labels are the variable label values (jobs finished by state).
	labels []string
}

// collector reads the agent's Stats once per scrape.
type collector struct {
	stats     func() nodeagent.Stats
	connected func() bool
	metrics   []metric
}

func newCollector(node string, stats func() nodeagent.Stats, connected func() bool) *collector {
	constLabels := prometheus.Labels{"node": node}
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("sharetree_agent_"+name, help, labels, constLabels)
	}
	counter := func(name, help string, v func(s *nodeagent.Stats) uint64) metric {
		return metric{desc: desc(name, help), kind: prometheus.CounterValue,
			value: func(s *nodeagent.Stats, _ bool) float64 { return float64(v(s)) }}
	}
	gauge := func(name, help string, v func(s *nodeagent.Stats) float64) metric {
		return metric{desc: desc(name, help), kind: prometheus.GaugeValue,
			value: func(s *nodeagent.Stats, _ bool) float64 { return v(s) }}
	}
	finished := desc("jobs_finished_total", "Jobs that ended on this node, by state (completed, failed or aborted).", "state")
	byState := func(state string, v func(s *nodeagent.Stats) uint64) metric {
		return metric{desc: finished, kind: prometheus.CounterValue, labels: []string{state},
			value: func(s *nodeagent.Stats, _ bool) float64 { return float64(v(s)) }}
	}
	return &collector{stats: stats, connected: connected, metrics: []metric{
		counter("heartbeats_sent_total", "Heartbeats published.", func(s *nodeagent.Stats) uint64 { return s.HeartbeatsSent }),
		counter("heartbeats_ok_total", "Heartbeats answered by the leader and applied.", func(s *nodeagent.Stats) uint64 { return s.HeartbeatsOK }),
		counter("heartbeats_failed_total", "Heartbeats that got no usable answer: refused, unanswered, not sent (NATS down) or undecodable.", func(s *nodeagent.Stats) uint64 { return s.HeartbeatsFailed }),
		counter("heartbeats_refused_total", "Failed heartbeats a scheduler answered with an error (not the leader, throttled, superseded, stale, bad input).", func(s *nodeagent.Stats) uint64 { return s.HeartbeatsRefused }),
		counter("heartbeats_unanswered_total", "Failed heartbeats no leader answered (no responders, the heartbeat timeout, a reconnect, or only an older leader epoch).", func(s *nodeagent.Stats) uint64 { return s.HeartbeatsUnanswered }),
		counter("responses_stale_total", "Heartbeat responses ignored for a leader epoch below the highest seen.", func(s *nodeagent.Stats) uint64 { return s.StaleResponses }),
		counter("responses_late_total", "Heartbeat responses that came after their heartbeat was given up (not applied).", func(s *nodeagent.Stats) uint64 { return s.LateResponses }),
		counter("signals_applied_total", "Job signals (aborts, interrupts) accepted.", func(s *nodeagent.Stats) uint64 { return s.SignalsApplied }),
		counter("signals_stale_total", "Job signals ignored for a leader epoch below the highest seen.", func(s *nodeagent.Stats) uint64 { return s.StaleSignals }),
		counter("signals_malformed_total", "Job signal payloads that did not decode or carried nothing to do.", func(s *nodeagent.Stats) uint64 { return s.MalformedSignals }),
		counter("jobs_started_total", "Jobs accepted to start (including ones whose process failed to start).", func(s *nodeagent.Stats) uint64 { return s.JobsStarted }),
		counter("jobs_duplicate_starts_total", "Starts ignored because the job was already running or finished here.", func(s *nodeagent.Stats) uint64 { return s.DuplicateStarts }),
		byState("completed", func(s *nodeagent.Stats) uint64 { return s.JobsCompleted }),
		byState("failed", func(s *nodeagent.Stats) uint64 { return s.JobsFailed }),
		byState("aborted", func(s *nodeagent.Stats) uint64 { return s.JobsAborted }),
		counter("jobs_interrupted_total", "Jobs interrupted (graceful preemption or interruption), each counted once.", func(s *nodeagent.Stats) uint64 { return s.JobsInterrupted }),
		counter("interrupt_repeats_total", "Interrupts of a job already interrupted (the scheduler repeats them; they change nothing).", func(s *nodeagent.Stats) uint64 { return s.InterruptRepeats }),
		counter("jobs_over_capacity_total", "Jobs whose start made the running jobs hold more of a resource than the node has (the scheduler never should).", func(s *nodeagent.Stats) uint64 { return s.JobsOverCapacity }),
		gauge("running_jobs", "Jobs running now.", func(s *nodeagent.Stats) float64 { return float64(s.RunningJobs) }),
		gauge("unacked_finished_jobs", "Finished jobs kept until a heartbeat response acknowledges them.", func(s *nodeagent.Stats) float64 { return float64(s.UnackedFinishedJobs) }),
		gauge("leader_epoch", "The highest scheduler leader epoch seen.", func(s *nodeagent.Stats) float64 { return float64(s.LeaderEpoch) }),
		gauge("heartbeat_period_seconds", "The period the agent heartbeats at now (the scheduler may set it).", func(s *nodeagent.Stats) float64 { return s.HeartbeatPeriod.Seconds() }),
		gauge("heartbeat_failures_consecutive", "Heartbeats failed in a row since the last answered one.", func(s *nodeagent.Stats) float64 { return float64(s.ConsecutiveFailures) }),
		{desc: desc("nats_connected", "1 while the agent's NATS connection is up."), kind: prometheus.GaugeValue,
			value: func(_ *nodeagent.Stats, connected bool) float64 {
				if connected {
					return 1
				}
				return 0
			}},
	}}
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	seen := map[*prometheus.Desc]bool{}
	for _, m := range c.metrics {
		if !seen[m.desc] {
			seen[m.desc] = true
			ch <- m.desc
		}
	}
}

// Collect implements prometheus.Collector: one snapshot for all.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s, connected := c.stats(), c.connected()
	for _, m := range c.metrics {
		ch <- prometheus.MustNewConstMetric(m.desc, m.kind, m.value(&s, connected), m.labels...)
	}
}
