package airlock

import "time"

// RunConcurrency is what Run does while another step runs.
type RunConcurrency string

const (
	RunReject RunConcurrency = "reject" // fail with ERR_INVALID_STATE (the default)
	RunQueue  RunConcurrency = "queue"  // wait in a FIFO queue of MaxQueuedRuns places
)

const (
	defaultMaxOperations = 50000
	defaultStepTimeout   = 10 * time.Second
	defaultMaxLogBytes   = 256 << 10
)

// ExecutorOptions configure an [Executor]. The zero value of each field is
// its default.
type ExecutorOptions struct {
	// MaxOperations is the budget of operations of one step, counted by the
	// engine: every entry into a loop body and every entry into a function
	// the steps defined, in functions of earlier steps too: a call, direct
	// or by the engine (array callbacks, sort comparators, promise
	// reactions, queueMicrotask, getters), a constructor, and the start and
	// every resumption of an async function (after an await) or a
	// generator (at next()). A step that spends MaxOperations passes; one
	// more fails with ERR_MAX_OPS_EXCEEDED, wherever it is spent. Default
	// 50000: a loop of 10,000 iterations that calls a function spends
	// 20,000.
	MaxOperations int
	// Timeout bounds the wall time of one step. Default 10s, at least 1ms.
	Timeout time.Duration
	// RunConcurrency is RunReject (default) or RunQueue.
	RunConcurrency RunConcurrency
	// MaxQueuedRuns is the number of steps that may wait with RunQueue.
	MaxQueuedRuns int
	// AuthorizedImports are the modules a step may import with a dynamic
	// import("name"). Static imports are always refused.
	AuthorizedImports []string
	// Modules are what authorized imports resolve to: bridged Go values and
	// functions, as [Options].Imports. An authorized name without a module
	// fails when imported.
	Modules map[string]Module
	// SourceModules are authorized imports that resolve to ES modules of
	// JavaScript source, such as a library, by name. A name may not be in
	// both Modules and SourceModules.
	SourceModules map[string]string
	// MaxLogBytes bounds the logs of one step; what is over is cut and
	// "...[TRUNCATED]" appended. Default 256 KiB, at least 1024.
	MaxLogBytes int
	// CollectConsoleLevels are the console methods whose output is kept:
	// LevelLog, LevelInfo, LevelWarn, LevelError (all four by default).
	// console.debug counts as log.
	CollectConsoleLevels []LogLevel
	// Log, when set, is given each console call a step keeps, as the step
	// makes it, so that a step's output can be shown while it runs (the
	// REPL does). The calls come one at a time, in the order of the step's
	// LogEntries, which still hold them all; Log must not block for long,
	// as the step waits for it.
	Log func(LogEntry)
	// MemoryLimitBytes bounds the sandbox's heap for its whole life, the
	// state steps keep included, and its whole memory at that plus about
	// 8 MiB (as Options.MemoryLimitBytes). Default 256 MiB.
	MemoryLimitBytes int64
	// Sloppy runs steps as sloppy global code, as Node's REPL does:
	// `x = 5; x` makes a global x and gives 5. Steps are strict by
	// default, as seed 001's. The agent's sandboxes set it.
	Sloppy bool

	noGuards bool // steps compiled without the operation budget: for measuring its cost only
}
