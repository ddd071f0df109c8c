// Command graceful-service is a small HTTP service that behaves like the
// preemption seed's ClickHouse instance run as a job of a vanilla operation
// with preemption_mode graceful: it serves requests, and on the
// interruption signal it stops taking new ones, finishes those in flight and
// exits 0, so that the scheduler can scale it down without failing a single
// request.
//
// It listens on an ephemeral loopback port (--listen, default
// 127.0.0.1:0) and registers "<id>.addr" in --registry-dir (see package
// registry), where id is $SHARETREE_JOB_ID (set by the node agent) or --id.
// Endpoints:
//
//	GET /work?ms=N   works N milliseconds (default --work, 50ms), then answers
//	                 "<id> <request number>"
//	GET /stats       {"id", "in_flight", "completed", "in_flight_work_ms"}
//	                 as JSON (in_flight_work_ms: the work time of each
//	                 request in flight)
//
// On SIGINT (the default interruption signal of the example's operation
// spec) or SIGTERM (the node agent's default) it:
//
//  1. unregisters (removes its registry file), so clients stop choosing it;
//  2. stops accepting connections and closes idle ones (http.Server.Shutdown);
//  3. waits for every request in flight to finish, up to --drain-timeout;
//  4. exits 0, or 1 when the drain failed (timeout, or the registry file
//     could not be removed). A second signal during the drain exits 1 at
//     once.
//
// Exit status 2 is a usage error, 3 a failure to listen, register or serve.
//
// Package client (the client library) and cmd/loadclient (a load generator)
// in this directory load-balance across the registered instances and retry
// only requests that were never accepted.
package main
