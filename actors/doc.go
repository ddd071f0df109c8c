// Package actors is the live scheduler: protoactor actors that own the
// cluster's state and apply the engine's decisions.
//
//   - the scheduler root (root.go) owns the trees and the operation
//     registry, validates and routes submissions, and revives nothing by
//     itself: persistence goes through an injected OperationStore;
//   - a tree actor per pool tree (tree.go) owns the tree's configuration and
//     admission (operation-count limits along the ancestor chain), runs the
//     fair-share engine every fair_share_update_period on an immutable
//     snapshot, off its own mailbox, and publishes the result;
//   - a pool actor per pool (pool.go) keeps the pool's live attributes and
//     reports its starvation changes;
//   - an operation actor per operation (operation.go) runs the operation's
//     state machine, counts its jobs, retries failed ones up to
//     max_failed_job_count and persists its status;
//   - a node actor per exec node (node.go) reconciles each heartbeat with the
//     jobs the scheduler believes are on the node and runs the node's
//     scheduling pass.
//
// The one structure shared across actors is each tree's Ledger: the
// placement state (scheduler/placement) behind a mutex, read and written by
// node actors during their scheduling passes and by the tree actor when fair
// shares change. Its critical sections are microseconds; everything else —
// reconciliation, encoding, publishing — runs in parallel in the node actors.
//
// Nothing here talks to NATS directly: the NATS boundary (internal/server)
// decodes and validates, then sends messages carrying a reply function;
// events, job signals and persistence go through the interfaces in deps.go.
// No actor blocks in Receive; slow work (the engine, the store) runs in a
// goroutine that sends its result back as a message.
package actors
