package preemption

import (
	"fmt"

	"github.com/sharetree/sharetree/scheduler"
)

// GracefulInterrupt is one job Graceful interrupts.
type GracefulInterrupt struct {
	Job       JobID
	Operation scheduler.OperationID
	Resources scheduler.Resources
	Seq       uint64
	Reason    GracefulReason
}

// GracefulReason says why a graceful operation's job is interrupted.
type GracefulReason struct {
	// Resource is the operation's dominant resource (by usage share).
	Resource scheduler.ResourceType
	// UsageShare is the operation's usage share of Resource before this
	// job's interruption, UsageShareAfter after it.
	UsageShare, UsageShareAfter float64
	// FairShare is the operation's fair share of Resource.
	FairShare float64
	// Tolerance is the tolerance applied (View.GracefulTolerance or its
	// default).
	Tolerance float64
}

// String is a one-line explanation for logs and events.
func (r GracefulReason) String() string {
	return fmt.Sprintf("graceful preemption: %s usage share %.6g above fair share %.6g (tolerance %g), %.6g after",
		r.Resource, r.UsageShare, r.FairShare, r.Tolerance, r.UsageShareAfter)
}

// Graceful chooses the jobs of graceful operations on the view's node to
// interrupt so that each such operation's usage approaches its fair share,
// whether or not anyone is waiting. For each operation in ModeGraceful (by
// id) whose usage share u exceeds its fair share f on its dominant
// resource d (the resource with the largest usage share, the earlier one on
// ties) by more than the tolerance t, it walks the operation's jobs on the
// node newest first and interrupts each one whose share of d still fits in
// the excess: u − job ≥ f − t; jobs that do not fit are skipped. Jobs already
// being interrupted are not counted again (Operation.Usage already excludes
// them). The result lists the interruptions by operation id, then newest
// first. The view is not modified; an invalid view returns an error that
// wraps ErrInvalidView.
func Graceful(v *View) ([]GracefulInterrupt, error) {
	if err := v.Validate(); err != nil {
		return nil, err
	}
	s := newState(v)
	tol := v.GracefulTolerance
	if tol == 0 {
		tol = DefaultGracefulTolerance
	}
	var out []GracefulInterrupt
	for _, o := range s.ops {
		if o.Mode != ModeGraceful {
			continue
		}
		share := o.usage.ShareOf(s.total)
		d := scheduler.DominantResource(o.usage, s.total)
		u, f := share[d], o.FairShare[d]
		if !(u > f+tol) {
			continue
		}
		for _, j := range s.jobs {
			if j.op != o || j.gone {
				continue
			}
			js := j.Resources.ShareOf(s.total)[d]
			if js <= 0 || u-js < f-tol {
				continue
			}
			out = append(out, GracefulInterrupt{Job: j.ID, Operation: o.ID, Resources: j.Resources, Seq: j.Seq,
				Reason: GracefulReason{Resource: d, UsageShare: u, UsageShareAfter: u - js, FairShare: f, Tolerance: tol}})
			u -= js
			if !(u > f+tol) {
				break
			}
		}
	}
	return out, nil
}
