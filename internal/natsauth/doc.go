// Package natsauth secures an embedded NATS server for sharetree: the
// users of an auth file, each an nkey (Ed25519: the server never sees a
// seed), with the permissions of their role, and the connection options
// that present such a user.
//
// Roles:
//   - admins may use every subject (the configuration's writes among them);
//   - clients may send the operation API's requests, read the orchid, the
//     configuration and the events stream, and receive on their own inbox
//     only (subjects.ClientInbox of their key);
//   - agents may send their own node's heartbeats and receive their own
//     node's signals and replies (subjects.AgentInbox of their node) only:
//     an agent cannot speak for another node, read its commands, or submit
//     operations.
//
// The scheduler connects with a key of its own that may use every subject
// (Start generates one for each process).
package natsauth
