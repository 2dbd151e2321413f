// Package early prepares the process of `airlock run` for its start, before
// most packages initialise: it depends on os, runtime and syscall alone, so
// Go initialises it among the first of the command's packages.
//
// A hello run's start allocates ~7 MiB of Go heap (the libraries'
// initialisation, the engine's module decoded, esbuild's first transform)
// and touched each fresh page of it with a page fault of its own. On the
// virtual machines sandboxes are often deployed on, a fault costs
// 15-45 µs, where populating pages in one call costs ~1 µs each
// (RATIONALE.md and BENCHMARKS.md, "The command's start: fewer first
// touches of memory"); so the heap is grown and
// populated here in one call, and the allocations that follow land on
// pages that are already there.
package early

import (
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
)

// runGCPercent is the garbage collector's target for `airlock run`: the
// heap may grow to five times what is live, not twice. A hello run's start
// then collects no garbage; at 100 it collected twice, ~5-15 ms of the run
// (BENCHMARKS.md). A one-program command's live Go heap is small: on Linux
// the program's memory is the sandbox's mapping, not Go's heap. GOGC, when
// set, wins.
const runGCPercent = 400

// heapPrefault is how much heap is populated ahead of a run's start: a
// little more than a hello run's heap.
const heapPrefault = 8 << 20

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14): fault the pages
// of a range in, writable, in one call. Older kernels refuse it (EINVAL),
// and the heap then faults page by page as before.
const madvPopulateWrite = 23

func init() {
	if len(os.Args) < 2 || os.Args[1] != "run" {
		return
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(runGCPercent)
	}
	populateHeap()
}

// populateHeap grows the heap by heapPrefault bytes with their pages
// populated, and frees them: one collection now, while the heap is a few
// hundred KiB, returns the pages to the heap's free pages, where the next
// allocations take them. At 400 percent the heap's goal is above what they
// add, so the scavenger leaves them.
func populateHeap() {
	b := make([]byte, heapPrefault)
	if syscall.Madvise(b, madvPopulateWrite) != nil {
		return
	}
	b = nil
	runtime.GC()
}
