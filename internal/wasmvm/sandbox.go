package wasmvm

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Kind of source for Eval.
type SourceKind uint8

const (
	Script SourceKind = iota // a classic script; its value is the completion value
	Module                   // an ES module; its value is undefined
)

// Sandbox is one instance of the module started from a snapshot: a fresh
// realm. It is owned by one goroutine: Eval, RunJobs, DefineFunc, Reset,
// Trim and Close must not run concurrently. Terminate may be called from
// any goroutine, at any time, also after Close.
type Sandbox struct {
	snap   *Snapshot
	mod    instance
	mem    *linearMemory
	ctxPtr uint32
	ctl    uint32
	// made is the memory limit the sandbox was made with, its memory's
	// reservation (the pool's key); limit is the one in force, at most
	// made (SetMemoryLimit).
	made, limit uint64
	stack       [8]uint64
	entered     bool   // a call is under way (entry.go)
	trimmed     []span // what Trim gave back, for the next call to make again

	funcs   []namedFunc
	modules ModuleHooks
	hostFn  HostFunc // answers the shim's own host calls (SetHostFunc)
	args    []Value
	pending []byte
	fault   error // a host function's panic

	mu       sync.Mutex // guards stopWord against Close, the control block against Trim
	stopWord *uint32    // &qjs_ctl.stop in linear memory; nil once closed
	spent    bool
}

type namedFunc struct {
	name string
	fn   HostFunc
}

func (s *Sandbox) bind() {
	s.stopWord = s.mem.word(s.ctl + ctlStop)
	s.mem.ctl = s.ctl
}

// Terminate stops the program running in the sandbox, or the next one to
// run: bytecode at QuickJS's next interrupt check, native code (string
// searches, sorts, BigInt arithmetic, regexps, JSON) at the next back edge
// of any loop. The Eval or RunJobs in progress returns ErrTerminated and
// the sandbox is spent. Safe from any goroutine; a no-op after Close.
func (s *Sandbox) Terminate() {
	s.mu.Lock()
	if s.stopWord != nil {
		storeWord(s.stopWord, 1)
	}
	s.mu.Unlock()
}

// Eval runs src as a script or a module named filename, then the job queue
// until it is empty. A done ctx stops it as Terminate does and Eval returns
// ctx.Err(). Errors: *Exception for a value the program threw,
// ErrTerminated, ErrMemoryLimit, *TrapError, *HostPanicError, ErrSpent.
func (s *Sandbox) Eval(ctx context.Context, src, filename string, kind SourceKind) (Result, error) {
	if err := s.ready(ctx); err != nil {
		return Result{}, err
	}
	buf, err := s.writeSource(ctx, src, filename)
	if err != nil {
		return Result{}, err
	}
	mod := uint64(0)
	if kind == Module {
		mod = 1
	}
	st := s.stack[:]
	st[0], st[1], st[2], st[3], st[4] = uint64(s.ctxPtr), uint64(buf), uint64(len(src)), uint64(buf)+uint64(len(src))+1, mod
	return s.run(ctx, entryEval, buf)
}

// writeSource copies src and filename into one guest buffer, src NUL
// filename NUL, for the shim's evaluations; the caller's run frees it.
func (s *Sandbox) writeSource(ctx context.Context, src, filename string) (uint32, error) {
	n := uint64(len(src)) + uint64(len(filename)) + 2
	if n > 1<<31 {
		return 0, errors.New("wasmvm: source too large")
	}
	buf, err := s.malloc(ctx, uint32(n))
	if err != nil {
		return 0, err
	}
	mem := s.mod.Memory()
	mem.WriteString(buf, src)
	mem.WriteString(buf+uint32(len(src)), "\x00")
	mem.WriteString(buf+uint32(len(src))+1, filename)
	mem.WriteString(buf+uint32(n)-1, "\x00")
	return buf, nil
}

// RunJobs runs the job queue until it is empty (promise reactions,
// queueMicrotask callbacks). Errors as for Eval; an *Exception is a job's
// uncaught throw.
func (s *Sandbox) RunJobs(ctx context.Context) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	s.stack[0] = uint64(s.ctxPtr)
	_, err := s.run(ctx, entryRunJobs, 0)
	return err
}

// DefineFunc defines globalThis[name] as a function calling fn.
func (s *Sandbox) DefineFunc(ctx context.Context, name string, fn HostFunc) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	p, err := s.malloc(ctx, uint32(len(name)+1))
	if err != nil {
		return err
	}
	mem := s.mod.Memory()
	mem.WriteString(p, name)
	mem.WriteString(p+uint32(len(name)), "\x00")
	st := s.stack[:]
	st[0], st[1], st[2] = uint64(s.ctxPtr), uint64(p), uint64(len(s.funcs))
	err = s.enter(ctx, entryDefHostFunc, st)
	r := int32(st[0])
	s.free(ctx, p)
	if err != nil || r != 0 {
		return s.outcomeErr(ctx, err, "define function")
	}
	s.funcs = append(s.funcs, namedFunc{name, fn})
	return nil
}

// SetModuleLoader sets the function that supplies the modules a program
// imports; nil (the default) makes every import fail. Reset clears it.
func (s *Sandbox) SetModuleLoader(l ModuleLoader) { s.modules = ModuleHooks{Load: l} }

// MemoryUsed is the bytes of QuickJS's heap in use.
func (s *Sandbox) MemoryUsed() uint64 {
	v, _ := s.mod.Memory().ReadUint32Le(s.ctl + ctlHeapUsed)
	return uint64(v)
}

// WrittenPages is the number of the image's 4 KiB pages the sandbox has
// written, each its own copy now (RATIONALE.md, "What a run writes of the
// image"); false where that cannot be read (no /proc/self/pagemap, or not
// Linux, where every page is the sandbox's own).
func (s *Sandbox) WrittenPages() (int, bool) { return s.mem.writtenPages() }

// Reset rewinds the sandbox to its snapshot: memory, stack pointer and
// host functions as they were when it started, a fresh Math.random seed,
// and not spent. It reports false if the sandbox cannot be rewound (its
// memory grew beyond the image, or the snapshot is closed): Close it then.
func (s *Sandbox) Reset() bool {
	sn := s.snap
	sn.mu.RLock() // the image stays until the rewind is done
	defer sn.mu.RUnlock()
	if sn.closed || s.mod == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopWord == nil || !s.mem.rewind(uintptr(s.mod.Memory().Size())) {
		return false
	}
	s.limit = s.made
	s.start()
	s.trimmed = s.trimmed[:0] // the rewound pages are the image's: none to make again
	s.funcs = s.funcs[:0]
	s.modules = ModuleHooks{}
	s.hostFn = nil
	s.fault = nil
	s.spent = false
	return true
}

// Close ends the sandbox. Its instance, rewound to the image, goes to the
// snapshot's pool if the sandbox is not spent and the pool has room; else
// it is closed and its memory freed. Idempotent.
func (s *Sandbox) Close(ctx context.Context) error {
	s.mu.Lock()
	s.stopWord = nil
	s.mu.Unlock()
	if s.mod == nil {
		return nil
	}
	if !s.spent && s.snap.give(pooled{mod: s.mod, mem: s.mem, limit: s.made}) {
		s.mod, s.mem = nil, nil
		s.spent = true
		return nil
	}
	err := s.mod.Close(ctx)
	s.mod = nil
	s.spent = true
	return err
}

func (s *Sandbox) ready(ctx context.Context) error {
	if s.mod == nil {
		return ErrClosed
	}
	if s.spent {
		return ErrSpent
	}
	return ctx.Err()
}

func (s *Sandbox) malloc(ctx context.Context, n uint32) (uint32, error) {
	st := s.stack[:]
	st[0] = uint64(n)
	if err := s.enter(ctx, entryMalloc, st); err != nil {
		return 0, s.outcomeErr(ctx, err, "malloc")
	}
	if st[0] == 0 {
		s.spent = true
		return 0, ErrMemoryLimit
	}
	return uint32(st[0]), nil
}

func (s *Sandbox) free(ctx context.Context, p uint32) {
	st := s.stack[:]
	st[0] = uint64(p)
	s.enter(ctx, entryFree, st)
}

// run calls f (its arguments on s.stack) with the sandbox in ctx and the
// stop armed on ctx, frees buf, and reads the outcome.
func (s *Sandbox) run(ctx context.Context, f Entry, buf uint32) (Result, error) {
	if err := s.call(ctx, f, "eval"); err != nil {
		return Result{}, err
	}
	if buf != 0 {
		s.free(ctx, buf)
	}
	mem := s.mod.Memory()
	status, _ := mem.ReadUint32Le(s.ctl + ctlResStatus)
	res, _ := mem.Read(s.ctl+ctlRes, slotSize)
	tag := binary.LittleEndian.Uint32(res)
	text := ""
	if tag == tagString || tag == tagJSON {
		b, ok := mem.Read(binary.LittleEndian.Uint32(res[8:]), binary.LittleEndian.Uint32(res[4:]))
		if !ok {
			s.spent = true
			return Result{}, &TrapError{Err: errors.New("result out of range")}
		}
		text = string(b)
	}
	switch status {
	case resOK:
		if tag == tagJSON {
			return Result{Value: Value{Kind: JSON, Text: text}}, nil
		}
		return Result{}, nil
	case resPending:
		return Result{Pending: true}, nil
	default:
		return Result{}, &Exception{Text: text}
	}
}

// call calls f with s.stack, which holds its arguments and then its
// results, stopped by Terminate when ctx is done. A stop, a trap or a
// host function's fault is the error of outcomeErr.
func (s *Sandbox) call(ctx context.Context, f Entry, what string) error {
	var disarm func() bool
	if ctx.Done() != nil {
		disarm = context.AfterFunc(ctx, s.Terminate)
	}
	err := s.enter(&sandboxCtx{ctx, s}, f, s.stack[:])
	if disarm != nil {
		disarm()
	}
	if err != nil || loadWord(s.stopWord) != 0 || s.fault != nil {
		return s.outcomeErr(ctx, err, what)
	}
	return nil
}

// outcomeErr classifies a stop, in this order: a host function's panic,
// the out-of-memory mark, a stop (ctx or Terminate), an engine fault.
// Every one spends the sandbox.
func (s *Sandbox) outcomeErr(ctx context.Context, err error, what string) error {
	s.spent = true
	if s.fault != nil {
		return s.fault
	}
	if oom, _ := s.mod.Memory().ReadUint32Le(s.ctl + ctlOOM); oom != 0 {
		return ErrMemoryLimit
	}
	if loadWord(s.stopWord) != 0 {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return ErrTerminated
	}
	if err != nil {
		return &TrapError{Err: err}
	}
	return fmt.Errorf("wasmvm: %s failed", what)
}

// tickEvery is how many loop iterations (any loop of the module: QuickJS's
// interpreter and its C code alike) run between two calls of env.tick.
// Measured in BENCHMARKS.md: the check costs a few percent of compute, the
// call itself nothing; a stop lands within tickEvery iterations.
const tickEvery = 10000

// tickHook, set only by tests, runs at every env.tick of every sandbox,
// before the stop word is read: a test can act at a point of the guest's
// work (between two chunks of a bulk copy) instead of racing it.
var tickHook atomic.Pointer[func(*Sandbox)]

// tick is env.tick() -> stop: it rearms the loop countdown and reports
// whether the guest must stop. Being a call into Go, it is also where the
// Go runtime can preempt the goroutine running the guest.
func tick(ctx context.Context, _ memory, stack []uint64) {
	stack[0] = 0
	s := sandboxOf(ctx)
	if s == nil {
		return
	}
	s.mod.rearm()
	if h := tickHook.Load(); h != nil {
		(*h)(s)
	}
	if loadWord(s.stopWord) != 0 {
		stack[0] = 1
	}
}
