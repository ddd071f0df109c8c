// Package preemption holds the decisions the running scheduler makes about
// taking resources back on a node heartbeat: which jobs to preempt so that a
// starving operation can start a job ([Preempt]), and which jobs of
// graceful operations to interrupt because their operation uses more than
// its fair share ([Graceful]).
//
// Both functions read an immutable [View] of one node: its free resources,
// its running jobs (with their start order, their preemption class from the
// engine's classification and whether they are already being interrupted),
// the operations involved (pool chain, fair share, demand, live usage,
// starvation status, preemption mode, next pending job), the pools on their
// chains (strong-guarantee share, live usage, starvation status) and the
// tree's thresholds. They return plain values that explain every decision
// and every refusal; the caller interrupts the jobs and starts the new ones.
// [Source.PreemptionView] and [Source.GracefulView] build views from a
// scheduler.Result and the live scheduler/placement state.
//
// The package is pure and deterministic: no clock, logging, goroutines,
// randomness or I/O; inputs may come in any order (everything is sorted with
// explicit tie-breaks, maps are only looked up), and the same view always
// gives the same result.
//
// # Preempt
//
// Starving operations are served neediest first: aggressively starving
// before starving, then by ascending local satisfaction
// ([scheduler.LocalSatisfaction] of live usage against fair share), then by
// id. At most View.MaxStarts (default 1, the reference's "one allocation per
// heartbeat") of them get a job; each later one sees the earlier decisions
// (victims gone, started jobs counted). For each operation o:
//
//   - o needs a pending job (NextJob); otherwise [RefusalNothingPending].
//   - No loops: o may not start a job that would be preemptible at once. The
//     job would be classified Preemptible when o's usage before it is not
//     below Preemption × fair share (the classification's rule), and o's
//     usage after it must stay within Preemption × fair share on every
//     resource whose demand the fair share does not cover. Neither applies
//     while the usage after the start stays strictly below o's
//     non-preemptible usage, or when o's fair share covers its demand (such
//     an operation has no preemptible jobs). Otherwise
//     [RefusalWouldBePreemptible].
//   - The job must fit the node at all ([RefusalNeverFits]), and must not
//     already fit in the node's free resources plus those of jobs being
//     interrupted ([RefusalFitsWithoutPreemption]: they are on their way
//     out; nothing more is taken).
//   - A job j of operation v is a candidate unless: it is already being
//     interrupted; v is o; v is graceful (only Graceful interrupts those);
//     v is itself starving; [MayTake] refuses j's class for o's status (a
//     Starving operation takes Preemptible jobs, an AggressivelyStarving one
//     also AggressivelyPreemptible jobs, nobody takes NonPreemptible ones);
//     one of v's pools that does not contain o is starving.
//   - A set of victims is valid when, after removing it, no victim
//     operation v is below its floor — strictly below its non-preemptible
//     usage in every resource, or strictly below k × fair share on every
//     resource whose demand the fair share does not cover, where k is
//     Thresholds.Preemption for a Starving o (infinite when v's fair share
//     covers its demand) and Thresholds.Aggressive for an AggressivelyStarving
//     o — and no pool on a victim's chain that does not contain o is below
//     its guarantee. A pool is below its guarantee g when its usage share is
//     below g on every resource g covers (g_r > 0): a pool's subtree
//     protects what its guarantee covers from operations outside it, while
//     operations inside it may reshuffle its resources. Validity is
//     rechecked with live usage, so stale classes cannot take an operation
//     below its floor.
//   - Among the valid sets that make the job fit, Preempt takes one with the
//     fewest jobs; among those, the first in candidate order (Preemptible
//     before AggressivelyPreemptible, each newest first — the scheduler
//     seed's "job with the minimum running time" — then by id), compared
//     lexicographically. The exact search is bounded by a count of examined
//     sets; past it, the greedy newest-first choice (then dropping every
//     victim the others cover without) is used and Decision.Exact is false.
//     When no valid set exists, [RefusalNotEnoughPreemptible] with the
//     counts of jobs ruled out by each rule.
//
// Every victim carries a [Reason]: the starving operation and its status,
// the victim's class, the floor it was kept at and the thresholds.
//
// # Graceful
//
// For every operation in [ModeGraceful] whose usage share exceeds its fair
// share on its dominant resource by more than the tolerance
// (View.GracefulTolerance, default [DefaultGracefulTolerance]), Graceful
// interrupts its jobs on the node newest first, skipping any whose
// interruption would take the usage below fair share − tolerance, until the
// usage is within the tolerance. It runs whether or not anyone is waiting,
// so a graceful operation's usage tracks its fair share.
//
// # Usage across nodes
//
// Operation.Usage and Pool.Usage exclude jobs already being interrupted
// anywhere in the cluster; the caller must record an interruption before the
// next view is built, or every node would interrupt the same excess again.
//
// # Calling it from a node actor
//
// The tree keeps one [TreeSettings] per configuration and, next to its
// placement, the jobs being interrupted (Source.Interrupting: added when an
// interruption or abort is sent, removed when the job leaves) with their
// sums per operation (SumLeaving, summed again after a change, so that a
// view does not read every interrupting job of the tree). On a heartbeat,
// under the lock that guards the placement:
//
//	src := &preemption.Source{Settings: ts, Result: latest, Placement: p,
//		Operation: settingsOf, Interrupting: interrupting,
//		Leaving: leaving, // preemption.SumLeaving(interrupting), once per change
//		Starving: starving} // preemption.StarvingOperations(latest), once per result
//
//	// 1. Graceful pass, every heartbeat.
//	gv, err := src.GracefulView(node, jobs)
//	interrupts, err := preemption.Graceful(gv)
//	for _, g := range interrupts {
//		// interrupt g.Job with allocation_graceful_preemption_timeout,
//		// record it in interrupting, emit g.Reason.String()
//	}
//
//	// 2. Regular scheduling pass (placement.Schedule) as before.
//
//	// 3. Preemptive pass, at most every preemptive_scheduling_backoff per
//	// node, with node.Free and jobs as they are after step 2 (and
//	// src.Leaving summed again if step 1 interrupted jobs).
//	pv, err := src.PreemptionView(node, jobs)
//	plan, err := preemption.Preempt(pv)
//	for _, d := range plan.Decisions {
//		for _, v := range d.Victims {
//			// interrupt v.Job with allocation_preemption_timeout, record
//			// it in interrupting, emit v.Reason.String()
//		}
//		// keep d.Start's room on the node for d.Operation
//	}
//	for _, r := range plan.Refusals {
//		// log or emit r.String()
//	}
//
// Interrupted jobs take up to the preemption timeout to leave, so the job
// cannot start in their place at once without overcommitting the node. The
// running scheduler (package actors) keeps a reservation instead: until the
// victims have left, the node's regular passes give other operations only
// what the reserved room leaves, and the first pass in which the job fits
// starts it with placement's StartNextWithin. A caller that can overcommit
// starts it at once with StartNextWithin and ample free resources. Preempt
// does not preempt again while the job fits in free plus leaving resources
// (RefusalFitsWithoutPreemption).
package preemption
