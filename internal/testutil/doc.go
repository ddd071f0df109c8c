// Package testutil holds helpers for integration tests: a real embedded
// nats-server per test and polling waits (tests never sleep blindly).
package testutil
