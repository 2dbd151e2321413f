package worker

// SharedCalls is how many host calls of this process's workers went
// through shared memory.
func SharedCalls() int64 { return served.Load() }
