// Package httpserve runs the HTTP listeners of sharetree's processes (the
// scheduler's orchid, dashboard, health and metrics; the agent's health
// and metrics) the same way: bound at once, so a bad or busy address fails
// at start; served with read, write and idle timeouts; closed letting
// requests in flight end for a bounded time. Metrics builds the /metrics
// handler every listener serves.
package httpserve
