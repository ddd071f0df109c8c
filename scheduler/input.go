package scheduler

import (
	"fmt"
	"time"
)

// Node is one exec node of the tree: its resources and tags. Nodes matter for
// per-node shape (the best allocation share of an operation).
type Node struct {
	ID        NodeID
	Resources Resources
	Tags      []string
}

// Cluster is what the tree schedules on: the total resources of its nodes,
// and, when known, the nodes themselves.
type Cluster struct {
	// Total is the sum of the nodes' resources (or the given total when Nodes
	// is empty).
	Total Resources
	// Nodes, when not empty, lets the engine limit operations by how many of
	// their jobs fit on the nodes (best allocation share).
	Nodes []Node
}

// NewClusterFromNodes builds a Cluster whose total is the sum of the nodes.
func NewClusterFromNodes(nodes []Node) Cluster {
	var total Resources
	for _, n := range nodes {
		total = total.Add(n.Resources)
	}
	return Cluster{Total: total, Nodes: nodes}
}

// Job is one running job of an operation, as the preemptible classification
// sees it.
type Job struct {
	// ID names the job within its operation (for reporting).
	ID string
	// Usage is the job's resource usage.
	Usage Resources
	// StartTime orders the operation's jobs: classification walks them from
	// the oldest.
	StartTime time.Time
}

// Operation is one running operation as the engine sees it.
type Operation struct {
	// ID is unique in the cluster.
	ID OperationID
	// Pool is the operation's pool; "" is the root.
	Pool PoolID
	// Weight: nil is 1.
	Weight *float64
	// StartTime orders operations in fifo pools.
	StartTime time.Time
	// Demand: everything the operation wants (usage plus pending jobs).
	Demand Resources
	// Usage: what its running jobs hold now.
	Usage Resources
	// ResourceLimits: absent resources are unlimited.
	ResourceLimits PartialResources
	// JobResources: the resources of one job, used with the nodes' shapes to
	// compute the best allocation share. Zero: no per-node limit.
	JobResources Resources
	// PendingJobCount: jobs waiting to start (orders fifo pools with
	// pending_job_count and scales starvation timeouts).
	PendingJobCount int
	// IsGang: a gang gets its whole demand or nothing (when the tree enables
	// the step function for gangs).
	IsGang bool
	// Unschedulable: the operation cannot start jobs now; it is never below
	// its fair share.
	Unschedulable bool
	// FairShareStarvationTolerance can only lower the inherited value.
	FairShareStarvationTolerance *float64
	// FairShareStarvationTimeout can only raise the inherited value.
	FairShareStarvationTimeout *time.Duration
	// NonPreemptibleResourceUsageThreshold can only lower the inherited
	// threshold, per resource.
	NonPreemptibleResourceUsageThreshold *PartialResources
	// Jobs are the running jobs, for the preemptible classification. Empty:
	// no classification is reported.
	Jobs []Job
}

// Validate checks one operation on its own.
func (o *Operation) Validate() error {
	if o.ID == "" {
		return fmt.Errorf("%w: operation id is empty", ErrInvalidOperation)
	}
	if o.ID == RootID {
		// The root is reported under this name; an operation so named would
		// be a second element of the same name in the result.
		return fmt.Errorf("%w: operation id %q is reserved for the root", ErrInvalidOperation, o.ID)
	}
	if err := o.validateInputs(); err != nil {
		return err
	}
	return o.validateRest()
}

// validateKnown is Validate for an operation whose recorded inputs are
// known to be unchanged or not (same, see validateOperation): when they
// are, only its id and validateRest's fields are checked, since the
// recorded ones passed validateInputs. The error is Validate's.
func (o *Operation) validateKnown(same bool) error {
	if !same || o.ID == "" {
		return o.Validate()
	}
	return o.validateRest()
}

// bad is the error of an operation's invalid field.
func (o *Operation) bad(field, format string, args ...any) error {
	return fmt.Errorf("%w: operation %q %s: %s", ErrInvalidOperation, o.ID, field, fmt.Sprintf(format, args...))
}

// validateInputs checks the fields an element is filled from (those
// opInputs records, see opcache.go), in Validate's order.
func (o *Operation) validateInputs() error {
	if w := o.Weight; w != nil && (!finite(*w) || *w < MinWeight || *w > MaxWeight) {
		return o.bad("weight", "must be a finite number in [%g, %g], got %g", MinWeight, MaxWeight, *w)
	}
	for r := range NumResources {
		name := ResourceType(r).String()
		if v := o.Demand[r]; !ValidAmount(v) {
			return o.bad("demand", "%s %s, got %g", name, AmountRule, v)
		}
		if v := o.Usage[r]; !ValidAmount(v) {
			return o.bad("usage", "%s %s, got %g", name, AmountRule, v)
		}
		if v := o.JobResources[r]; !ValidAmount(v) {
			return o.bad("job_resources", "%s %s, got %g", name, AmountRule, v)
		}
	}
	if err := validResources(o.ResourceLimits); err != nil {
		return o.bad("resource_limits", "%v", err)
	}
	if o.PendingJobCount < 0 {
		return o.bad("pending_job_count", "must be >= 0, got %d", o.PendingJobCount)
	}
	if t := o.FairShareStarvationTolerance; t != nil && (!finite(*t) || *t < 0 || *t > 1) {
		return o.bad("fair_share_starvation_tolerance", "must be in [0, 1], got %g", *t)
	}
	if t := o.FairShareStarvationTimeout; t != nil && *t < 0 {
		return o.bad("fair_share_starvation_timeout", "must be >= 0, got %s", *t)
	}
	return nil
}

// validateRest checks the fields Validate checks after validateInputs'.
func (o *Operation) validateRest() error {
	if t := o.NonPreemptibleResourceUsageThreshold; t != nil {
		if err := validResources(*t); err != nil {
			return o.bad("non_preemptible_resource_usage_threshold", "%v", err)
		}
	}
	for i, j := range o.Jobs {
		for r := range NumResources {
			if v := j.Usage[r]; !ValidAmount(v) {
				return o.bad(fmt.Sprintf("jobs[%d].usage", i), "%s %s, got %g", ResourceType(r), AmountRule, v)
			}
		}
	}
	return nil
}

// Snapshot is everything one fair-share update reads. The engine never
// modifies it.
type Snapshot struct {
	// Now is the time of this update.
	Now time.Time
	// Cluster is the tree's resources.
	Cluster Cluster
	// Tree is the tree's configuration.
	Tree TreeConfig
	// Pools are the tree's pools, in any order; sibling order (burst priority
	// and report order) is the order in this slice.
	Pools []PoolConfig
	// Operations are the running operations (pending ones take no share).
	Operations []Operation
}

// PoolState is what the engine carries from one update to the next for one
// pool.
type PoolState struct {
	// AccumulatedVolume is the integral pool's volume, resource*seconds.
	AccumulatedVolume Resources
	// LastIntegralShareRatio is the integral share granted at the previous
	// update; the volume is consumed by it.
	LastIntegralShareRatio float64
	// BelowFairShareSince is when the pool went below its fair share; zero
	// when it is not.
	BelowFairShareSince time.Time
}

// OperationState is what the engine carries from one update to the next for
// one operation.
type OperationState struct {
	// ID is the operation's id.
	ID OperationID
	// BelowFairShareSince is when the operation went below its fair share;
	// zero when it is not.
	BelowFairShareSince time.Time
}

// State is the engine's memory between updates. The zero value is the state
// before the first update.
type State struct {
	// LastUpdate is the time of the previous update; zero before the first.
	// Volumes refill only when it is set.
	LastUpdate time.Time
	// Pools holds per-pool state by pool name.
	Pools map[PoolID]PoolState
	// Operations holds per-operation state, at most one entry per id.
	// The engine lists the operations below their fair share, in the
	// result's element order; an operation not listed (or listed with a
	// zero time) is not below its fair share, and entries of operations
	// that are gone are ignored. A list rather than a map: an update reads
	// it once and writes it once, and a busy cluster has tens of thousands
	// of such operations (see docs/BENCHMARKS.md).
	Operations []OperationState
}

// Operation returns the state of operation id (a linear search: for tests
// and inspection, not for a loop over the operations).
func (s *State) Operation(id OperationID) (OperationState, bool) {
	for _, o := range s.Operations {
		if o.ID == id {
			return o, true
		}
	}
	return OperationState{}, false
}
