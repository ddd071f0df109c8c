// Package treeconf is sharetree's live pool-tree configuration (the Cypress
// of the seeds): trees and pools kept in a JetStream key-value bucket,
// changed while the scheduler runs, validated at write time, and watched by
// the scheduler.
//
// # Model
//
// A [Tree] is a name plus the engine's scheduler.TreeConfig and the options
// only the scheduler process reads (node_tag_filter, a [tagfilter] boolean
// expression over node tags; max_ephemeral_pool_per_user;
// forbid_immediate_operations_in_root; pool_config_presets). A [Pool] is the
// engine's scheduler.PoolConfig plus forbid_immediate_operations,
// create_ephemeral_subpools, ephemeral_subpool_config, offloading_settings,
// config_presets and enable_lightweight_operations. Both are written with
// the keys of a trees file (package scenario decodes them, with errors that
// name the key and line) and record which keys were given; their canonical
// document is the JSON object of those keys only ([Tree.JSON],
// [Pool.JSON]). The cluster attributes ([Cluster]) hold default_tree.
//
// # Storage
//
// Bucket subjects.ConfigBucket: key "cluster", one key "tree.<tree>" per
// tree and one key "pool.<tree>.<pool>" per pool ('$' of ephemeral pool
// names is written '='), each holding the canonical document. [Store] reads
// and writes them with compare-and-set on the key's revision
// ([ConflictError] names the key and both revisions). [Store.Load] returns
// a consistent [Snapshot] of everything (trees by name, pools parents
// first, effective pool configurations with presets applied, revisions);
// [Store.Watch] emits one after every burst of changes. [Store.Seed] fills
// an empty bucket from the server's trees file on first start.
//
// # Writes
//
// [Admin] is the write path. Every write applies the change to the
// configuration it read, validates the trees it touches as a whole — every
// [Rule]: children's strong guarantees within their parent's,
// max_running_operation_count within max_operation_count (pool, ephemeral
// sub-pools and tree, with the tree's defaults), guarantees naming the
// main_resource, no burst settings on relaxed pools, positive finite
// weights, known keys, existing parents and no cycles, unique names,
// aggressive_preemption_satisfaction_threshold within
// preemption_satisfaction_threshold, known presets, a node_tag_filter that
// parses, offloading targets and default_parent_pool that exist, and
// everything the engine refuses when it builds the tree — and writes with
// compare-and-set. Removing a pool with children or operations, or a tree
// with pools or operations, is refused; operations are counted through the
// [OperationCounter] the scheduler supplies. A refused write is a
// [*RuleError] naming the rule, the tree, pool and key, and the values.
// Patches (set KEY VALUE) are retried on a lost compare-and-set, so
// concurrent writers never lose an update; writes that carry an expected
// revision fail instead. [Admin.Apply] makes the configuration match a
// trees document (create, update and, with prune, remove; a dry run returns
// the diff).
//
// # Service
//
// [NewService] serves the API over NATS (micro service
// subjects.ConfigService) with protobuf payloads (messages config.proto)
// and typed errors ([ErrorProto]); [Client] calls it. The server wires it
// up roughly like this:
//
//	store, err := treeconf.OpenStore(ctx, js, replicas, logger)
//	seeded, err := store.Seed(ctx, trees)       // first start: from --pools
//	snaps, err := store.Watch(ctx)              // first value: the current configuration
//	svc, err := treeconf.NewService(nc, store, counter, logger)
//	for snap := range snaps { /* apply each TreeSnapshot without Err to its tree actor */ }
package treeconf
