//go:build race

package testutil

// RaceEnabled reports whether the tests run under the race detector.
const RaceEnabled = true
