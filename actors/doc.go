// Package actors will hold the protoactor actors of the running scheduler:
// the scheduler root, one tree actor per pool tree (which calls
// scheduler.Update on an immutable snapshot every fair_share_update_period),
// pool, operation and node actors. Each actor owns its state; NATS callbacks
// only decode and send. Nothing is implemented here yet: the running
// scheduler is the next piece of work after the engine.
package actors
