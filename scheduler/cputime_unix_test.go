//go:build unix

package scheduler

import "syscall"

// processCPU is the CPU time the process has used (user plus system), in
// nanoseconds, or 0 where it cannot be read. Benchmarks report it next to
// the wall time: on a machine shared with other work it is the steadier
// figure (time the process waited for a core is not in it).
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
