package scenario

import (
	"github.com/sharetree/sharetree/scheduler"
)

// TreeDoc is a pool tree's configuration as written: the keys of a trees
// file's `config` mapping (and of a tree in the live configuration). Config
// holds the engine's keys on top of the defaults, Options the keys only the
// scheduler process reads, and Keys which keys were given.
type TreeDoc struct {
	// Config is scheduler.DefaultTreeConfig with the given keys applied.
	Config scheduler.TreeConfig
	// Options are DefaultTreeOptions with the given keys applied.
	Options TreeOptions
	// Keys are the canonical names of the keys given, sorted. A key of the
	// tree's integral_guarantees sub-mapping is listed as
	// "integral_guarantees.<key>", since that mapping sets only the keys it
	// names.
	Keys []string
}

// TreeOptions are the tree keys the engine does not read; the scheduler
// process uses them. Only trees files and the live configuration accept
// them (scenario files do not).
type TreeOptions struct {
	// NodeTagFilter (key node_tag_filter, old name nodes_filter) selects the
	// exec nodes of the tree; canonical text of a tagfilter.Filter, "" for
	// every node.
	NodeTagFilter string
	// MaxEphemeralPoolsPerUser (key max_ephemeral_pool_per_user): how many
	// ephemeral pools one user may have in the tree. Default 1.
	MaxEphemeralPoolsPerUser int
	// ForbidImmediateOperationsInRoot: operations may not be submitted into
	// the root pool itself. Default true, as in YTsaurus.
	ForbidImmediateOperationsInRoot bool
	// PoolConfigPresets are named pool fragments a pool applies with
	// config_presets. Fragments never set parent or config_presets.
	PoolConfigPresets map[string]PoolDoc
}

// DefaultTreeOptions returns the options' defaults.
func DefaultTreeOptions() TreeOptions {
	return TreeOptions{MaxEphemeralPoolsPerUser: 1, ForbidImmediateOperationsInRoot: true}
}

// DefaultTreeDoc is the configuration of a tree that gives no keys.
func DefaultTreeDoc() TreeDoc {
	return TreeDoc{Config: scheduler.DefaultTreeConfig(), Options: DefaultTreeOptions()}
}

// PoolDoc is a pool's own configuration as written: the keys of a pool in a
// trees file (and of a pool in the live configuration), before the tree's
// presets are applied (see ResolvePool).
type PoolDoc struct {
	// Config holds name, parent and the engine's keys.
	Config scheduler.PoolConfig
	// Options are the keys only the scheduler process reads.
	Options PoolOptions
	// Keys are the canonical names of the keys given other than name and
	// parent, sorted.
	Keys []string
}

// PoolOptions are the pool keys the engine does not read. Only trees files
// and the live configuration accept them.
type PoolOptions struct {
	// ForbidImmediateOperations: operations may be submitted only into the
	// pool's descendants, not into the pool itself.
	ForbidImmediateOperations bool
	// CreateEphemeralSubpools: an operation submitted into the pool runs in
	// the ephemeral sub-pool "<pool>$<user>".
	CreateEphemeralSubpools bool
	// EphemeralSubpoolConfig configures those sub-pools: mode,
	// max_running_operation_count, max_operation_count and resource_limits.
	// Nil when not given.
	EphemeralSubpoolConfig *PoolDoc
	// OffloadingSettings place a share of the pool's jobs in other trees,
	// sorted by tree.
	OffloadingSettings []Offloading
	// ConfigPresets name presets of the tree's pool_config_presets, applied
	// in order under the pool's own keys (a later preset overrides an
	// earlier one; the pool's own keys override both).
	ConfigPresets []string
	// SubmitACL (submit_acl) lists the users who may submit operations
	// into the pool and its subtree ("*": anyone); nil is no list of its
	// own (the nearest ancestor's decides; none anywhere: anyone), and an
	// empty list admits nobody.
	SubmitACL []string
	// enable_lightweight_operations is accepted with these keys (only in
	// trees files and the live configuration) but lands in
	// Config.EnableLightweightOperations: operation admission reads it.
}

// Offloading is one entry of offloading_settings: `{<tree>: {pool: P,
// share: S}}`.
type Offloading struct {
	// Tree receives the offloaded jobs; not the pool's own tree.
	Tree string
	// Pool is the pool in Tree that runs them; "" means a pool of the same
	// name.
	Pool string
	// Share is the fraction of the pool's jobs that may be placed in Tree,
	// in (0, 1]. Default 1.
	Share float64
}

// Key names of the options, shared by the decoder and the encoder.
const (
	keyNodeTagFilter                   = "node_tag_filter"
	keyMaxEphemeralPoolsPerUser        = "max_ephemeral_pool_per_user"
	keyForbidImmediateOperationsInRoot = "forbid_immediate_operations_in_root"
	keyPoolConfigPresets               = "pool_config_presets"
	keyForbidImmediateOperations       = "forbid_immediate_operations"
	keyCreateEphemeralSubpools         = "create_ephemeral_subpools"
	keyEphemeralSubpoolConfig          = "ephemeral_subpool_config"
	keyOffloadingSettings              = "offloading_settings"
	keyConfigPresets                   = "config_presets"
	keySubmitACL                       = "submit_acl"
	keyEnableLightweightOperations     = "enable_lightweight_operations"
)
