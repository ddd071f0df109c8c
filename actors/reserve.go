package actors

import (
	"time"

	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/placement"
)

// A preemption interrupts jobs to start a starving operation's job in their
// place. Interrupted jobs take up to allocation_preemption_timeout to leave,
// so the job cannot start in the same pass: the node keeps a reservation
// for it instead. While the reservation holds, the node's regular passes
// hand other operations only what the reserved job leaves free; the first
// pass in which the reserved job fits starts it (StartNextWithin), before
// anything else. A reservation ends when it is served, when its operation
// is gone or has nothing left to start, or once the victims have had their
// timeout and reservationSlack heartbeats more to leave (a victim that
// never reports its exit must not hold the node forever).

// reservationSlack is how many heartbeat periods past the preemption
// timeout a reservation outlives its victims' deadline.
const reservationSlack = 3

// reservation is room a preemption made on a node for one job of op.
type reservation struct {
	op scheduler.OperationID
	// res is the job's resources (preemption.Decision.Start).
	res   scheduler.Resources
	until time.Time
}

// reserveLocked keeps room on node for a job of op of res, made by
// interrupting jobs with the given timeout.
func (l *Ledger) reserveLocked(node scheduler.NodeID, op scheduler.OperationID, res scheduler.Resources, timeout time.Duration, now time.Time) {
	until := now.Add(timeout + reservationSlack*l.pre.cfg.HeartbeatPeriod)
	l.pre.reserved[node] = append(l.pre.reserved[node], reservation{op: op, res: res, until: until})
}

// serveReservationsLocked starts the reserved jobs of node that fit free,
// in the order the reservations were made, and drops the reservations that
// ended. It returns the assignments, the free resources left and the
// resources the remaining reservations hold.
func (l *Ledger) serveReservationsLocked(node scheduler.NodeID, free scheduler.Resources, now time.Time) ([]placement.Assignment, scheduler.Resources, scheduler.Resources) {
	rs := l.pre.reserved[node]
	if len(rs) == 0 {
		return nil, free, scheduler.Resources{}
	}
	var as []placement.Assignment
	var held scheduler.Resources
	kept := rs[:0]
	for _, r := range rs {
		if now.After(r.until) || l.ops[r.op] == nil {
			continue
		}
		if a, ok := l.p.StartNextWithin(r.op, node, free); ok {
			as = append(as, a)
			free = free.Sub(a.Resources)
			continue
		}
		if u, ok := l.p.Operation(r.op); ok && u.PendingJobCount > 0 {
			// Its job does not fit yet: the victims are still leaving.
			kept = append(kept, r)
			held = held.Add(r.res)
		}
		// Otherwise the operation has nothing left to start.
	}
	clear(rs[len(kept):])
	if len(kept) == 0 {
		delete(l.pre.reserved, node)
	} else {
		l.pre.reserved[node] = kept
	}
	return as, free, held
}

// forgetReservations drops the reservations of a removed operation.
func (s *preemptState) forgetReservations(id scheduler.OperationID) {
	for node, rs := range s.reserved {
		kept := rs[:0]
		for _, r := range rs {
			if r.op != id {
				kept = append(kept, r)
			}
		}
		clear(rs[len(kept):])
		if len(kept) == 0 {
			delete(s.reserved, node)
		} else {
			s.reserved[node] = kept
		}
	}
}

// minusHeld is free less what reservations hold, never below zero.
func minusHeld(free, held scheduler.Resources) scheduler.Resources {
	if held.IsZero() {
		return free
	}
	return free.Sub(held).Max(scheduler.Resources{})
}
