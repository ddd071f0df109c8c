// Package server runs the scheduler process: it starts (or joins) NATS,
// prepares the JetStream stream and buckets, bumps the leader epoch, revives
// operations from the store, starts the actors and serves the request/reply
// API as a nats.go/micro service. It is the NATS boundary: every handler
// decodes and validates, then sends to an actor; nothing here decides.
package server
