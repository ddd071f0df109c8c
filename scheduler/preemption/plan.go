package preemption

import (
	"fmt"
	"strings"

	"github.com/sharetree/sharetree/scheduler"
)

// Plan is what Preempt decided for one heartbeat: the preemptions, and why
// every starving operation it looked at got nothing. No decisions and no
// refusals means no operation in the view is starving.
type Plan struct {
	// Decisions in the order they were made (neediest operation first).
	Decisions []Decision
	// Refusals, one per starving operation that got no decision, in the
	// order the operations were considered.
	Refusals []Refusal
}

// Decision is one job started by preemption.
type Decision struct {
	// Operation is the starving operation the job belongs to.
	Operation scheduler.OperationID
	// Starvation is its status when the decision was made.
	Starvation scheduler.StarvationStatus
	// Start is the resources of the job to start in the victims' place (the
	// operation's NextJob). It fits the node once the victims and the jobs
	// already being interrupted have left.
	Start scheduler.Resources
	// Victims are the jobs to interrupt, in the order chosen (the
	// candidate order: preemptible before aggressively preemptible, newest
	// first). They are the fewest that make Start fit.
	Victims []Victim
	// Exact is false when the search for the fewest victims ran out of its
	// budget and Victims came from the greedy newest-first fallback (still
	// valid and irreducible, but perhaps not the fewest).
	Exact bool
}

// Victim is one job to interrupt.
type Victim struct {
	Job       JobID
	Operation scheduler.OperationID
	Resources scheduler.Resources
	Seq       uint64
	Reason    Reason
}

// Reason says why a job is preempted: for which starving operation, which
// class made it a candidate and which thresholds bounded the choice.
type Reason struct {
	// For is the starving operation the job makes room for.
	For scheduler.OperationID
	// ForStarvation is that operation's status.
	ForStarvation scheduler.StarvationStatus
	// Class is the victim's preemption class.
	Class scheduler.PreemptionClass
	// VictimFloor is the satisfaction threshold the victim's operation was
	// kept at: Thresholds.Preemption for a Starving operation,
	// Thresholds.Aggressive for an AggressivelyStarving one.
	VictimFloor float64
	// Thresholds are the tree's settings.
	Thresholds Thresholds
}

// String is a one-line explanation for logs and events.
func (r Reason) String() string {
	return fmt.Sprintf("preempted for %s operation %s: job is %s, its operation kept at >= %g × fair share "+
		"(preemption_satisfaction_threshold %g, aggressive_preemption_satisfaction_threshold %g, non_preemptible_resource_usage_threshold %s)",
		r.ForStarvation, r.For, r.Class, r.VictimFloor, r.Thresholds.Preemption, r.Thresholds.Aggressive, r.Thresholds.NonPreemptibleUsage)
}

// RefusalCode says why a starving operation got no job by preemption.
type RefusalCode int

const (
	// RefusalNothingPending: the operation has no pending job.
	RefusalNothingPending RefusalCode = iota
	// RefusalWouldBePreemptible: starting its next job would take the
	// operation's usage beyond Thresholds.Preemption × its fair share, so
	// the job would be preemptible at once (no preemption loops).
	RefusalWouldBePreemptible
	// RefusalNeverFits: the next job is larger than the node.
	RefusalNeverFits
	// RefusalFitsWithoutPreemption: the next job fits in the node's free
	// resources plus those of jobs already being interrupted; nothing more
	// needs preempting.
	RefusalFitsWithoutPreemption
	// RefusalNotEnoughPreemptible: no valid set of victims makes the job
	// fit (see Refusal.Excluded for what was ruled out).
	RefusalNotEnoughPreemptible
	// RefusalStartLimit: the heartbeat's MaxStarts were already used by
	// needier operations.
	RefusalStartLimit
)

var refusalNames = [...]string{
	RefusalNothingPending:        "nothing_pending",
	RefusalWouldBePreemptible:    "would_be_preemptible",
	RefusalNeverFits:             "never_fits",
	RefusalFitsWithoutPreemption: "fits_without_preemption",
	RefusalNotEnoughPreemptible:  "not_enough_preemptible",
	RefusalStartLimit:            "start_limit",
}

// String returns the code's snake_case name.
func (c RefusalCode) String() string {
	if c >= 0 && int(c) < len(refusalNames) {
		return refusalNames[c]
	}
	return fmt.Sprintf("refusal(%d)", int(c))
}

// Refusal explains why a starving operation got nothing on this heartbeat.
type Refusal struct {
	Operation  scheduler.OperationID
	Starvation scheduler.StarvationStatus
	Code       RefusalCode
	// Need is the operation's next job (zero for RefusalNothingPending).
	Need scheduler.Resources
	// Releasable is the node's free resources plus those of jobs already
	// being interrupted.
	Releasable scheduler.Resources
	// Candidates is the sum of the jobs that passed every per-job rule
	// (each could be preempted on its own).
	Candidates scheduler.Resources
	// Excluded counts the node's jobs ruled out, by first rule broken.
	Excluded Exclusions
}

// Exclusions counts the node's jobs that could not be victims, by the first
// rule each broke, in the order the rules are checked.
type Exclusions struct {
	// Interrupting: already being interrupted.
	Interrupting int
	// OwnOperation: a job of the starving operation itself.
	OwnOperation int
	// GracefulOperation: a job of a graceful operation (only Graceful
	// interrupts those).
	GracefulOperation int
	// StarvingOperation: a job of an operation that is itself starving.
	StarvingOperation int
	// Class: a class the starving operation's status may not take.
	Class int
	// OperationFloor: taking it alone would leave its operation below the
	// victim floor × fair share or below its non-preemptible usage.
	OperationFloor int
	// PoolProtection: one of its pools outside the starving operation's
	// subtree is starving, or would fall below its guarantee.
	PoolProtection int
}

// String is a one-line explanation for logs and events.
func (r Refusal) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s operation %s got no job by preemption: %s", r.Starvation, r.Operation, r.Code)
	if r.Code != RefusalNothingPending && r.Code != RefusalStartLimit {
		fmt.Fprintf(&b, " (needs %s, releasable %s, candidates %s", r.Need, r.Releasable, r.Candidates)
		e := r.Excluded
		for _, c := range []struct {
			n    int
			what string
		}{
			{e.Interrupting, "interrupting"}, {e.OwnOperation, "own operation"}, {e.GracefulOperation, "graceful operation"},
			{e.StarvingOperation, "starving operation"}, {e.Class, "class"}, {e.OperationFloor, "operation floor"},
			{e.PoolProtection, "pool protection"},
		} {
			if c.n > 0 {
				fmt.Fprintf(&b, ", %d excluded by %s", c.n, c.what)
			}
		}
		b.WriteByte(')')
	}
	return b.String()
}

// Explain is a multi-line summary of the plan for logs.
func (p Plan) Explain() string {
	if len(p.Decisions) == 0 && len(p.Refusals) == 0 {
		return "no starving operation"
	}
	var b strings.Builder
	for _, d := range p.Decisions {
		fmt.Fprintf(&b, "start %s for %s operation %s by preempting %d job(s)\n", d.Start, d.Starvation, d.Operation, len(d.Victims))
		for _, v := range d.Victims {
			fmt.Fprintf(&b, "  %s of %s: %s\n", v.Job, v.Operation, v.Reason)
		}
	}
	for _, r := range p.Refusals {
		b.WriteString(r.String())
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}
