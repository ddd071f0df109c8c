//go:build unix

package failpoint

import (
	"os"
	"syscall"
)

// Kill is the default action: it sends the process SIGKILL, so that no
// deferred function, flush or shutdown runs, as in a crash.
func Kill(string) {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}
