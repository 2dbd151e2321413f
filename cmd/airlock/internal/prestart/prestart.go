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

	"github.com/airlockrun/airlock/internal/engine"
)

func init() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case "run", "repl":
		engine.Prestart()
	}
}
