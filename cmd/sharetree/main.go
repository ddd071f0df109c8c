// Command sharetree is the sharetree binary: the what-if fair-share
// calculator today; the scheduler server, the node agent and the client
// commands join it as they are built.
package main

import (
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the process exit status: 0 on
// success, 2 for bad input (flags, files), 1 for other failures.
func run(args []string, stdout, stderr io.Writer) int {
	cmd := newRootCmd(stdout, stderr)
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		writeError(stderr, err)
		return exitCode(err)
	}
	return 0
}
