package nodeagent

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// errUnknownSignal is wrapped by parseSignal's errors.
var errUnknownSignal = errors.New("unknown signal")

// signalNames are the signals a job may ask for, without the SIG prefix.
var signalNames = map[string]syscall.Signal{
	"HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT,
	"KILL": syscall.SIGKILL, "USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2,
	"ALRM": syscall.SIGALRM, "TERM": syscall.SIGTERM,
}

// signalName is s's name ("SIGTERM"), or its number for a signal not in
// signalNames.
func signalName(s syscall.Signal) string {
	for n, v := range signalNames {
		if v == s {
			return "SIG" + n
		}
	}
	return fmt.Sprintf("signal %d", int(s))
}

// parseSignal maps "SIGTERM", "TERM" or "sigterm" to its signal.
func parseSignal(name string) (syscall.Signal, error) {
	n := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(name)), "SIG")
	if s, ok := signalNames[n]; ok {
		return s, nil
	}
	return 0, fmt.Errorf("%w %q (want one of SIGHUP, SIGINT, SIGQUIT, SIGKILL, SIGUSR1, SIGUSR2, SIGALRM, SIGTERM)", errUnknownSignal, name)
}
