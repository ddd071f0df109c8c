// Package leader elects one scheduler among several that share a NATS
// server, with a lease in a JetStream key-value bucket
// (subjects.LeaderBucket, key subjects.LeaseKey).
//
// A server takes the lease by creating the key with a per-key TTL
// (jetstream.KeyTTL) and renews it every RenewPeriod with a
// compare-and-set write that sets the TTL again. The lease is lost when a
// renewal finds that the key changed (another server took it after its TTL
// ran out) or when no renewal succeeded for RenewDeadline; a standby tries
// to take it every RetryPeriod, and at once when it sees it deleted.
//
// The NATS server expires the key on its wall clock; the servers measure
// on their monotonic clocks. A step of the NATS server's clock (NTP, an
// operator) can expire the key at once while its holder still leads. So a
// standby that finds the key gone waits until TTL has passed, on its own
// clock, since it last saw the key renewed (no wait after a release, a
// delete, or when it never saw a renewal), and a holder whose renewal
// finds the key gone while its lease is still valid writes it again. Two
// servers never both hold the lease then; the holder keeps it
// (TestALeaseExpiredEarlyStaysWithItsHolder).
//
// A lease alone does not fence: a leader paused past its TTL wakes up
// believing it still leads. Two things make that safe. Valid reports
// whether the last renewal sent is younger than RenewDeadline (measured on
// the monotonic clock, which runs on while a process is stopped), and the
// server answers nothing while it is not. And every write the leader makes
// is conditioned on a fence that its successor moves before it reads the
// state (see internal/server), so a late write fails instead of
// overwriting the successor's. Commands to agents carry the leader epoch,
// and agents ignore an epoch lower than the highest they have seen.
package leader
