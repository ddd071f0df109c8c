// Package natsembed starts an in-process nats-server with JetStream, as the
// scheduler, the demo and the integration tests use it. The server never
// installs signal handlers (the process owns SIGINT/SIGTERM) and listens on
// loopback only unless told otherwise.
package natsembed
