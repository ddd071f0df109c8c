// Package client load-balances HTTP GET requests across the instances of
// the graceful-service example listed in a registry directory (see package
// registry).
//
// Every attempt re-reads the registry and picks the next instance round
// robin (instances sorted by id). A request is retried on another instance
// only when the chosen instance never accepted it:
//
//   - the connection could not be established (connection refused: the
//     instance stopped listening), or
//   - the request failed before any response and the instance's registry
//     entry is gone or changed: an instance unregisters before it stops
//     accepting and finishes every request it accepted, so a request that
//     a draining instance dropped was never accepted.
//
// Any other failure (a reset from an instance still registered, a status
// other than 200, a truncated body) counts as failed and is not retried,
// since the work may have been done. Attempts are bounded
// (Options.MaxAttempts); an empty registry is polled until
// Options.NoInstanceWait runs out. Stats counts completed, failed, retried
// and canceled requests and the completions per instance.
package client
