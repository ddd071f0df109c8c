// Package agenthttp serves a node agent's Prometheus metrics and health
// over HTTP (`sharetree agent --http-addr`):
//
//   - GET /metrics: the agent's counters (heartbeats sent, answered,
//     failed, refused and unanswered; stale and late responses; signals;
//     jobs started, finished by state, interrupted, beyond capacity), its
//     current values (running jobs, finished jobs awaiting their
//     acknowledgement, leader epoch, heartbeat period, failed heartbeats
//     in a row, NATS connected), each labelled with the node, and the Go
//     runtime's and the process's metrics;
//   - GET /healthz: 200 while the agent is connected to NATS and fewer
//     than Config.UnhealthyAfter heartbeats in a row have failed, 503
//     otherwise, with the reasons as JSON.
//
// The metrics come from one nodeagent.Stats snapshot per scrape, so they
// agree with each other.
package agenthttp
