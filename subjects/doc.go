// Package subjects will be the only place that builds and validates NATS
// subject, stream and bucket names (all under "sharetree.v1."). Nothing is
// implemented here yet.
package subjects
