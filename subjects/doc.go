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
//	sharetree.v1.tree.<tree>.…           admin → scheduler, request/reply
//	sharetree.v1.orchid.<tree>.…         anyone → scheduler, request/reply
//	sharetree.v1.events.<tree>.<kind>    scheduler → consumers, kept in a stream
package subjects
