package actors

import (
	"sync"

	"github.com/sharetree/sharetree/scheduler"
)

// results holds a tree's latest fair-share Result and recycles the ones
// nobody reads any more.
//
// A Result of a large tree is tens of megabytes (110,001 records of the
// largest benchmark tree are 84 MB); allocating one at every update costs
// more than the update itself once the Engine keeps its working memory
// (see scheduler.Engine.UpdateInto and docs/BENCHMARKS.md). So the tree
// actor updates into a spare Result — one that was published, superseded
// and released by every reader — and only allocates when there is none.
//
// Readers never see a Result being overwritten:
//   - the tree actor reads a Result it publishes before it publishes the
//     next one (publish recycles nothing that is still the latest), and the
//     scheduling passes read the latest one under the ledger's mutex, under
//     which it is published (see Ledger.setResult);
//   - a reader on another goroutine takes a lease (acquire) and calls its
//     release when done; a Result is recycled only once it is superseded
//     and every lease on it is released. A lease that is never released
//     only keeps its Result from being recycled;
//   - a caller that cannot say when it is done (System.Result) pins the
//     Result: it is never recycled.
//
// The methods are safe for concurrent use.
type results struct {
	mu     sync.Mutex
	latest *resultLease
	// spare is a superseded Result nobody reads, ready to be overwritten
	// (at most one is kept: an update needs one, and keeping more would
	// only hold memory).
	spare *scheduler.Result
	// recycled and allocated count the Results take handed out.
	recycled, allocated uint64
}

// resultLease is one published Result and who still reads it.
type resultLease struct {
	res *scheduler.Result
	// readers is the number of unreleased leases; pinned and retired are
	// set once. All three are guarded by results.mu.
	readers int
	pinned  bool
	retired bool
}

// take returns a Result for the next update to overwrite: the spare, or a
// new one. Only the tree actor calls it, one update at a time.
func (r *results) take() *scheduler.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	if res := r.spare; res != nil {
		r.spare = nil
		r.recycled++
		return res
	}
	r.allocated++
	return new(scheduler.Result)
}

// giveBack returns a Result that take handed out and no update completed
// into (an update that failed without writing it, see UpdateInto).
func (r *results) giveBack(res *scheduler.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keep(res)
}

// publish makes res the latest Result; the one it supersedes is recycled
// as soon as nobody reads it.
func (r *results) publish(res *scheduler.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.latest
	r.latest = &resultLease{res: res}
	if old != nil {
		old.retired = true
		r.recycle(old)
	}
}

// recycle keeps l's Result as the spare if it is superseded, unpinned and
// unread. The caller holds mu.
func (r *results) recycle(l *resultLease) {
	if l.retired && !l.pinned && l.readers == 0 {
		r.keep(l.res)
	}
}

// keep makes res the spare unless there is one. The caller holds mu.
func (r *results) keep(res *scheduler.Result) {
	if r.spare == nil {
		r.spare = res
	}
}

// current returns the latest Result (nil before the first update) for a
// reader that cannot outlive it: see the type's comment.
func (r *results) current() *scheduler.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.latest == nil {
		return nil
	}
	return r.latest.res
}

// acquire returns the latest Result (nil before the first update) and the
// function that releases it: the Result stays as it is until release is
// called, and must not be read after. release may be called more than
// once; only the first call counts.
func (r *results) acquire() (*scheduler.Result, func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.latest
	if l == nil {
		return nil, func() {}
	}
	l.readers++
	return l.res, sync.OnceFunc(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		l.readers--
		r.recycle(l)
	})
}

// pin returns the latest Result (nil before the first update) and keeps it
// from ever being recycled.
func (r *results) pin() *scheduler.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.latest == nil {
		return nil
	}
	r.latest.pinned = true
	return r.latest.res
}

// counts returns how many Results take recycled and allocated.
func (r *results) counts() (recycled, allocated uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recycled, r.allocated
}
