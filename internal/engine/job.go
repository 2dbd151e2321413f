package engine

import (
	"errors"
	"fmt"

	"modernc.org/quickjs"
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

// Outcome is how a job ended.
type Outcome struct {
	Kind OutcomeKind
	// Value is the result: a raw primitive, or wire text when Wire is set.
	Value any
	Wire  bool
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
	ReplyWire                   // Value is wire text
	ReplyError                  // Value is an error message; the call throws an Error
	ReplyAsync                  // Value is the id of a pending asynchronous call
	ReplyJSON                   // Value is JSON text, the answer of a JSON host function
)

// Reply is the answer of a host call.
type Reply struct {
	Kind  ReplyKind
	Value any
}

// Completion settles an asynchronous host call: Reply is raw, wire, JSON or
// error.
type Completion struct {
	ID    int
	Reply Reply
}

// Job is one run of an entry module on a VM.
type Job struct {
	Entry       string // the entry module's resolved name
	Fn          string // the export to select
	FnOptional  bool   // a missing Fn gives undefined instead of a link error
	Args        string // wire text of the argument array
	Globals     string // JSON array of the wire texts of the global values
	Imports     string // wire text of the array of bridged module objects
	MemoryLimit uintptr
	// GlobalNames are the globals' names, in the order of Globals: the
	// exports of the globals module (see VM.GlobalsModule).
	GlobalNames []string

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
	// Console is the index among the globals where the kernel puts its
	// capturing console, or -1 for none.
	Console int
	// Log records a call of the capturing console: the index of the method
	// (log, info, warn, error, debug) and the wire text of the arguments.
	Log func(level int, wire string)
	// Call runs host function id with raw args, or with wire text of the args.
	Call func(id int, raw []any, wire string, encoded bool) Reply
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
	// loop iterations.
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

// Run runs the job to its end on the calling goroutine, which must own v.
// After Run the VM must be closed.
func (v *VM) Run(j *Job) (out Outcome) {
	v.job = j
	defer func() { v.conclude(j, &out, recover()) }()
	if j.MemoryLimit > 0 {
		v.setMemoryLimit(j.MemoryLimit)
	}
	if j.stopped() {
		return Outcome{Kind: Stopped}
	}
	_, err := v.start.Call(v.kernel, j.Entry, j.Fn, j.FnOptional, j.Console, j.Args, j.Globals, j.Imports)
	return v.loop(j, err)
}

// conclude completes the outcome of job j at its end: a panic p is a
// crash, a stop the host asked for wins, and the heap figures are added.
func (v *VM) conclude(j *Job, out *Outcome, p any) {
	if p != nil {
		*out = Outcome{Kind: Crashed, Message: fmt.Sprint(p)}
	}
	if j.stopped() {
		out.Kind = Stopped
	}
	out.PeakHeap = v.alloc.peak
	out.LimitHit = v.alloc.limitHit
}

// loop drives the event loop of a started job until it ends.
func (v *VM) loop(j *Job, err error) Outcome {
	for {
		if j.stopped() {
			return Outcome{Kind: Stopped}
		}
		if j.outcome != nil {
			return *j.outcome
		}
		if err != nil {
			return engineFailure(err)
		}
		var n int
		n, err = v.vm.ExecutePendingJobs()
		if j.outcome != nil || err != nil || n > 0 {
			continue
		}
		if j.Take != nil {
			if c, ok := j.Take(); ok {
				err = v.complete(c)
				continue
			}
		}
		if j.Pending == nil || j.Pending() == 0 {
			return v.deadlock(j)
		}
		select {
		case <-j.Ready:
		case <-j.Stop:
		}
	}
}

func (v *VM) complete(c Completion) error {
	ok, kind, value := true, 0, c.Reply.Value
	switch c.Reply.Kind {
	case ReplyWire:
		kind = 1
	case ReplyJSON: // settled as wire text in its plain-JSON form
		kind, value = 1, "J"+value.(string)
	case ReplyError:
		ok = false
	}
	_, err := v.settle.Call(v.kernel, c.ID, ok, kind, value)
	return err
}

// engineFailure turns an error that came out of the engine itself, not out
// of the kernel's reporting, into an outcome: an out-of-memory or interrupt
// that no JavaScript could catch.
func engineFailure(err error) Outcome {
	var e *quickjs.Error
	if errors.As(err, &e) {
		return Outcome{Kind: Thrown, Name: e.Name, Message: e.Message, Stack: e.Stack}
	}
	return Outcome{Kind: Thrown, Name: "InternalError", Message: err.Error()}
}

// deadlock is the outcome when nothing is left to run and nothing is
// pending. When the memory limit was hit, the likely cause is that the engine
// could not allocate the job that would have reported the failure.
func (v *VM) deadlock(j *Job) Outcome {
	if v.alloc.limitHit {
		return Outcome{Kind: Thrown, Name: "InternalError", Message: "out of memory"}
	}
	return Outcome{Kind: Deadlock}
}
