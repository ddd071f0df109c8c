package server

import "github.com/prometheus/client_golang/prometheus"

// counters are the server's own counters as Prometheus metrics, read at
// each scrape: the events lost, the API requests refused, the heartbeats'
// load, leadership, storage and fencing.
func (s *Server) counters() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sharetree_events_dropped_total",
			Help: "Events not published: the scheduler's event buffer was full, a tree's name made no subject, or the server was no longer the leader.",
		}, func() float64 { d, _ := s.events.stats(); return float64(d) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sharetree_events_publish_failures_total",
			Help: "Event publishes that failed: not encoded, refused, or acknowledged with an error (or never) by the events stream.",
		}, func() float64 { _, f := s.events.stats(); return float64(f) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sharetree_requests_rejected_total",
			Help: "API requests refused for a bad subject, payload or field (answered INVALID_ARGUMENT and the like), or because the server is not the leader (UNAVAILABLE).",
		}, func() float64 { return float64(s.rejected.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sharetree_dashboard_samples_not_archived_total",
			Help: "Dashboard samples not published to the dashboard stream (a new leader's charts miss them).",
		}, func() float64 {
			if s.dashArchive == nil {
				return 0
			}
			return float64(s.dashArchive.failed.Load())
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sharetree_leader_epoch",
			Help: "The leader epoch this server took when it became the leader.",
		}, func() float64 { return float64(s.epoch) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sharetree_leader_lease_valid",
			Help: "1 while this server acts as the leader (its lease renewed within the renew deadline), 0 once it may not.",
		}, func() float64 {
			if s.lease.Valid() {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sharetree_storage_available",
			Help: "1 while JetStream takes the scheduler's writes; 0 while a store refuses them (no job starts or preemptions then).",
		}, func() float64 {
			if s.storage.Available() {
				return 1
			}
			return 0
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sharetree_storage_outages_total",
			Help: "Times the storage became unavailable.",
		}, func() float64 { return float64(s.storage.outages.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sharetree_revival_active",
			Help: "1 while the operations this leader revived start no job: it waits for the nodes of the roster to report theirs (at most --job-revival-timeout); 0 once over.",
		}, func() float64 {
			if active, _ := s.sys.Revival(); active {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sharetree_revival_waiting_nodes",
			Help: "Nodes of the roster the revival still waits for (0 once it is over).",
		}, func() float64 { _, n := s.sys.Revival(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sharetree_node_roster_nodes",
			Help: "Nodes in the node roster: those that may run jobs, which a new leader waits for.",
		}, func() float64 { return float64(s.sys.RosterSize()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sharetree_heartbeat_passes",
			Help: "Node heartbeats in their scheduling pass now (handed to their tree's placer and not answered yet).",
		}, func() float64 { p, _ := s.sys.HeartbeatLoad(); return float64(p) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sharetree_heartbeats_shed_total",
			Help: "Node heartbeats shed because --max-heartbeat-passes were in their pass: answered UNAVAILABLE (throttled) at once; their nodes stay alive.",
		}, func() float64 { _, shed := s.sys.HeartbeatLoad(); return float64(shed) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sharetree_nodes",
			Help: "Node sessions this leader holds (nodes heard since it took over and not declared lost).",
		}, func() float64 { return float64(s.sys.NodeCount()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sharetree_nodes_offline_total",
			Help: "Nodes taken offline (silent for --node-offline-timeout: out of placement, their jobs kept) since this leader took over.",
		}, func() float64 { off, _ := s.sys.NodeTransitions(); return float64(off) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sharetree_nodes_lost_total",
			Help: "Nodes declared lost (silent for --node-lost-timeout: forgotten, their jobs failed and run again elsewhere) since this leader took over.",
		}, func() float64 { _, lost := s.sys.NodeTransitions(); return float64(lost) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sharetree_fenced_writes_total",
			Help: "Writes to the operations bucket, the scheduler bucket or the completions journal refused because a newer leader took over.",
		}, func() float64 { return float64(s.fenced.Load()) }),
	}
}
