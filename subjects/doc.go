// Package subjects builds and parses every NATS subject, JetStream stream and
// key-value bucket name sharetree uses. It is the only place that formats a
// subject: everything else calls these constructors, which validate each
// token (no dots, wildcards, whitespace or empty tokens) and return an error
// wrapping ErrInvalidToken that names the bad token.
//
// The subject space (all under the versioned prefix "sharetree.v1"):
//
//	sharetree.v1.node.<node>.heartbeat   agent → scheduler, request/reply
//	sharetree.v1.node.<node>.signal      scheduler → agent, publish
//	sharetree.v1.op.submit               client → scheduler, request/reply
//	sharetree.v1.op.list                 client → scheduler, request/reply
//	sharetree.v1.op.<id>.get|abort|update client → scheduler, request/reply
//	sharetree.v1.config.<verb>           admin → scheduler: trees, apply, get, set (cluster)
//	sharetree.v1.tree.<tree>.<verb>      admin → scheduler: create, get, set, remove, pools
//	sharetree.v1.tree.<tree>.pool.<pool>.<verb> admin → scheduler: create, get, set, remove
//	sharetree.v1.orchid.trees            anyone → scheduler: the live trees
//	sharetree.v1.orchid.<tree>.…         anyone → scheduler: tree, root, pool <pool>, operation <id> (see orchid.go)
//	sharetree.v1.events.<tree>.<kind>    scheduler → consumers, kept in a stream
//
// The configuration subjects put names at fixed token positions and give
// each kind of request its own token count, so a tree or pool named like a
// verb can never be mistaken for one (see config.go). Keys of ConfigBucket
// are built by ConfigTreeKey and ConfigPoolKey and parsed by ParseConfigKey.
package subjects
