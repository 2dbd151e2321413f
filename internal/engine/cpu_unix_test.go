//go:build unix

package engine

import "syscall"

// cpuNanos is the CPU time the process has used, user and system, in
// nanoseconds: on a machine shared with other work, a steadier measure of
// a benchmark's own cost than the time on the wall.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
