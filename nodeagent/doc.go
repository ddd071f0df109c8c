// Package nodeagent is the agent that runs on an exec node. It heartbeats
// the node's resources and jobs to the scheduler over NATS, runs the jobs the
// scheduler starts (real processes or simulated jobs), and delivers aborts
// and interruption signals.
//
// # Protocol (the exec-node side)
//
// Every HeartbeatPeriod the agent sends a full, level-triggered report
// (pb.Heartbeat) as a request on subjects.NodeHeartbeat(node): its
// incarnation and a sequence that grows by one per heartbeat, the node's
// total resources and the sum of its running jobs', its tags, every running
// job, and every finished job not yet acknowledged. A finished job is
// reported again and again until a response lists its id in
// acknowledged_finished_jobs. The first heartbeat goes out as soon as Run
// starts; at most one is in flight at a time. A heartbeat that fails
// (timeout, no responders, a micro error reply, a disconnected connection)
// is counted and logged; the next period tries again and jobs keep running.
//
// The response (pb.HeartbeatResponse) starts, aborts and interrupts jobs;
// starts are idempotent by job id. Between heartbeats the scheduler may
// publish a pb.JobSignal (abort or interrupt) on subjects.NodeSignal(node).
// Both carry the leader epoch: a response or signal from an epoch lower than
// the highest the agent has seen is ignored and counted, so a deposed leader
// cannot command the node.
//
// # Jobs
//
// A command job runs in its own process group with the agent's environment
// plus the spec's env (and SHARETREE_JOB_ID, SHARETREE_OPERATION_ID), in the
// spec's working directory or a fresh temporary directory under
// Config.WorkDir that is removed afterwards. Its stdout and stderr go to one
// bounded buffer whose last Config.JobLogLimit bytes are reported as the
// log tail. Exit 0 is COMPLETED, anything else FAILED; when the job's main
// process exits, whatever is left of its process group is killed. An abort
// kills the process group with SIGKILL (ABORTED). An interrupt delivers the
// interruption signal to the group and kills it if it has not exited after
// the timeout (ABORTED, "interruption timeout"); a job that exits in time is
// COMPLETED with interrupted set, whatever its exit status. A simulated job
// completes after its duration; interrupted, it completes at once.
//
// # Concurrency and cost
//
// The agent is a plain concurrent component, not an actor: its running and
// finished jobs are guarded by one mutex (Agent.mu), which is never held
// while waiting on NATS. Each agent costs one goroutine (Run's loop, which
// sends heartbeats and reads responses and signals from channel
// subscriptions) plus two per running process (wait and output copy); a
// simulated job costs a timer and no goroutine. The *nats.Conn belongs to the
// caller and may be shared by many agents; the agent never closes it.
package nodeagent
