package engine

import (
	"context"
	"fmt"

	"github.com/airlockrun/airlock/internal/wasmvm"
)

// OutcomeKind classifies how a job ended, as the engine saw it. The caller
// decides the final status: a stop it asked for wins over anything the
// JavaScript did.
type OutcomeKind int

const (
	OK            OutcomeKind = iota // the selected export resolved; Value holds it
	Thrown                           // an uncaught throw or rejection while running
	LinkFailed                       // loading or linking the module graph failed
	ExportMissing                    // the selected export does not exist
	Stopped                          // the host stopped the job
	Deadlock                         // nothing left to run and nothing pending
	Crashed                          // the engine failed; the VM must be discarded
)

// The bounds on the texts of a failure the sandbox reports (the shim's
// failure.c, MAX_ERROR_TEXT and MAX_FRAME_TEXT in kernel.h, which
// TestKernelOps checks), in UTF-16 code units: each of an error's
// name, message, stack and file name, and a thrown value's text, at most
// MaxErrorText, a longer one cut around a marker before it crosses; each
// line of a stack at most MaxFrameText. Outcome's texts of a Thrown or
// LinkFailed outcome are no longer.
const (
	MaxErrorText = 20000
	MaxFrameText = 1000
)

// Outcome is how a job ended.
type Outcome struct {
	Kind OutcomeKind
	// Value is the result when it is a raw primitive (Encoded not set).
	Value any
	// Encoded is set when the result is Bytes: encoded, in the binary
	// format of the codec (internal/qjs/shim/codec.c), the host's to
	// keep, not to modify.
	Encoded bool
	Bytes   []byte
	// The thrown error, for Thrown and LinkFailed, as the engine reported it.
	Name, Message, Stack string
	FileName             string // set for syntax errors
	Line, Column         int    // set for syntax errors, 1-based
	// FromHost is set when the thrown value is what a call of host function
	// HostFunc threw or rejected with.
	FromHost bool
	HostFunc int
	// PeakHeap is the largest heap size during the job, in bytes.
	PeakHeap int64
	// LimitHit is set when the engine refused an allocation for the memory
	// limit at any time during the job.
	LimitHit bool
}

// ReplyKind says how a host call answered.
type ReplyKind int

const (
	ReplyRaw   ReplyKind = iota // Value is a primitive passed as is
	ReplyError                  // Value is an error message; the call throws an Error
	ReplyAsync                  // Value is the id of a pending asynchronous call
	ReplyJSON                   // Value is JSON text, the answer of a JSON host function
	ReplyArg                    // Arg is a primitive, typed: no Value is boxed for it
	ReplyBytes                  // Bytes is the answer encoded in the binary format
)

// Reply is the answer of a host call.
type Reply struct {
	Kind  ReplyKind
	Value any
	// Arg is the answer of Kind ReplyArg: undefined, null, a boolean, a
	// number or a string (UTF-8; other text crosses encoded).
	Arg Arg
	// Bytes is the answer of Kind ReplyBytes: a value in the codec's binary
	// format (internal/qjs/shim/codec.c), which the sandbox decodes, its
	// host functions (tag 21) made as the sandbox's. The engine reads it
	// while the call returns (or the call is settled) and keeps none of it.
	Bytes []byte
}

// Arg is a primitive argument or answer of a host call, typed as the
// sandbox gave it: its Kind is Undefined, Null, Bool, Number or String
// (text from JavaScript, a lone surrogate as WTF-8).
type Arg = wasmvm.Value

// Completion settles an asynchronous host call: Reply is raw, typed,
// bytes, JSON or an error.
type Completion struct {
	ID    int
	Reply Reply
}

// Input is what a run hands its program, in the binary transport: values
// in the codec's binary format (internal/qjs/shim/codec.c), which the
// shim decodes itself, before any of the program's code runs.
type Input struct {
	// Args is the encoded list of the selected export's arguments; nil:
	// none.
	Args []byte
	// Globals are the globals' values, one for each of Job.GlobalNames,
	// each encoded; the entries at Job.Console and Report are not read
	// (the shim puts its capturing console and the built-in report there).
	// nil when no module of the job imports the globals module (a bare
	// entry, source.Graph.Bare): nothing is decoded, and a failure after
	// the entry compiled is the program's, not a link error.
	Globals [][]byte
	// Report is the index among the globals of the built-in report (host
	// function 0, fnShown: its value kept as decoded), which the shim keeps
	// made in its image, or -1 for none.
	Report int
	// Imports is the encoded list of the bridged module objects (frozen in
	// the sandbox); nil: none.
	Imports []byte
}

// Job is one run of an entry module on a VM.
//
// Its host side speaks the binary transport: values cross as bytes of the
// codec's binary format both ways (Input, CallBytes, LogBytes,
// Outcome.Bytes, Reply.Bytes), and no text is made of a value on the way.
type Job struct {
	Entry      string // the entry module's resolved name
	Fn         string // the export to select
	FnOptional bool   // a missing Fn gives undefined instead of a link error
	// Input is the run's arguments, globals and bridged modules; nil: no
	// arguments, and no module of the job imports the globals module.
	Input       *Input
	MemoryLimit uintptr
	// GlobalNames are the globals' names, in the order of Input.Globals:
	// the exports of the globals module (see VM.GlobalsModule).
	GlobalNames []string
	// Sloppy makes a step (VM.Step) sloppy global code, as Node's REPL
	// runs it: an assignment to an undeclared name makes a global.
	// Steps are strict otherwise.
	Sloppy bool

	// Resolve maps an import specifier, seen in module base, to a module name.
	Resolve func(base, spec string) (string, error)
	// Load returns the source of a resolved module.
	Load func(name string) (string, error)
	// Fallback, if set, gives the source to compile instead when what Load
	// gave does not compile, or "" for none.
	Fallback func(name string) (string, error)
	// URL, if set, gives the import.meta.url of a loaded module, or "" for
	// none.
	URL func(name string) string
	// Console is the index among the globals where the shim puts its
	// capturing console, or -1 for none.
	Console int
	// LogBytes records a call of the capturing console: the index of the
	// method (log, info, warn, error, debug) and the arguments' list
	// encoded, a view of the sandbox's memory valid only during the call.
	LogBytes func(level int, encoded []byte)
	// CallBytes runs host function id with primitive args, or with
	// encoded, its argument list in the binary format (a view of the
	// sandbox's memory, valid only during the call; nil when the
	// arguments are the primitives args), and writes its reply to rep (a
	// Reply the VM keeps for this, its zero value at the call). args are
	// valid only during the call (their strings are the call's own and may
	// be kept).
	CallBytes func(id int, args []Arg, encoded []byte, rep *Reply)
	// Take returns the result of an asynchronous host call that has
	// finished, if there is one; Ready receives a value after one has
	// finished. The finished calls wait in the host's queue, never on a
	// goroutine of their own.
	Take  func() (Completion, bool)
	Ready <-chan struct{}
	// Pending reports how many asynchronous host calls were started and
	// have not been taken yet.
	Pending func() int
	// Stop is closed when the host decides the job must stop.
	Stop <-chan struct{}
	// OpsSpent is called when a step of a session spends its budget of
	// operations.
	OpsSpent func()

	outcome *Outcome
}

func (j *Job) stopped() bool {
	select {
	case <-j.Stop:
		return true
	default:
		return false
	}
}

// Prepare readies v for a job ahead of it, with the work that does not
// depend on the job (wasmvm.Sandbox.PrepareRun): for a VM made before its
// job arrives, off the job's path.
func (v *VM) Prepare() error { return v.sb.PrepareRun(context.Background()) }

// Run runs the job to its end on the calling goroutine, which must own v.
// After Run the VM must be closed.
func (v *VM) Run(j *Job) (out Outcome) {
	v.job = j
	v.compiled = false
	defer func() { v.conclude(j, &out, recover()) }()
	if j.MemoryLimit > 0 {
		if err := v.setMemoryLimit(j.MemoryLimit); err != nil {
			return Outcome{Kind: Crashed, Message: err.Error()}
		}
	}
	v.sb.SetModuleHooks(v.hooks(j))
	v.sb.ResetHeapPeak()
	if j.stopped() {
		return Outcome{Kind: Stopped}
	}
	// The shim decodes the run's input, then compiles, links and
	// evaluates the entry module and selects its export (entryRun).
	_, err := v.sb.Call(context.Background(), entryRun, v.runSlots(j)...)
	return v.loop(j, err)
}

// runSlots are the arguments of entryRun for job j (ops.go's run*).
func (v *VM) runSlots(j *Job) []wasmvm.Value {
	flags := 0
	if j.FnOptional {
		flags |= runOptional
	}
	s := append(v.slots[:0], str(j.Entry), str(j.Fn), wasmvm.Value{}, wasmvm.Value{}, wasmvm.Value{},
		num(j.Console), num(-1))
	if in := j.Input; in != nil {
		s[runArgs] = bytesValue(in.Args)
		if in.Globals != nil {
			flags |= runWithGlobals
			s[runImports] = bytesValue(in.Imports)
			s[runReport] = num(in.Report)
			for i, g := range in.Globals {
				if i == j.Console || i == in.Report {
					s = append(s, wasmvm.Value{})
				} else {
					s = append(s, bytesValue(g))
				}
			}
		}
	}
	s[runFlags] = num(flags)
	v.slots = s
	return s
}

// hasGlobals reports whether a module of the job imports the globals
// module.
func (j *Job) hasGlobals() bool { return j.Input != nil && j.Input.Globals != nil }

// bytesValue is encoded bytes as the shim takes them; nil is undefined.
func bytesValue(b []byte) wasmvm.Value {
	if b == nil {
		return wasmvm.Value{}
	}
	return wasmvm.Value{Kind: wasmvm.Bytes, Bytes: b}
}

func str(s string) wasmvm.Value { return wasmvm.Value{Kind: wasmvm.String, Text: s} }
func num(n int) wasmvm.Value    { return wasmvm.Value{Kind: wasmvm.Number, Number: float64(n)} }

// conclude completes the outcome of job j at its end: a panic p is a
// crash, a stop the host asked for wins, and the heap figures are added.
func (v *VM) conclude(j *Job, out *Outcome, p any) {
	if p != nil {
		*out = Outcome{Kind: Crashed, Message: fmt.Sprint(p)}
	}
	if j.stopped() {
		out.Kind = Stopped
	}
	if v.abandoned {
		*out = Outcome{Kind: Crashed, Message: "a host function ended its goroutine (runtime.Goexit)"}
	}
	out.PeakHeap = int64(v.sb.HeapPeak())
	out.LimitHit = v.limitHit || v.sb.OutOfMemory()
}

// loop drives the event loop of a started job until it ends.
func (v *VM) loop(j *Job, err error) Outcome {
	ctx := context.Background()
	for {
		v.opsSpent(j)
		if j.stopped() {
			return Outcome{Kind: Stopped}
		}
		if j.outcome != nil {
			return *j.outcome
		}
		if err != nil {
			return v.failure(err)
		}
		err = v.sb.RunJobs(ctx)
		// A budget spent in a job, the last one included, stops the step
		// before anything else is decided (it would look like a deadlock).
		v.opsSpent(j)
		if j.outcome != nil || err != nil || j.stopped() {
			continue
		}
		if j.Take != nil {
			if c, ok := j.Take(); ok {
				err = v.complete(c)
				continue
			}
		}
		if j.Pending == nil || j.Pending() == 0 {
			return Outcome{Kind: Deadlock}
		}
		select {
		case <-j.Ready:
		case <-j.Stop:
		}
	}
}

// complete settles the asynchronous call c (entrySettle).
func (v *VM) complete(c Completion) error {
	a := answer(&c.Reply)
	if a.Kind == wasmvm.Async { // a settlement is a value
		a = wasmvm.Value{Kind: wasmvm.Error, Text: errBadDispatch.Error()}
	}
	_, err := v.sb.Call(context.Background(), entrySettle, num(c.ID), a)
	return err
}
