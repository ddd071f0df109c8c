package scheduler

// Reuse says how much of an Engine's update was carried over from the
// update before it: the operations whose inputs had not changed keep their
// elements and functions (see opcache.go), and the pools above only
// changed operations are prepared again (see poolcache.go). An update whose
// operations mostly changed costs about what the package-level Update
// costs, so Recomputed over Operations is what an Engine's update time
// follows in a running scheduler.
type Reuse struct {
	// Operations is the number of operations the update read.
	Operations int
	// Recomputed is how many of them the update computed afresh: those
	// whose inputs differ from the last update's, those the last update
	// did not have, and every one when the Engine could not keep the
	// tree's structure (a pool added, removed or moved, or the first
	// update).
	Recomputed int
}

// LastReuse returns the Reuse of the Engine's last successful update (the
// zero value before the first one and after a failed one).
func (en *Engine) LastReuse() Reuse {
	return en.reuse
}
