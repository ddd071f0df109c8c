package scheduler

import "math"

// PreemptionClass is how safe a running job is from preemption.
type PreemptionClass int

const (
	// NonPreemptible jobs keep the operation within its protected share.
	NonPreemptible PreemptionClass = iota
	// AggressivelyPreemptible jobs may be preempted for aggressively starving
	// operations.
	AggressivelyPreemptible
	// Preemptible jobs hold what is above the operation's fair share.
	Preemptible
)

// String returns "non_preemptible", "aggressively_preemptible" or
// "preemptible".
func (c PreemptionClass) String() string {
	switch c {
	case AggressivelyPreemptible:
		return "aggressively_preemptible"
	case Preemptible:
		return "preemptible"
	default:
		return "non_preemptible"
	}
}

// JobClassification is one running job and its class.
type JobClassification struct {
	ID    string
	Class PreemptionClass
}

// ClassifyInput is what the preemptible classification of one operation's
// jobs reads.
type ClassifyInput struct {
	// FairShare and Demand are the operation's shares.
	FairShare, Demand Share
	// Total is the cluster total (usage is compared as a share of it).
	Total Resources
	// AggressiveThreshold and Threshold are the tree's (aggressive)
	// preemption satisfaction thresholds.
	AggressiveThreshold, Threshold float64
	// UsageThreshold is the effective non-preemptible resource usage
	// threshold: while the operation's usage is strictly below it in every
	// resource, jobs are non-preemptible.
	UsageThreshold Resources
	// Jobs in start order, oldest first.
	Jobs []Job
}

// ClassifyJobs splits an operation's running jobs, in start order, into
// non-preemptible, aggressively preemptible and preemptible. A job belongs to
// the less preemptible side while the usage of all jobs before it is below
// the bound: below the usage threshold, or strictly below bound × fair share
// on every resource whose demand is not fully granted. The bounds are
// aggressive threshold × fair share and threshold × fair share; when the fair
// share covers the demand (and the demand is not zero) nothing is
// preemptible, only aggressively preemptible.
func ClassifyJobs(in ClassifyInput) []JobClassification {
	return classifyJobsInto(nil, in)
}

// classifyJobsInto is ClassifyJobs into the memory of dst.
func classifyJobsInto(dst []JobClassification, in ClassifyInput) []JobClassification {
	out := grow(dst, len(in.Jobs))
	bound1 := in.FairShare.Scale(in.AggressiveThreshold)
	bound2 := in.FairShare.Scale(in.Threshold)
	if FairShareCoversDemand(in.FairShare, in.Demand) {
		for r := range bound2 {
			bound2[r] = math.Inf(1)
		}
	}
	var prefix Resources
	for i, j := range in.Jobs {
		class := Preemptible
		switch {
		case belowBound(prefix, bound1, in):
			class = NonPreemptible
		case belowBound(prefix, bound2, in):
			class = AggressivelyPreemptible
		}
		out[i] = JobClassification{ID: j.ID, Class: class}
		prefix = prefix.Add(j.Usage)
	}
	return out
}

func belowBound(usage Resources, bound Share, in ClassifyInput) bool {
	return BelowBound(usage, in.UsageThreshold, bound, in.Total, in.FairShare, in.Demand, 0)
}

// FairShareCoversDemand reports whether an operation's fair share covers
// its demand, a non-zero one, up to the reference's ratio precision (1e-4):
// the classification then makes nothing of the operation preemptible (its
// second bound is infinite), only aggressively preemptible.
func FairShareCoversDemand(fairShare, demand Share) bool {
	return fairShare.DominatesEps(demand, largeEpsilon) && demand.DominatesEps(fairShare, largeEpsilon) &&
		demand.MaxComponent() > largeEpsilon
}

// BelowUsageThreshold reports whether usage is strictly below the
// non-preemptible usage threshold in every resource (NaN is not below).
func BelowUsageThreshold(usage, threshold Resources) bool {
	for r := range usage {
		if !(threshold[r] > usage[r]) {
			return false
		}
	}
	return true
}

// ResourceBlocked reports whether resource r is blocked for an operation:
// its fair share covers its demand in r (up to 1e-9).
func ResourceBlocked(fairShare, demand Share, r ResourceType) bool {
	return fairShare[r]+epsilon >= demand[r]
}

// BelowBound reports whether an operation using usage is below bound (a
// multiple of its fair share) in the classification's sense: below its
// usage threshold (BelowUsageThreshold), or, as a share of total, strictly
// below bound by more than eps on every resource that is not blocked
// (ResourceBlocked), on some resource when all of them are. ClassifyJobs
// passes eps 0; callers that absorb float noise pass their precision.
func BelowBound(usage, threshold Resources, bound Share, total Resources, fairShare, demand Share, eps float64) bool {
	if BelowUsageThreshold(usage, threshold) {
		return true
	}
	return strictlyDominatesNonBlocked(bound, usage.ShareOf(total), fairShare, demand, eps)
}

// strictlyDominatesNonBlocked reports whether a exceeds b by more than eps
// on every non-blocked resource (see ResourceBlocked). When every resource
// is blocked it reports whether a exceeds b by more than eps on some
// resource.
func strictlyDominatesNonBlocked(a, b, fairShare, demand Share, eps float64) bool {
	allBlocked := true
	for r := range a {
		if ResourceBlocked(fairShare, demand, ResourceType(r)) {
			continue
		}
		allBlocked = false
		if !(a[r] > b[r]+eps) {
			return false
		}
	}
	if !allBlocked {
		return true
	}
	for r := range a {
		if a[r] > b[r]+eps {
			return true
		}
	}
	return false
}

// Numeric precisions of the reference.
const (
	epsilon      = 1e-9
	largeEpsilon = 1e-4
)
