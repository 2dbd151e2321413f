package airlock

// Prepared reports how many sandboxes rt holds ready, for benchmarks that
// measure a warm Runtime.
func Prepared(rt *Runtime) int { return len(rt.ready) }
