// Package loadgen drives a live sharetree scheduler with many simulated node
// agents over real NATS and measures what the scheduler sustains: heartbeat
// throughput, heartbeat round-trip latency percentiles and job starts per
// second. It is the engine of `sharetree load`.
//
// # What a run does
//
// [Run] starts its own scheduler in-process (server.Start with an embedded
// NATS server in a temporary directory and one pool tree "load" with
// Config.Pools pools, "load-0" … "load-<n-1>") unless Config.NATSURL names
// the NATS server of a running scheduler; then it only submits operations
// and runs agents, and the target's tree must hold those pools. It submits
// Config.Operations operations spread round-robin over the pools, each with
// one task of simulated jobs of Config.JobDuration, enough of them to keep
// every slot of the simulated cluster busy for the whole run. Then it runs
// Config.Agents simulated agents that heartbeat every
// Config.HeartbeatPeriod; the first Config.Warmup is excluded from the
// steady-state statistics and the next Config.Duration is measured.
//
// # The simulated agent
//
// A simulated agent speaks the node-agent protocol of package nodeagent
// (see its documentation): every period it sends a full, level-triggered
// pb.Heartbeat as a NATS request on subjects.NodeHeartbeat (its incarnation,
// a growing sequence, its resources and usage, every running job and every
// finished job not yet acknowledged), at most one in flight. It applies the
// pb.HeartbeatResponse: acknowledged finished jobs are forgotten, aborted
// jobs finish ABORTED, interrupted jobs finish COMPLETED at once (as a
// simulated job does), started jobs run for their simulated duration (a
// command job, which the load generator never runs, for Config.JobDuration).
// Job signals published between heartbeats are applied as well. A job is
// not a timer: its end time is compared with the clock when the next
// heartbeat is built, which is exactly when a real agent would report it.
//
// Unlike nodeagent.Agent it costs no goroutine: the agents are partitioned
// over Config.Connections() shared NATS connections (Config.AgentsPerConn
// agents each); each connection has one goroutine that sends the heartbeats
// of its agents on their staggered schedule (agent i of n is due at
// i·period/n within each period) and one subscription that receives the
// responses of all of them on a wildcard reply subject. Every round trip is
// timed from the publish of the request to the arrival of its response, so
// the latency includes NATS in both directions, protobuf decoding and
// encoding on the scheduler, and the scheduler's own work.
//
// # What is reported
//
// See [Report]: heartbeats sent, answered, failed, timed out and skipped
// (a period that came while the previous heartbeat of the agent was still in
// flight: the mark of a growing backlog), round-trip percentiles over the
// whole window and over its first and second halves (a backlog shows as a
// rising latency), how late the load generator itself sent (its own
// saturation, which would invalidate the figures), job starts per second
// during the window and during the initial fill (from the first heartbeat
// until the running jobs first filled 95 % of the slots), the mean slot
// utilisation, and the process's CPU and memory. Report.Checks compares the
// figures with Config.Targets.
//
// Run is not a test: nothing is asserted and timings are reported, not
// checked, apart from the Checks it computes for the operator.
package loadgen
