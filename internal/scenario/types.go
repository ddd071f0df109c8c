package scenario

import (
	"time"

	"github.com/sharetree/sharetree/scheduler"
)

// File is a parsed and fully resolved what-if scenario (format version 1).
// Every step carries the complete tree, pools and operations in force at that
// step, so a runner needs no further resolution.
type File struct {
	// Path is the file name used in messages.
	Path string
	// Name is the scenario's optional description.
	Name string
	// Cluster is the cluster: either the given total, or the nodes (groups
	// expanded, ids "node-1", "node-2", ... in file order) and their sum.
	Cluster scheduler.Cluster
	// Steps has at least one step. A file without `steps` has exactly one,
	// built from the top-level keys.
	Steps []Step
	// Tolerance is the absolute tolerance for expectations (default 1e-6).
	Tolerance float64
}

// Pool is one pool of a step: its configuration, and the accumulated volume
// the scenario sets for it (nil: not set by this step).
type Pool struct {
	Config scheduler.PoolConfig
	// AccumulatedResourceVolume, when not nil, replaces the pool's volume
	// before the step's updates run (resource*seconds; absent resources 0).
	AccumulatedResourceVolume *scheduler.Resources
}

// Operation is one operation of a scenario.
type Operation struct {
	// Spec is the engine's view: id, pool, weight, start time (time zero plus
	// the offset), demand, usage, job resources, pending job count and the
	// running jobs in start order (one Job per running job, ids "<op>/<n>").
	Spec scheduler.Operation
	// StartOffset is start_time as written (offset from time zero).
	StartOffset time.Duration
}

// Update says how many fair-share updates a step runs and how far apart.
type Update struct {
	// Elapsed is the time since the previous update. When HasElapsed is false
	// the step's first update does not advance time (the very first update of
	// a scenario then refills nothing).
	Elapsed    time.Duration
	HasElapsed bool
	// Repeat is the number of updates, each Elapsed after the previous; >= 1.
	Repeat int
}

// Step is one step of a scenario, fully resolved.
type Step struct {
	// Tree is the tree configuration in force (defaults, the file's `tree`,
	// then every earlier and this step's `set.tree`).
	Tree scheduler.TreeConfig
	// Pools are the pools in file order with every `set.pools` applied.
	// AccumulatedResourceVolume is non-nil only on the step that sets it (the
	// first step carries the file's initial volumes).
	Pools []Pool
	// RemoveOperations are removed first, in order.
	RemoveOperations []scheduler.OperationID
	// AddOperations are registered next, in order (the first step adds every
	// top-level operation).
	AddOperations []Operation
	// Operations are all operations present after this step, in the order they
	// were added, with every `set.operations` applied.
	Operations []Operation
	// Update is the step's `update`, or the file's top-level `update`.
	Update Update
	// Expect are the expectations checked after this step (for a file without
	// steps: the top-level `expect`).
	Expect []Expectation
}

// Expectation is one `expect` entry: an attribute of an element and its
// expected value. Exactly one of Number, String and Share is set.
type Expectation struct {
	// Path locates the entry in the file, e.g. "steps[1].expect[3]".
	Path      string
	Element   string
	Attribute string
	Number    *float64
	String    *string
	// Share lists only the resources it checks.
	Share *scheduler.PartialResources
}
