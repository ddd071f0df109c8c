// Package scenario parses sharetree's what-if scenario files (format version
// 1): a cluster, one pool tree, operations, the fair-share updates to run and,
// optionally, steps that change the tree, pools and operations between
// updates, plus the expectations acceptance tests check.
//
// A scenario is YAML (JSON is YAML). The format and the meaning of every key
// are specified in shared/scenarios/FORMAT.md; the files under
// shared/scenarios/public are examples. [Parse] and [ParseFile] decode a file
// into a [File] whose [Step]s are fully resolved: each carries the complete
// tree configuration, pools and operations in force at that step, in the
// engine's own types (package scheduler), so a runner needs no further
// resolution.
//
// Decoding is strict: unknown keys, duplicate keys, values of the wrong type,
// a version other than 1 and every rule the engine's Validate methods check
// are errors. Every such error is an [*Error] naming the file, the path to
// the key (e.g. "operations[0].jobs[1].resources.cpu") and the reason with
// its YAML line, and wraps [ErrInvalidScenario] (and [ErrUnknownKey] for a
// key the format does not define there).
//
// The same decoder reads the pool-tree configuration: trees files
// ([ParseTrees], the server's --pools) and single tree and pool documents of
// the live configuration ([ParseTreeDoc], [ParsePoolDoc]). Those accept, on
// top of the scenario keys, the options only the scheduler process reads
// ([TreeOptions], [PoolOptions]: node_tag_filter, pool_config_presets,
// config_presets, ephemeral sub-pools, offloading, ...); scenario files keep
// rejecting them. [TreeDoc] and [PoolDoc] record which keys were given, and
// [EncodeTreeDoc] and [EncodePoolDoc] turn them back into their canonical
// key maps. [ResolvePool] applies a tree's presets to a pool.
package scenario
