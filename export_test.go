package airlock

import (
	"context"
	"time"

	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/internal/fetch"
	"github.com/airlockrun/airlock/internal/session"
)

// WithoutLoopGuards returns opts with steps compiled without the operation
// budget, for the benchmark that measures what it costs.
func WithoutLoopGuards(opts ExecutorOptions) ExecutorOptions {
	opts.noGuards = true
	return opts
}

// NewInstances is how many sandboxes the engine made as new instances
// rather than from its pool of rewound ones.
func NewInstances() int64 { return engine.Instances() }

// Rehearsals is how many runs rt rehearsed to keep warm
// (RuntimeConfig.KeepWarm), and whether it keeps warm now.
func Rehearsals(rt *Runtime) (int64, bool) { return rt.rehearsals.Load(), rt.warming.Load() }

// SetIdleTrim sets how long an executor's session waits idle before it
// trims its VM, and returns a function that restores it.
func SetIdleTrim(d time.Duration) func() {
	return session.SetIdleTrim(d)
}

// WrittenPages is the number of its image's pages ex's VM has written.
func WrittenPages(ex *Executor) int {
	n := -1
	ex.sess.Do(context.Background(), func(vm *engine.VM) error {
		if w, ok := vm.WrittenPages(); ok { // without pagemap: -1, unknown
			n = w
		}
		return nil
	})
	return n
}

// TrimNow trims ex's VM at once, as an idle session does.
func TrimNow(ex *Executor) int {
	n := 0
	ex.sess.Do(context.Background(), func(vm *engine.VM) error {
		n = vm.Trim()
		return nil
	})
	return n
}

// EngineStarted reports whether the engine's start-up is done.
func EngineStarted() bool { return engine.Started() }

// SetFetchNetwork replaces how fetches dial and resolve (internal/fetch),
// for the tests, which send nothing beyond loopback.
var SetFetchNetwork = fetch.SetNetwork
