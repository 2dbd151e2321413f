package engine

import "github.com/airlockrun/airlock/internal/wasmvm"

// The kernel: the protocol of a job between the shim and this package,
// declared once in C (internal/qjs/shim/kernel.h) and mirrored here;
// TestKernelOps reads the header and checks that they agree. wasmvm
// carries it without reading it: the operations are the first argument of
// the shim's calls of its host function (wasmvm.Sandbox.SetHostFunc),
// which VM.dispatch answers; the entries are the shim's functions this
// package calls (wasmvm.Sandbox.Call).

// The operations.
const (
	opCall        = 0  // call host function id: id, then its arguments, primitives
	opCallEncoded = 1  // call host function id: id, then its argument list, encoded
	opDone        = 2  // the run's value: 0 and a primitive, or 1 and the value encoded
	opFailed      = 3  // the run failed: phase, name, message, stack, fileName, line, column, host function or -1
	opOutOfMemory = 5  // reporting a failure failed: the heap is exhausted
	opLog         = 6  // a console call: level, the arguments encoded
	opIntl        = 20 // Intl's host operations (intl.Call): its name, its texts, a number
)

// The phase of opFailed.
const (
	phaseLink   = 0 // before any module body ran: loading or linking failed
	phaseRun    = 1 // while running
	phaseExport = 2 // the selected export does not exist
)

// The entries.
const (
	entryInit           wasmvm.Entry = 32 // readies the kernel in the realm, before the image's capture
	entryRun            wasmvm.Entry = 33 // a run of a job: the run* slots below
	entrySettle         wasmvm.Entry = 34 // settles asynchronous call id: id, the value (or an Error)
	entryReset          wasmvm.Entry = 35 // forgets every pending asynchronous call
	entryStep           wasmvm.Entry = 36 // a step of a session: source, file name, flags (wasmvm.Step*)
	entryDefineTool     wasmvm.Entry = 37 // name, host function id, mode (fn*)[, glue]: the tool global name
	entryDefineValue    wasmvm.Entry = 38 // name, value: the global name
	entryInstallConsole wasmvm.Entry = 39 // the capturing console becomes the global console
)

// The slots of entryRun, in order; the globals follow, one slot each.
const (
	runEntry       = 0 // the entry module's name
	runFn          = 1 // the export to select
	runFlags       = 2 // runOptional, runWithGlobals
	runArgs        = 3 // the list of the export's arguments, or undefined for none
	runImports     = 4 // the list of the bridged modules' objects, or undefined for none
	runConsole     = 5 // the index among the globals of the capturing console, or -1
	runReport      = 6 // the index among the globals of the built-in report, or -1
	runGlobalsFrom = 7
)

// runFlags
const (
	runOptional    = 1 // a missing export gives undefined
	runWithGlobals = 2 // the program imports the globals module
)

// A host function's mode (shim.h's FN_*): how its arguments cross.
const (
	fnPlain = 0 // primitives as they are, other values encoded
	fnJSON  = 1 // the JSON text of the list; the answer is JSON text
	fnShown = 2 // report, final_answer: arguments cross as fnPlain's; the host keeps the value as decoded
)
