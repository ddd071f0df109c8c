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

// A request timeout that is not positive would end every request before it
// is sent: the client commands refuse it as bad input, as the configuration
// commands do.
func TestClientTimeoutMustBePositive(t *testing.T) {
	const noServer = "nats://127.0.0.1:1"
	tests := []struct {
		args []string
		flag string
	}{
		{[]string{"op", "get", "x", "--timeout", "0s"}, "--timeout"},
		{[]string{"op", "list", "--timeout", "-1s"}, "--timeout"},
		{[]string{"op", "abort", "x", "--timeout", "-5s"}, "--timeout"},
		{[]string{"op", "update", "x", "--weight", "2", "--timeout", "0s"}, "--timeout"},
		{[]string{"op", "wait", "x", "--wait-timeout", "0s"}, "--wait-timeout"},
		{[]string{"op", "wait", "x", "--wait-timeout", "-1h"}, "--wait-timeout"},
		{[]string{"get", "physical", "--timeout", "-1s"}, "--timeout"},
		{[]string{"events", "--timeout", "0s"}, "--timeout"},
	}
	for _, tc := range tests {
		code, out, errOut := runCLI(t, append(tc.args, "--nats-url", noServer)...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.flag) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2, nothing, a message naming %s", tc.args, code, out, errOut, tc.flag)
		}
	}
}
