// Package purity holds the checks the pure packages (scheduler,
// scheduler/placement, scheduler/preemption) run on themselves in their
// tests: nothing from NATS or protoactor among their dependencies, and no
// clock, logging, goroutines, randomness or I/O in their source. It imports
// only the standard library, so a pure package's tests stay light.
package purity
