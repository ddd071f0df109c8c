// Package nodeagent will be the agent that runs on an exec node: it
// heartbeats its resources and jobs to the scheduler over NATS, runs jobs as
// processes or simulated jobs, and delivers interruption signals. Nothing is
// implemented here yet.
package nodeagent
