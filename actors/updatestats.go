package actors

import (
	"time"

	"github.com/sharetree/sharetree/scheduler"
)

// UpdateStats counts a tree's fair-share updates: how many ran, how many
// failed, how long the engine took, how long the updates held the ledger's
// mutex (which the scheduling passes wait for), and how many Results the
// updates wrote into recycled memory rather than new (see results.go).
type UpdateStats struct {
	// Updates and Failures count the completed and the failed updates
	// since the tree actor started.
	Updates, Failures uint64
	// Seconds is the engine's total time over Updates; Last is the latest
	// update's (both by Config.Now).
	Seconds float64
	Last    time.Duration
	// SnapshotLockSeconds and PublishLockSeconds are the total time the
	// Updates held the ledger's mutex (by Config.Now): to copy the
	// operations' usage and the nodes for the update's snapshot, and to
	// publish its result to the placement.
	SnapshotLockSeconds, PublishLockSeconds float64
	// RecycledResults and AllocatedResults count the Results the updates
	// were given since the tree was created: recycled ones and new ones.
	RecycledResults, AllocatedResults uint64
	// Operations and RecomputedOperations add up, over Updates, the
	// operations each update read and those the engine computed afresh
	// rather than carried over from the update before (see
	// scheduler.Reuse): their ratio is the share of the tree's operations
	// whose inputs change from one update to the next, which the engine's
	// time follows.
	Operations, RecomputedOperations uint64
	// StateWrites and StateWriteFailures count the writes of the tree's
	// state (its integral volumes, see Config.StatePersistPeriod) that
	// succeeded and that failed since the tree was created.
	StateWrites, StateWriteFailures uint64
}

// count adds one update whose engine took took, whose snapshot held the
// ledger's mutex for snapshotLock, that reused what reuse says, and that
// ended with err.
func (s *UpdateStats) count(took, snapshotLock time.Duration, reuse scheduler.Reuse, err error) {
	if err != nil {
		s.Failures++
		return
	}
	s.Updates++
	s.Operations += uint64(reuse.Operations)
	s.RecomputedOperations += uint64(reuse.Recomputed)
	s.Seconds += took.Seconds()
	s.Last = took
	s.SnapshotLockSeconds += snapshotLock.Seconds()
}
