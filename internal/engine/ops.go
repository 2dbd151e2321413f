package engine

// The kernel's operations: what the sandbox asks of the kernel's host
// function, its first argument, declared once in C
// (internal/qjs/shim/kernel.h) and mirrored here; TestKernelOps reads the
// header and checks that they agree. VM.dispatch answers them.
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
