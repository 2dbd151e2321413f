// Package engine owns the JavaScript engine. It is the only package that
// imports modernc.org/quickjs: it creates and hardens a VM, runs one job on
// it with its event loop, and turns host calls into calls of a [Job].
//
// A VM is owned by the goroutine that created it. Only [VM.Interrupt] and
// [VM.InterruptJob] may be called from another goroutine. A VM runs one job
// and is then closed, or, after [VM.StartSession], runs many steps.
package engine

import (
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"
)

//go:embed bootstrap.js
var bootstrapSource string

// Undefined is the JavaScript value undefined as a raw argument or result.
type Undefined = quickjs.Undefined

// VM is one hardened JavaScript realm, prepared ahead of the job it runs.
type VM struct {
	vm     *quickjs.VM
	kernel quickjs.Value
	start  quickjs.Value
	settle quickjs.Value
	// callHost and reply are the kernel's, for hostCall.
	callHost, reply quickjs.Value
	// handOver is the kernel's, for the globals module.
	handOver    quickjs.Value
	key         string // random, in the names of the generated modules
	globalsName string // GlobalsModule
	rt          *lib.TJSRuntime
	job         *Job
	sess        *session // set by StartSession
	alloc       *allocStats
	closed      bool
	// jsonBuf is kept for the JSON text of the next JSON host call, and
	// protos for its walk.
	jsonBuf []byte
	protos  realmProtos
	// ctx is the engine context, for Interrupt; nil from the start of Close.
	intrMu  sync.Mutex
	ctx     *lib.TJSContext
	running *Job  // the step of a session that runs, for InterruptJob
	magic   int32 // the VM's number for hostCall
	// abandoned is set when a runtime.Goexit went up through the engine
	// from a host call: the engine may not run or free anything more.
	abandoned bool
}

// New creates and hardens a VM. It must be called on the goroutine that
// will run the VM's job.
func New() (_ *VM, err error) {
	qvm, err := quickjs.NewVM()
	if err != nil {
		return nil, err
	}
	v := &VM{vm: qvm, key: randomKey(), alloc: new(allocStats), magic: -1}
	v.globalsName = "airlock:globals:" + v.key
	defer func() {
		if err != nil {
			v.abort()
		}
	}()
	unsupported := func(what string) error {
		return fmt.Errorf("airlock: the engine's %s is not where it is expected; the quickjs version is unsupported", what)
	}
	if v.rt = runtimeOf(qvm); v.rt == nil {
		return nil, unsupported("runtime")
	}
	if v.ctx = contextOf(qvm); v.ctx == nil {
		return nil, unsupported("context")
	}
	v.alloc.ctx = uintptr(unsafe.Pointer(v.ctx))
	hookAllocator(v.rt, v.alloc)
	// The engine collects cycles when its heap passes a threshold, 256 KiB
	// at first: a new VM's kernel crossed it, and every VM paid a collection
	// (~50 µs) before its run. A VM runs one job and is then freed whole.
	qvm.SetGCThreshold(gcThreshold)
	tls := tlsOf(qvm)
	if tls == nil {
		return nil, unsupported("thread state")
	}
	v.magic = registerVM(v)
	if !v.defineHost(tls) {
		return nil, errors.New("airlock: sandbox bootstrap failed: the host function could not be defined")
	}
	v.installLoader(tls)
	code, err := bootstrapBytecode()
	if err != nil {
		return nil, err
	}
	bootFailed := func(err error) error { return fmt.Errorf("airlock: sandbox bootstrap failed: %w", err) }
	importer, err := qvm.EvalBytecodeValue(importerCode)
	if err != nil {
		return nil, bootFailed(err)
	}
	defer importer.Free() // before the deferred abort: the VM is still open
	fn, err := qvm.EvalBytecodeValue(code)
	if err != nil {
		return nil, bootFailed(err)
	}
	v.kernel, err = fn.CallValue(quickjs.UndefinedValue, importer)
	fn.Free()
	if err != nil {
		return nil, bootFailed(err)
	}
	for _, p := range []struct {
		name string
		dst  *quickjs.Value
	}{{"start", &v.start}, {"settle", &v.settle}, {"callHost", &v.callHost}, {"reply", &v.reply}, {"handOver", &v.handOver}} {
		atom, err := qvm.NewAtom(p.name)
		if err == nil {
			*p.dst, err = v.kernel.GetPropertyValue(atom)
		}
		if err != nil {
			return nil, bootFailed(err)
		}
	}
	return v, nil
}

// abort releases a VM whose creation failed: the values it holds, its
// host function's number, the engine.
func (v *VM) abort() {
	for _, x := range []*quickjs.Value{&v.start, &v.settle, &v.callHost, &v.reply, &v.handOver, &v.kernel} {
		if *x != (quickjs.Value{}) {
			x.Free()
		}
	}
	if v.magic >= 0 {
		unregisterVM(v.magic)
	}
	v.vm.Close()
}

// gcThreshold is the heap size at which the engine first collects cycles;
// a job's memory limit lowers it (see setMemoryLimit).
const gcThreshold = 4 << 20

var (
	bootstrapOnce sync.Once
	bootstrapCode []byte
	importerCode  []byte
	bootstrapErr  error
)

// importerSource is the kernel's importer: import() resolves its specifier
// from the file name of the function that calls it.
const importerSource = `(s) => import(s)`

// bootstrapBytecode compiles the kernel once per process. Parsing it is most
// of the cost of a new VM; loading the bytecode this process compiled from
// its own embedded source is not. No bytecode from outside is ever loaded.
func bootstrapBytecode() ([]byte, error) {
	bootstrapOnce.Do(func() {
		vm, err := quickjs.NewVM()
		if err != nil {
			bootstrapErr = err
			return
		}
		defer vm.Close()
		// Without source and debug information the bytecode is a fifth of
		// the size, loads faster and keeps less in each VM's heap; the
		// kernel's source is not the sandbox's to read either. The one
		// function that needs a file name, the importer, is compiled apart
		// with it.
		if importerCode, bootstrapErr = vm.Compile(importerSource, quickjs.EvalGlobal); bootstrapErr != nil {
			return
		}
		if rt := runtimeOf(vm); rt != nil {
			rt.Fstrip_flags = lib.MJS_STRIP_SOURCE | lib.MJS_STRIP_DEBUG
		}
		bootstrapCode, bootstrapErr = vm.Compile(bootstrapSource, quickjs.EvalGlobal)
		if bootstrapErr != nil {
			bootstrapErr = fmt.Errorf("airlock: the sandbox kernel does not compile: %w", bootstrapErr)
		}
	})
	return bootstrapCode, bootstrapErr
}

func randomKey() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "__airlock_" + hex.EncodeToString(b[:])
}

// runtimeOf returns the engine runtime of a VM, which the wrapper keeps
// unexported, so that the heap size can be read without a call into the
// engine. TestRuntimeLayout checks this against the wrapper in use.
func runtimeOf(m *quickjs.VM) *lib.TJSRuntime {
	f := reflect.ValueOf(m).Elem().FieldByName("runtime")
	if !f.IsValid() || f.Kind() != reflect.Pointer {
		return nil
	}
	p := *(*unsafe.Pointer)(unsafe.Pointer(f.UnsafeAddr()))
	if p == nil {
		return nil
	}
	return (*lib.TJSRuntime)(*(*unsafe.Pointer)(p))
}

// contextOf returns the engine context of a VM, kept unexported by the
// wrapper like its runtime (see runtimeOf).
func contextOf(m *quickjs.VM) *lib.TJSContext {
	f := reflect.ValueOf(m).Elem().FieldByName("cContext")
	if !f.IsValid() || f.Kind() != reflect.Uintptr {
		return nil
	}
	return (*lib.TJSContext)(*(*unsafe.Pointer)(unsafe.Pointer(f.UnsafeAddr())))
}

// setMemoryLimit caps the heap, and has cycles collected by half of it at
// the latest, so that garbage in cycles does not reach the limit first.
func (v *VM) setMemoryLimit(limit uintptr) {
	v.vm.SetMemoryLimit(limit)
	v.vm.SetGCThreshold(min(gcThreshold, limit/2))
}

// HeapBytes is the engine's current heap size in bytes.
func (v *VM) HeapBytes() int64 {
	if v.rt == nil {
		return 0
	}
	return int64(v.rt.Fmalloc_ctx.Fmalloc_state.Fmalloc_size)
}

// LimitHit reports whether the engine refused an allocation because of the
// memory limit: the host's signal for an out-of-memory, which no JavaScript
// can forge.
func (v *VM) LimitHit() bool { return v.alloc.limitHit }

// Interrupt stops the JavaScript the VM runs, for good: the VM must be
// discarded afterwards. Safe from any goroutine, also during and after Close.
//
// The engine checks for an interrupt only when a countdown of checkpoints
// (10,000 at a time) runs out, and a long native call (a sort, a search of a
// long string, a BigInt's toString) is one checkpoint: a loop of them would
// poll once every 10,000 long calls. So Interrupt also sets the countdown to
// zero, and the interrupt lands at the next checkpoint. A single native call
// can run for seconds between two checkpoints (the decimal string of a
// million-bit BigInt, JSON.stringify of a sparse array of 2^31 holes), so
// Interrupt also starves the VM: every allocation from then on fails, and
// such a call ends with an out-of-memory exception at its next allocation.
// The status of the run is the host's decision, not that exception.
func (v *VM) Interrupt() {
	v.alloc.starved.Store(true)
	v.vm.Interrupt()
	v.intrMu.Lock()
	if v.ctx != nil {
		atomic.StoreInt32(&v.ctx.Finterrupt_counter, 0)
	}
	v.intrMu.Unlock()
}

// InterruptJob interrupts the VM only while it runs step j of a session:
// an interrupt meant for one step never lands on the next. With terminal
// set it also starves the VM as Interrupt does, and the session must be
// discarded; without it the VM stays usable for the next step.
func (v *VM) InterruptJob(j *Job, terminal bool) {
	v.intrMu.Lock()
	defer v.intrMu.Unlock()
	if v.running != j || v.ctx == nil {
		return
	}
	if terminal {
		v.alloc.starved.Store(true)
	}
	v.vm.Interrupt()
	atomic.StoreInt32(&v.ctx.Finterrupt_counter, 0)
}

// Close releases the VM. It must be called on the VM's goroutine.
func (v *VM) Close() {
	if v.closed {
		return
	}
	v.closed = true
	v.intrMu.Lock()
	v.ctx = nil
	v.intrMu.Unlock()
	defer unregisterVM(v.magic)
	if v.abandoned {
		return // its memory is left to the process
	}
	defer func() { _ = recover() }() // an abandoned VM panics on Free; Close still runs
	if v.sess != nil {
		v.sess.free()
	}
	v.start.Free()
	v.settle.Free()
	v.callHost.Free()
	v.reply.Free()
	v.handOver.Free()
	v.kernel.Free()
	v.vm.Close()
}

var errBadDispatch = errors.New("airlock: malformed host call")

// dispatch is the one host function the kernel calls.
func (v *VM) dispatch(args []any) (any, error) {
	if len(args) == 0 {
		return nil, errBadDispatch
	}
	op, _ := args[0].(int)
	if op == 7 { // poll: returning to the engine checks for an interrupt
		return nil, nil
	}
	j := v.job
	if j == nil {
		return nil, errBadDispatch
	}
	switch op {
	case 0, 1: // call host function: id, then raw args or one wire string
		if len(args) < 2 {
			return nil, errBadDispatch
		}
		id, _ := args[1].(int)
		var r Reply
		if op == 1 {
			s, _ := args[2].(string)
			r = j.Call(id, nil, s, true)
		} else {
			r = j.Call(id, args[2:], "", false)
		}
		switch r.Kind {
		case ReplyRaw, ReplyJSON: // a JSON host function parses its text itself
			return r.Value, nil
		case ReplyWire:
			return []any{0, r.Value}, nil
		case ReplyError:
			return []any{1, r.Value}, nil
		case ReplyAsync:
			return []any{2, r.Value}, nil
		}
		return nil, errBadDispatch
	case 2: // done: kind (0 raw, 1 wire), value
		if len(args) < 3 {
			return nil, errBadDispatch
		}
		kind, _ := args[1].(int)
		j.outcome = &Outcome{Kind: OK, Value: args[2], Wire: kind == 1}
		return nil, nil
	case 3: // failed: phase, name, message, stack, fileName, line, column
		if len(args) < 8 {
			return nil, errBadDispatch
		}
		phase, _ := args[1].(int)
		o := &Outcome{Kind: Thrown}
		switch phase {
		case 0:
			o.Kind = LinkFailed
		case 2:
			o.Kind = ExportMissing
		}
		o.Name, _ = args[2].(string)
		o.Message, _ = args[3].(string)
		o.Stack, _ = args[4].(string)
		o.FileName, _ = args[5].(string)
		o.Line = toInt(args[6])
		o.Column = toInt(args[7])
		if len(args) > 8 {
			if fn := toInt(args[8]); fn >= 0 {
				o.FromHost, o.HostFunc = true, fn
			}
		}
		j.outcome = o
		return nil, nil
	case 6: // console: level, wire text of the arguments
		if len(args) == 3 && j.Log != nil {
			level, _ := args[1].(int)
			text, _ := args[2].(string)
			j.Log(level, text)
		}
		return nil, nil
	case 8: // a step spent its budget of loop iterations
		if j.OpsSpent != nil {
			j.OpsSpent()
		}
		return nil, nil
	case 5: // reporting a failure failed: the heap is exhausted
		if j.outcome == nil {
			j.outcome = &Outcome{Kind: Thrown, Name: "InternalError", Message: "out of memory"}
		}
		return nil, nil
	}
	return nil, errBadDispatch
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

func (v *VM) normalize(base, name string) (string, error) {
	if v.job == nil {
		return "", errors.New("no job")
	}
	return v.job.Resolve(base, name)
}

func (v *VM) load(name string) (string, error) {
	if v.job == nil {
		return "", errors.New("no job")
	}
	return v.job.Load(name)
}

// Key is the VM's secret, part of the names of the generated modules (the
// globals module, the bridged modules), so that user code cannot import them.
func (v *VM) Key() string { return v.key }
