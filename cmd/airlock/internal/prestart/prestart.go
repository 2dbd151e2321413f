// Package prestart begins the engine's start-up while the rest of the
// command initialises, for the commands that run a program at once.
//
// Go initialises packages in import-path order as soon as their
// dependencies are initialised, so this package's init runs right after the
// engine's own dependencies, before the agent, service, schema and model
// libraries, whose initialisation takes tens of milliseconds that the
// engine's compilation-cache load now overlaps (BENCHMARKS.md, "The
// command's start").
package prestart

import (
	"os"
	"runtime/debug"

	"github.com/airlockrun/airlock/internal/engine"
)

// runGCPercent is the garbage collector's target for `airlock run`: the
// heap may grow to five times what is live, not twice. A hello run's start
// (the engine's load, the snapshot, esbuild) then collects no garbage; at
// 100 it collected twice, ~5-15 ms of the run (BENCHMARKS.md). A
// one-program command's live Go heap is small: on Linux the program's
// memory is the sandbox's mapping, not Go's heap. GOGC, when set, wins.
const runGCPercent = 400

func init() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case "run":
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(runGCPercent)
		}
		engine.Prestart()
	case "repl":
		engine.Prestart()
	}
}
