//go:build !unix

package engine

// cpuNanos is not measured here: the metric reads 0.
func cpuNanos() int64 { return 0 }
