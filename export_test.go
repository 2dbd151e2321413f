package airlock

// WithoutLoopGuards returns opts with steps compiled without the operation
// budget, for the benchmark that measures what it costs.
func WithoutLoopGuards(opts ExecutorOptions) ExecutorOptions {
	opts.noGuards = true
	return opts
}

// SharedMemoryCalls is how many host calls rt's workers made through
// shared memory.
func SharedMemoryCalls(rt *Runtime) int64 {
	var n int64
	rt.workers.mu.Lock()
	defer rt.workers.mu.Unlock()
	for _, w := range rt.workers.procs {
		if w.calls != nil {
			n += w.calls.served.Load()
		}
	}
	return n
}
