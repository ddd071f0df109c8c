// Package failpoint lets crash tests stop the scheduler process at named
// points of its work (the failpoints of reliability test 2: after a
// decision and before it is sent, after it is sent, before and after a
// write), the way gofail and YTsaurus's testing delays do.
//
// Points are off unless armed with Enable, which the `sharetree server`
// command does from the SHARETREE_FAILPOINTS environment variable (a
// comma-separated list of "point" or "point@N": fire at the Nth hit,
// default the first; either may end in "=panic"). An unarmed point costs
// one atomic load. A point that fires runs its caller's last step (a
// flush, so that what was "sent" is sent) and then the action, by default
// a SIGKILL of the process: nothing runs after it, as in a crash. A point
// armed "=panic" panics in its caller instead (in an actor: the panic its
// supervision makes fatal).
package failpoint
