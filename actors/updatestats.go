package actors

import "time"

// UpdateStats counts a tree's fair-share updates: how many ran, how many
// failed, how long the engine took, and how many Results the updates
// wrote into recycled memory rather than new (see results.go).
type UpdateStats struct {
	// Updates and Failures count the completed and the failed updates
	// since the tree actor started.
	Updates, Failures uint64
	// Seconds is the engine's total time over Updates; Last is the latest
	// update's (both by Config.Now).
	Seconds float64
	Last    time.Duration
	// RecycledResults and AllocatedResults count the Results the updates
	// were given since the tree was created: recycled ones and new ones.
	RecycledResults, AllocatedResults uint64
}

// count adds one update that took took and ended with err.
func (s *UpdateStats) count(took time.Duration, err error) {
	if err != nil {
		s.Failures++
		return
	}
	s.Updates++
	s.Seconds += took.Seconds()
	s.Last = took
}
