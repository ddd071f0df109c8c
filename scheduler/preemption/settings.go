package preemption

import (
	"fmt"
	"slices"

	"github.com/sharetree/sharetree/scheduler"
)

// TreeSettings is what the adapter needs from a pool tree's configuration:
// the thresholds, the pool parents and each pool's
// non_preemptible_resource_usage_threshold setting. Build it once per
// configuration; it is immutable and safe to share.
type TreeSettings struct {
	thresholds Thresholds
	// treeThreshold is the tree's usage threshold as a vector.
	treeThreshold scheduler.Resources
	parent        map[scheduler.PoolID]scheduler.PoolID
	// poolThreshold is each pool's effective usage threshold (its own
	// setting, or the nearest ancestor's, or the tree's).
	poolThreshold map[scheduler.PoolID]scheduler.Resources
	// chains is each pool's chain (see chain).
	chains map[scheduler.PoolID][]scheduler.PoolID
}

// NewTreeSettings validates the tree configuration and indexes the pools.
// Errors wrap ErrInvalidSource (and scheduler.ErrInvalidConfig for a
// configuration that breaks the engine's rules).
func NewTreeSettings(tree scheduler.TreeConfig, pools []scheduler.PoolConfig) (*TreeSettings, error) {
	if err := tree.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSource, err)
	}
	ts := &TreeSettings{
		thresholds: Thresholds{
			Preemption:          tree.PreemptionSatisfactionThreshold,
			Aggressive:          tree.AggressivePreemptionSatisfactionThreshold,
			NonPreemptibleUsage: tree.NonPreemptibleResourceUsageThreshold,
		},
		treeThreshold: thresholdVector(tree.NonPreemptibleResourceUsageThreshold),
		parent:        make(map[scheduler.PoolID]scheduler.PoolID, len(pools)),
		poolThreshold: make(map[scheduler.PoolID]scheduler.Resources, len(pools)),
		chains:        make(map[scheduler.PoolID][]scheduler.PoolID, len(pools)),
	}
	own := make(map[scheduler.PoolID]*scheduler.PartialResources, len(pools))
	for i := range pools {
		p := &pools[i]
		if p.Name == "" || p.Name == scheduler.RootID {
			return nil, fmt.Errorf("%w: pool %d has the reserved name %q", ErrInvalidSource, i, p.Name)
		}
		if _, dup := ts.parent[p.Name]; dup {
			return nil, fmt.Errorf("%w: pool %q is defined twice", ErrInvalidSource, p.Name)
		}
		ts.parent[p.Name] = p.Parent
		own[p.Name] = p.NonPreemptibleResourceUsageThreshold
	}
	for i := range pools {
		name := pools[i].Name
		th, found := ts.treeThreshold, false
		var chain []scheduler.PoolID
		for cur := name; cur != ""; cur = ts.parent[cur] {
			if _, ok := ts.parent[cur]; !ok {
				if found {
					break // the chain ends at an unknown ancestor
				}
				return nil, fmt.Errorf("%w: pool %q has an unknown ancestor %q", ErrInvalidSource, name, cur)
			}
			if steps := len(chain) + 1; steps > len(pools) {
				return nil, fmt.Errorf("%w: pool %q is on a parent cycle", ErrInvalidSource, name)
			}
			chain = append(chain, cur)
			if s := own[cur]; s != nil && !found {
				th, found = thresholdVector(*s), true
			}
		}
		ts.poolThreshold[name] = th
		ts.chains[name] = slices.Clip(chain)
	}
	return ts, nil
}

// chain is a pool's chain, the pool first, up to the root (exclusive); nil
// for the root ("") and unknown pools. The slice is shared by every caller
// and must not be modified.
func (ts *TreeSettings) chain(pool scheduler.PoolID) []scheduler.PoolID {
	return ts.chains[pool]
}

// usageThreshold is an operation's effective non-preemptible usage
// threshold, as the engine computes it: the nearest pool's setting (or the
// tree's), lowered per resource by the operation's own.
func (ts *TreeSettings) usageThreshold(pool scheduler.PoolID, opSetting *scheduler.PartialResources) scheduler.Resources {
	th, ok := ts.poolThreshold[pool]
	if !ok {
		th = ts.treeThreshold
	}
	if opSetting != nil {
		th = th.Min(thresholdVector(*opSetting))
	}
	return th
}

// thresholdVector: an empty setting protects nothing (zero); once any
// resource is set, absent ones are unlimited.
func thresholdVector(p scheduler.PartialResources) scheduler.Resources {
	if p.IsEmpty() {
		return scheduler.Resources{}
	}
	return p.OrInfinite()
}
