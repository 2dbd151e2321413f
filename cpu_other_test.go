//go:build !unix

package airlock_test

// cpuNanos is 0 where the process's CPU time is not read: the benchmarks
// that use it then report wall time only.
func cpuNanos() int64 { return 0 }
