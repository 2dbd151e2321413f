package airlock

// Prepared reports how many sandboxes rt holds ready, for benchmarks that
// measure a warm Runtime.
func Prepared(rt *Runtime) int { return len(rt.ready) }

// WithoutLoopGuards returns opts with the loop guards off, for the benchmark
// that measures what they cost.
func WithoutLoopGuards(opts ExecutorOptions) ExecutorOptions {
	opts.noGuards = true
	return opts
}
