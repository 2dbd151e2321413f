// Package early prepares the process of `airlock run` for its start, before
// most packages initialise: it depends on a few standard packages alone
// (os, runtime, runtime/debug, syscall, unsafe), so Go initialises it among
// the first of the command's packages.
//
// A hello run's start allocates ~7 MiB of Go heap (the libraries'
// initialisation, the engine's module decoded, esbuild's first transform)
// and touched each fresh page of it with a page fault of its own. On the
// virtual machines sandboxes are often deployed on, a fault costs
// 15-45 µs, where populating pages in one call costs ~1 µs each, and a
// first touch of a populated 4 KiB page still ~10 µs where a huge page
// costs that once for 2 MiB (RATIONALE.md and BENCHMARKS.md, "The
// command's start: fewer first touches of memory" and "The first touch of
// a page"); so on Linux the heap is grown and populated here in one call,
// in huge pages where the kernel gives them, and the allocations that
// follow land on pages that are already there.
package early

import (
	"os"
	"runtime/debug"
)

// runGCPercent is the garbage collector's target for `airlock run`: the
// heap may grow to five times what is live, not twice. A hello run's start
// then collects no garbage; at 100 it collected twice, ~5-15 ms of the run
// (BENCHMARKS.md). A one-program command's live Go heap is small: on Linux
// the program's memory is the sandbox's mapping, not Go's heap. GOGC, when
// set, wins.
const runGCPercent = 400

func init() {
	if len(os.Args) < 2 || os.Args[1] != "run" {
		return
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(runGCPercent)
	}
	populateHeap()
}
