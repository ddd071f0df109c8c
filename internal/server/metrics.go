package server

import "github.com/prometheus/client_golang/prometheus"

// counters are the server's own counters as Prometheus metrics, read at
// each scrape: the events lost and the API requests refused.
func (s *Server) counters() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sharetree_events_dropped_total",
			Help: "Events not published: the scheduler's event buffer was full, or a tree's name made no subject.",
		}, func() float64 { d, _ := s.events.stats(); return float64(d) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sharetree_events_publish_failures_total",
			Help: "Event publishes that failed: not encoded, refused, or acknowledged with an error (or never) by the events stream.",
		}, func() float64 { _, f := s.events.stats(); return float64(f) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "sharetree_requests_rejected_total",
			Help: "API requests refused for a bad subject, payload or field (answered INVALID_ARGUMENT and the like).",
		}, func() float64 { return float64(s.rejected.Load()) }),
	}
}
