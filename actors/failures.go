package actors

import "slices"

// An operation counts each failed job once towards its
// max_failed_job_count, also across restarts: it keeps the ids of the
// failures it counted, stored with its status (failed_job_ids), and a
// failure it finds in the completions journal at start, or that a node
// reports again, counts only when its id is not among them.

// maxFailedIDs bounds the failed jobs' ids an operation keeps: the most
// recent ones. Only a failure stored in the journal but not yet in a
// status, or reported and not yet acknowledged, is ever looked up, and
// those are recent.
const maxFailedIDs = 1024

// countFailure adds failed job id to ids, the counted failures, unless it
// is among them already, and reports whether it added it.
func countFailure(ids []string, id string) ([]string, bool) {
	if slices.Contains(ids, id) {
		return ids, false
	}
	return appendBounded(ids, id, maxFailedIDs), true
}

// appendBounded appends id to ids, dropping the oldest beyond n.
func appendBounded(ids []string, id string, n int) []string {
	if len(ids) >= n {
		ids = slices.Delete(ids, 0, len(ids)-n+1)
	}
	return append(ids, id)
}
