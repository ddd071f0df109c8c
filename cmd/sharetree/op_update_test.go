package main

import (
	"strings"
	"testing"
)

func TestOpUpdateBadFlagsExitTwo(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"op", "update", "op-1-1"}, "nothing to change"},
		{[]string{"op", "update", "op-1-1", "--weight", "0"}, "--weight"},
		{[]string{"op", "update", "op-1-1", "--weight", "NaN"}, "--weight"},
		{[]string{"op", "update", "op-1-1", "--pool", "a.b"}, "--pool"},
		{[]string{"op", "update", "op-1-1", "--resource-limits", "cpu=-1"}, "--resource-limits"},
		{[]string{"op", "update", "op-1-1", "--resource-limits", "cpu=1", "--clear-resource-limits"}, "exclude each other"},
		{[]string{"op", "update", "op-1-1", "--clear-resource-limits", "--tree", "a"}, "--clear-resource-limits"},
		{[]string{"op", "update", "op.1", "--weight", "2"}, "operation id"},
	}
	for _, tc := range tests {
		code, out, errOut := runCLI(t, tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2, nothing, a message naming %q", tc.args, code, out, errOut, tc.want)
		}
	}
}
