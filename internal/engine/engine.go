// Package engine runs the sandbox's jobs: it starts each VM from the
// hardened snapshot of internal/wasmvm, with the kernel readied in it,
// runs one job on it with its event loop, and turns the shim's host calls
// into calls of a [Job]. The kernel is the protocol of a job between the
// shim's C and this package (internal/qjs/shim/kernel.h, mirrored in
// ops.go): a host call is C → Go → C, its values as bytes of the codec's
// binary format both ways, and no JavaScript runs on its way.
//
// A VM is owned by one goroutine at a time. Only [VM.Interrupt] and
// [VM.InterruptJob] may be called from another goroutine. A VM runs one job
// and is then closed, or, made by [NewSession] (or after [VM.StartSession]),
// runs many steps; an idle session's VM may be trimmed ([VM.Trim]).
package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/airlockrun/airlock/internal/intl"
	"github.com/airlockrun/airlock/internal/wasmvm"
	"github.com/airlockrun/airlock/internal/web"
)

// Undefined is the JavaScript value undefined as a raw argument or result.
type Undefined struct{}

// VM is one hardened JavaScript realm, prepared ahead of the job it runs.
type VM struct {
	sb          *wasmvm.Sandbox
	key         string // random, in the names of the generated modules
	globalsName string // GlobalsModule
	job         *Job
	sess        bool // set by StartSession and NewSession
	closed      bool
	limitHit    bool
	// intrMu guards running, the step of a session that runs, for
	// InterruptJob, and sb when it is replaced, for Interrupt.
	intrMu  sync.Mutex
	running *Job
	// abandoned is set when a runtime.Goexit went up through the engine
	// from a host call: the engine may not run anything more.
	abandoned bool
	// kept is the script PrepareStep compiled and the shim keeps for the
	// next Step ("" none), keptFlags how it was compiled (stepFlags).
	kept      string
	keptFlags int
	// snap is the snapshot a new sandbox of the VM comes from
	// (setMemoryLimit): nil the shared one, else the session's (NewSession).
	snap *wasmvm.Snapshot
	// compiled is set once the job's entry module has compiled (the
	// engine asks for its import.meta.url only then).
	compiled bool
	// reply is where Job.CallBytes writes a host call's reply (see dispatch).
	reply Reply
	// slots are entryRun's arguments, kept for the next run (runSlots).
	slots []wasmvm.Value
}

// The one engine and snapshot of the process, made at the first New.
var shared struct {
	once  sync.Once
	sn    *wasmvm.Snapshot
	err   error
	ready atomic.Bool // once has run
}

// intlScript hands Intl (internal/intl) its host function (OP_INTL),
// which the kernel's readying (entryInit) left on the global object, and
// evaluates it after the kernel: the kernel's objects keep the places they
// had in the image without it, and the pages a run that uses no Intl
// touches are as many as before (BENCHMARKS.md, "Intl"). The web
// platform's pure APIs (internal/web) follow it, for the same reason,
// with the same host function for their operations ("web." and a name:
// web.Call).
func intlScript() string {
	return "(() => { const h = globalThis.__airlock_intl; delete globalThis.__airlock_intl;\n" +
		"(\n" + intl.Source + "\n)(h);\n(\n" + web.Source + "\n)(h); })()"
}

func snapshot() (*wasmvm.Snapshot, error) {
	shared.once.Do(func() {
		ctx := context.Background()
		e, err := wasmvm.NewEngine(ctx, nil)
		if err != nil {
			shared.err = fmt.Errorf("airlock: the engine could not be started: %w", err)
			return
		}
		shared.sn, err = e.NewSnapshot(ctx, &wasmvm.SnapshotOptions{Init: []wasmvm.Entry{entryInit}, Hidden: intlScript(), Pool: poolSize})
		if err != nil {
			shared.err = fmt.Errorf("airlock: sandbox bootstrap failed: %w", err)
		}
		shared.ready.Store(true)
	})
	return shared.sn, shared.err
}

// Started reports whether the engine's start-up (the shared snapshot) is
// done, so that New does not wait for it.
func Started() bool { return shared.ready.Load() }

// Instances is how many sandboxes were made as new instances rather than
// taken from the shared snapshot's pool (wasmvm.Snapshot.Instances); 0
// before the snapshot exists, which it does not make.
func Instances() int64 {
	if !Started() || shared.sn == nil {
		return 0
	}
	return shared.sn.Instances()
}

// Prestart begins making the shared snapshot (compiling the engine's
// module, or loading it from the compilation cache, and the snapshot) in
// the background, so that a process about to run a program overlaps that
// work with the rest of its start. New waits for it.
func Prestart() { go snapshot() }

// poolSize is how many closed sandboxes' instances the snapshot keeps,
// rewound, for the next ones. A fresh instance pays a copy-on-write fault
// for each page a run writes (~40 pages for a hello run, 15-70 µs each on
// the machine measured); a pooled one has them already, at ~160 KiB of
// memory each. 16 let a fifth of the runs of two parallel callers miss the
// pool while it filled; 64 a twenty-fifth (BENCHMARKS.md).
const poolSize = 64

// linearLimit is the linear memory of a sandbox made ahead of its job: a
// reservation of address space, not memory. The job's memory limit caps
// it when the job takes the sandbox (setMemoryLimit); a job whose limit
// needs more gets a sandbox of its own.
const linearLimit = 512 << 20

// edgeSlack is what a sandbox's linear memory may hold beyond its job's
// memory limit and the snapshot's image (whose 4 MiB of headroom is free
// heap already): the C allocator's free chunks, which QuickJS's heap
// accounting does not count (a heap fragmented by blocks freed between
// live ones), and the shim's buffers outside that accounting (a source, a
// result's text). The heap limit counts what is live; this bounds what is
// not, so that a sandbox never holds more than its limit plus the image
// plus edgeSlack, whatever its allocator does (SECURITY.md, "Bounds").
const edgeSlack = 2 << 20

// New makes a VM from the snapshot.
func New() (*VM, error) {
	sn, err := snapshot()
	if err != nil {
		return nil, err
	}
	return vmOf(context.Background(), sn)
}

// vmOf makes a VM in a sandbox of snapshot sn, of linearLimit.
func vmOf(ctx context.Context, sn *wasmvm.Snapshot) (*VM, error) {
	sb, err := sn.NewSandbox(ctx, &wasmvm.SandboxOptions{MemoryLimit: linearLimit})
	if err != nil {
		return nil, fmt.Errorf("airlock: the sandbox could not be created: %w", err)
	}
	return newVM(sb), nil
}

// newVM makes a VM of sandbox sb, its host calls answered by the VM.
func newVM(sb *wasmvm.Sandbox) *VM {
	v := &VM{sb: sb, key: randomKey()}
	v.globalsName = "airlock:globals:" + v.key
	sb.SetHostFunc(v.host)
	return v
}

// setMemoryLimit caps the heap at limit bytes and the sandbox's linear
// memory at limit plus the image plus edgeSlack. A limit beyond what the
// sandbox's linear memory was made for gets a new sandbox with room for
// it.
func (v *VM) setMemoryLimit(limit uintptr) error {
	sn := v.snap
	if sn == nil {
		var err error
		if sn, err = snapshot(); err != nil {
			return err
		}
	}
	edge := uint64(limit) + sn.ImageSize() + edgeSlack
	if v.sb.SetMemoryLimit(edge) && v.sb.SetHeapLimit(uint64(limit)) {
		return nil
	}
	sb, err := sn.NewSandbox(context.Background(), &wasmvm.SandboxOptions{MemoryLimit: edge})
	if err != nil {
		return err
	}
	v.intrMu.Lock() // Interrupt, on another goroutine, reads v.sb
	old := v.sb
	v.sb = sb
	v.intrMu.Unlock()
	old.Close(context.Background())
	sb.SetHostFunc(v.host)
	sb.SetHeapLimit(uint64(limit))
	return nil
}

func randomKey() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "__airlock_" + hex.EncodeToString(b[:])
}

// HeapBytes is the engine's current heap size in bytes.
func (v *VM) HeapBytes() int64 { return int64(v.sb.MemoryUsed()) }

// WrittenPages is the number of the snapshot image's pages the VM's
// sandbox has written (wasmvm.Sandbox.WrittenPages).
func (v *VM) WrittenPages() (int, bool) { return v.sb.WrittenPages() }

// LimitHit reports whether the engine refused an allocation because of the
// memory limit: the host's signal for an out-of-memory, which no JavaScript
// can forge.
func (v *VM) LimitHit() bool { return v.limitHit }

// Interrupt stops the JavaScript the VM runs, for good, native loops
// included: the VM must be discarded afterwards. Safe from any goroutine,
// also during and after Close.
func (v *VM) Interrupt() {
	v.intrMu.Lock()
	sb := v.sb
	v.intrMu.Unlock()
	sb.Terminate()
}

// InterruptJob interrupts the VM only while it runs step j of a session:
// an interrupt meant for one step never lands on the next. With terminal
// set it stops the VM for good as Interrupt does, and the session must be
// discarded; without it the step's bytecode stops and the VM stays usable
// for the next step.
func (v *VM) InterruptJob(j *Job, terminal bool) {
	v.intrMu.Lock()
	defer v.intrMu.Unlock()
	if v.running != j {
		return
	}
	if terminal {
		v.sb.Terminate()
	} else {
		v.sb.Interrupt()
	}
}

// Close releases the VM; its instance goes back to the snapshot's pool if
// it can be reused.
func (v *VM) Close() {
	if v.closed {
		return
	}
	v.closed = true
	if v.abandoned {
		return // its instance may be mid-call: it is left to the process
	}
	// A session's instance goes back to the pool as a run's does: the
	// rewind copies the image over every page the session wrote, its
	// globals and heap limit are set again by the next start (wasmvm's
	// isolation argument, RATIONALE.md "A pool of rewound instances").
	v.sb.Close(context.Background())
}

// Key is the VM's secret, part of the names of the generated modules (the
// globals module, the bridged modules), so that user code cannot import them.
func (v *VM) Key() string { return v.key }

// ImportsExport is the globals module's export that holds the bridged
// modules. It is not an identifier, so no global's name can meet it.
const ImportsExport = "airlock:imports"

// GlobalsModule is the name of the run's globals module. It carries the
// VM's secret key, so that user code cannot import it.
func (v *VM) GlobalsModule() string { return v.globalsName }

var errBadDispatch = errors.New("airlock: malformed host call")

// host answers the shim's host function: args[0] is the operation
// (ops.go).
// Nothing may unwind through the engine: a runtime.Goexit (a test's
// FailNow in a host function) marks the VM abandoned.
func (v *VM) host(_ context.Context, args []wasmvm.Value) (r wasmvm.Value, err error) {
	returned := false
	defer func() {
		if !returned {
			if p := recover(); p != nil {
				panic(p) // a panic: wasmvm recovers it as a fault of the sandbox
			}
			v.abandoned = true // runtime.Goexit: the goroutine ends under the engine
		}
	}()
	r, err = v.dispatch(args)
	returned = true
	return r, err
}

func (v *VM) dispatch(args []wasmvm.Value) (wasmvm.Value, error) {
	undefined := wasmvm.Value{}
	if len(args) == 0 || args[0].Kind != wasmvm.Number {
		return undefined, errBadDispatch
	}
	op := int(args[0].Number)
	if op == opIntl { // Intl: an operation's name, its texts, then a number
		return v.intlCall(args[1:]), nil
	}
	j := v.job
	if j == nil {
		return undefined, errBadDispatch
	}
	v.opsSpent(j) // before a host call: none runs for a step past its budget
	num := func(i int) int {
		if i < len(args) && args[i].Kind == wasmvm.Number {
			return int(args[i].Number)
		}
		return 0
	}
	text := func(i int) string {
		if i < len(args) && args[i].Kind == wasmvm.String {
			return args[i].Text
		}
		return ""
	}
	encoded := func(i int) []byte {
		if i < len(args) && args[i].Kind == wasmvm.Bytes {
			return args[i].Bytes
		}
		return nil
	}
	switch op {
	case opCall, opCallEncoded: // call host function: id, then raw args or the encoded list
		if len(args) < 2 {
			return undefined, errBadDispatch
		}
		// The reply is written in place: a Reply returned and copied whole
		// cost the processor a stall at each copy (it is larger than Go
		// keeps in registers), a third of a dispatch.
		r := &v.reply
		var raw []Arg
		var list []byte
		if op == opCallEncoded {
			if list = encoded(2); list == nil {
				list = []byte{}
			}
		} else {
			// The primitives are handed over typed, as the shim gave them:
			// no list is made and none is boxed.
			raw = args[2:]
		}
		if j.CallBytes != nil {
			j.CallBytes(num(1), raw, list, r)
		}
		a := answer(r)
		*r = Reply{}
		return a, nil
	case opDone: // kind (0 a primitive, 1 encoded), value
		if len(args) < 3 {
			return undefined, errBadDispatch
		}
		o := &Outcome{Kind: OK}
		if num(1) == 1 {
			o.Encoded, o.Bytes = true, append([]byte(nil), encoded(2)...)
		} else {
			o.Value = rawOf(args[2])
		}
		j.outcome = o
		v.settled()
		return undefined, nil
	case opFailed: // phase, name, message, stack, fileName, line, column[, host function]
		if len(args) < 8 {
			return undefined, errBadDispatch
		}
		o := &Outcome{Kind: Thrown}
		switch num(1) {
		case phaseLink:
			// The run counts as started when the globals module hands it
			// the globals; a job without it (a bare entry, which loads no
			// other module) has started once its entry compiled.
			if j.hasGlobals() || !v.compiled {
				o.Kind = LinkFailed
			}
		case phaseExport:
			o.Kind = ExportMissing
		}
		o.Name, o.Message, o.Stack, o.FileName = text(2), text(3), text(4), text(5)
		o.Line, o.Column = num(6), num(7)
		if len(args) > 8 {
			if fn := num(8); fn >= 0 {
				o.FromHost, o.HostFunc = true, fn
			}
		}
		j.outcome = o
		v.settled()
		return undefined, nil
	case opLog: // level, the arguments encoded
		if len(args) == 3 && j.LogBytes != nil {
			j.LogBytes(num(1), encoded(2))
		}
		return undefined, nil
	case opOutOfMemory: // reporting a failure failed: the heap is exhausted
		if j.outcome == nil {
			j.outcome = &Outcome{Kind: Thrown, Name: "InternalError", Message: "out of memory"}
		}
		return undefined, nil
	}
	return undefined, errBadDispatch
}

// answer is a host call's reply as the shim takes it: a value, bytes of
// the binary format, JSON text, an Error to throw, or the id of an
// asynchronous call.
func answer(r *Reply) wasmvm.Value {
	switch r.Kind {
	case ReplyArg:
		return argValue(r.Arg)
	case ReplyRaw:
		return valueOf(r.Value)
	case ReplyBytes:
		return wasmvm.Value{Kind: wasmvm.Bytes, Bytes: r.Bytes}
	case ReplyJSON: // a JSON host function's text, parsed by the shim
		s, _ := r.Value.(string)
		return wasmvm.Value{Kind: wasmvm.JSON, Text: validUTF8(s)}
	case ReplyError:
		s, _ := r.Value.(string)
		return wasmvm.Value{Kind: wasmvm.Error, Text: validUTF8(s)}
	case ReplyAsync:
		return wasmvm.Value{Kind: wasmvm.Async, Number: float64(toInt(r.Value))}
	}
	return wasmvm.Value{Kind: wasmvm.Error, Text: errBadDispatch.Error()}
}

// opsSpent tells the job when the step j runs past its operation budget.
func (v *VM) opsSpent(j *Job) {
	if v.sess && j.OpsSpent != nil && v.sb.OpBudget() < 0 {
		j.OpsSpent()
	}
}

// intlCall answers the Intl code's host operation (see intl.Call). A long
// one is abandoned when the job is stopped: its answer is then "", which
// nothing reads, since the stop interrupts the sandbox too.
func (v *VM) intlCall(args []wasmvm.Value) wasmvm.Value {
	var op string
	var texts []string
	ms := 0.0
	for i, a := range args {
		switch {
		case i == 0 && a.Kind == wasmvm.String:
			op = a.Text
		case a.Kind == wasmvm.String:
			texts = append(texts, a.Text)
		case a.Kind == wasmvm.Number:
			ms = a.Number
		}
	}
	var stop <-chan struct{}
	if v.job != nil {
		stop = v.job.Stop
	}
	if name, ok := strings.CutPrefix(op, "web."); ok { // the web platform's (internal/web)
		return wasmvm.Value{Kind: wasmvm.String, Text: validUTF8(web.Call(stop, name, texts))}
	}
	return wasmvm.Value{Kind: wasmvm.String, Text: validUTF8(intl.Call(stop, op, texts, ms))}
}

// settled stops the job queue once the outcome is known: the program's
// other work (a loop of microtasks that never ends) must not hold the
// result back. The bytecode stops with an uncatchable error at once (the
// shim throws it as this host call returns); a session's next step clears
// the interrupt.
func (v *VM) settled() { v.sb.Interrupt() }

// rawOf converts a primitive from the shim.
func rawOf(a wasmvm.Value) any {
	switch a.Kind {
	case wasmvm.Undefined:
		return Undefined{}
	case wasmvm.Null:
		return nil
	case wasmvm.Bool:
		return a.Bool
	case wasmvm.Number:
		return a.Number
	}
	return a.Text
}

// argValue is a typed primitive answer for the shim: a primitive as it
// is, a string as Go reads it, anything else a malformed reply.
func argValue(a Arg) wasmvm.Value {
	switch a.Kind {
	case wasmvm.Undefined, wasmvm.Null, wasmvm.Bool, wasmvm.Number:
		return a
	case wasmvm.String:
		return wasmvm.Value{Kind: wasmvm.String, Text: validUTF8(a.Text)}
	}
	return wasmvm.Value{Kind: wasmvm.Error, Text: errBadDispatch.Error()}
}

// valueOf converts a raw primitive for the shim.
func valueOf(x any) wasmvm.Value {
	switch x := x.(type) {
	case nil:
		return wasmvm.Value{Kind: wasmvm.Null}
	case Undefined:
		return wasmvm.Value{}
	case bool:
		return wasmvm.Value{Kind: wasmvm.Bool, Bool: x}
	case int:
		return wasmvm.Value{Kind: wasmvm.Number, Number: float64(x)}
	case float64:
		return wasmvm.Value{Kind: wasmvm.Number, Number: x}
	case string:
		return wasmvm.Value{Kind: wasmvm.String, Text: validUTF8(x)}
	}
	return wasmvm.Value{Kind: wasmvm.Error, Text: errBadDispatch.Error()}
}

func toInt(a any) int {
	switch n := a.(type) {
	case int:
		return n
	case float64:
		return int(n)
	}
	return 0
}

// hooks are the module hooks of job j.
func (v *VM) hooks(j *Job) wasmvm.ModuleHooks {
	h := wasmvm.ModuleHooks{
		Normalize: func(base, name string) (string, error) { return j.Resolve(base, name) },
		Load:      func(_ context.Context, name string) (string, error) { return j.Load(name) },
		Fallback:  j.Fallback,
		URL: func(name string) string {
			if name == j.Entry {
				v.compiled = true
			}
			if j.URL == nil {
				return ""
			}
			return j.URL(name)
		},
		Globals: func(name string) []string {
			if name != v.globalsName {
				return nil
			}
			return append(j.GlobalNames[:len(j.GlobalNames):len(j.GlobalNames)], ImportsExport)
		},
	}
	return h
}

// failure turns an error of the engine, not of the shim's reporting,
// into an outcome: an out-of-memory, a stop, an uncatchable error or a
// fault.
func (v *VM) failure(err error) Outcome {
	var ex *wasmvm.Exception
	switch {
	case errors.As(err, &ex):
		name, msg, stack := splitException(ex.Text)
		return Outcome{Kind: Thrown, Name: name, Message: msg, Stack: stack}
	case errors.Is(err, wasmvm.ErrMemoryLimit):
		v.limitHit = true
		return Outcome{Kind: Thrown, Name: "InternalError", Message: "out of memory"}
	case errors.Is(err, wasmvm.ErrTerminated), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return Outcome{Kind: Stopped}
	}
	return Outcome{Kind: Crashed, Message: err.Error()}
}

// splitException reads "Name: message" and the stack after it from an
// exception's text.
func splitException(text string) (name, msg, stack string) {
	first, rest, _ := strings.Cut(text, "\n")
	name, msg, ok := strings.Cut(first, ": ")
	if !ok {
		name, msg = "Error", first
	}
	return name, msg, rest
}

// validUTF8 returns s with U+FFFD for each byte that does not start valid
// UTF-8, as Go decodes it: a string crosses into the sandbox as Go reads it.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s { // an invalid byte comes as utf8.RuneError
		b.WriteRune(r)
	}
	return b.String()
}
