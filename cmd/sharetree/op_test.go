package main

import (
	"strings"
	"testing"
)

// A wrong number of arguments to an op command is bad command-line input:
// exit status 2, nothing on stdout, a message saying what was expected.
func TestOpBadArgsExitTwo(t *testing.T) {
	const noServer = "nats://127.0.0.1:1" // nothing is sent on bad input
	tests := [][]string{
		{"op", "get"},
		{"op", "get", "a", "b"},
		{"op", "abort"},
		{"op", "abort", "a", "b"},
		{"op", "wait"},
		{"op", "wait", "a", "b"},
		{"op", "update", "--weight", "2"},
		{"op", "update", "a", "b", "--weight", "2"},
	}
	for _, args := range tests {
		code, out, errOut := runCLI(t, append(args, "--nats-url", noServer)...)
		if code != 2 || out != "" || !strings.Contains(errOut, "want ID") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2, nothing, a message naming ID", args, code, out, errOut)
		}
	}
}

// An operation id that cannot be one (not a subject token) is refused
// before anything is sent, as `get op ID` and `op update ID` refuse it.
func TestOpBadIDExitsTwo(t *testing.T) {
	const noServer = "nats://127.0.0.1:1"
	for _, cmd := range []string{"get", "abort", "wait"} {
		for _, id := range []string{"a.b", "a*", ">", ""} {
			code, out, errOut := runCLI(t, "op", cmd, id, "--nats-url", noServer)
			if code != 2 || out != "" || !strings.Contains(errOut, "operation id") {
				t.Errorf("op %s %q: exit %d, stdout %q, stderr %q; want 2, nothing, a message naming the operation id", cmd, id, code, out, errOut)
			}
		}
	}
}
