package actors

import (
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharetree/sharetree/scheduler"
)

// revival is a restarted scheduler's wait for the nodes to report the
// jobs they run (see adopt.go): until it ends, the operations it revived
// start no new jobs, and a reported job it cannot place yet is left
// running. It ends at Config.JobRevivalTimeout, or as soon as every node
// of the roster (Deps.Roster: the nodes that may run jobs) has reported
// every job it runs — without a roster, or with an empty one (a cluster
// whose roster predates it), only at the timeout. A nil *revival is one
// that never began (nothing unfinished was revived). Its methods are
// safe for concurrent use: the ledgers, the tree actors and the node
// actors all ask it.
type revival struct {
	logger *slog.Logger

	mu sync.Mutex
	// revived are the operations revived unfinished and not failed since:
	// a job of any other one will never be adopted, so its report leaves
	// nothing to wait for.
	revived map[scheduler.OperationID]bool
	// start is when the wait began, until its timeout; ended is set once
	// the wait is over early, at endedAt.
	start   time.Time
	until   time.Time
	ended   bool
	endedAt time.Time
	// done is set once the wait is seen over, early or at the timeout,
	// for lock-free reads (over).
	done atomic.Bool
	// waiting are the roster's nodes that have not reported every job
	// they run yet (nil without a roster), of rosterSize.
	waiting    map[string]bool
	rosterSize int
}

// newRevival starts the wait at now for timeout, for the nodes of
// roster.
func newRevival(now time.Time, timeout time.Duration, revived map[scheduler.OperationID]bool, roster []string, logger *slog.Logger) *revival {
	r := &revival{logger: logger, revived: revived, start: now, until: now.Add(timeout)}
	if len(roster) > 0 {
		r.rosterSize, r.waiting = len(roster), make(map[string]bool, len(roster))
		for _, node := range roster {
			r.waiting[node] = true
		}
	}
	return r
}

// active reports whether the wait is still on at now.
func (r *revival) active(now time.Time) bool {
	if r.over() {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended || !now.Before(r.until) {
		r.done.Store(true)
		return false
	}
	return true
}

// over reports, without taking the lock, whether the wait was seen over
// (the fast path of the heartbeats' checks once it is).
func (r *revival) over() bool { return r == nil || r.done.Load() }

// activeAt reports whether the wait was still on at t (a time not after
// the last call's now): a fair-share update computed then may miss jobs
// that run, since the nodes had not all reported them.
func (r *revival) activeAt(t time.Time) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return t.Before(r.until) && !(r.ended && !t.Before(r.endedAt))
}

// awaits reports whether a job of operation id, which no tree schedules
// yet, may still be adopted once its operation is: it was revived
// unfinished.
func (r *revival) awaits(id scheduler.OperationID) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.revived[id]
}

// forget drops an operation that could not be revived (it failed): its
// jobs will never be adopted.
func (r *revival) forget(id scheduler.OperationID) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.revived, id)
}

// reported records that node has reported every job it runs, each
// adopted or settled; the wait ends when it was the roster's last.
func (r *revival) reported(node string, now time.Time) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended || !now.Before(r.until) || !r.waiting[node] {
		return
	}
	delete(r.waiting, node)
	if len(r.waiting) == 0 {
		r.ended, r.endedAt = true, now
		r.done.Store(true)
		r.logger.Info("every node of the roster reported its jobs: the revived operations start jobs again",
			"took", now.Sub(r.start), "nodes", r.rosterSize, "timeout_left", r.until.Sub(now))
	}
}

// unreported returns the roster's nodes that have not reported, sorted.
func (r *revival) unreported() []string {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.waiting))
}

// waitingFor is how many nodes of the roster the wait is on for at now (0
// once it is over).
func (r *revival) waitingFor(now time.Time) int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended || !now.Before(r.until) {
		return 0
	}
	return len(r.waiting)
}
