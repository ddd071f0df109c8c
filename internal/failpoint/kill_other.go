//go:build !unix

package failpoint

import "os"

// Kill is the default action: the process exits at once with status 137
// (as killed), running no deferred function.
func Kill(string) { os.Exit(137) }
