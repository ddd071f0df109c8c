package scheduler

// Reuse says how much of an Engine's update was carried over from the
// update before it: the operations whose inputs had not changed keep their
// elements and functions (see opcache.go), and a pool is prepared again
// only when something below it changed (see poolcache.go). An update whose
// operations mostly changed costs about what the package-level Update
// costs, so Recomputed over Operations is what an Engine's update time
// follows in a running scheduler.
type Reuse struct {
	// Operations is the number of operations the update read.
	Operations int
	// Recomputed is how many of them the update computed afresh: those
	// whose inputs differ from the last update's and those the last
	// update did not have; every one when the Engine could not keep the
	// tree's structure or the operations' elements (the first update, a
	// pool added, removed, moved or switched between fifo and fair share,
	// the cluster's resources changed), and when it built every
	// operation's functions again (it does, keeping their elements, when
	// the memory of the functions kept has grown to twice what one full
	// build needs, see keepFunctions).
	Recomputed int
}

// LastReuse returns the Reuse of the Engine's last successful update (the
// zero value before the first one and after a failed one).
func (en *Engine) LastReuse() Reuse {
	return en.t.reuse
}
