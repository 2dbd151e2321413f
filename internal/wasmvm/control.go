package wasmvm

import (
	"context"
	"errors"
)

// SetModuleHooks sets the functions that supply the modules a program
// imports. Reset clears them.
func (s *Sandbox) SetModuleHooks(h ModuleHooks) { s.modules = h }

// The flags of a step of an executor's session and of its inspection
// (shim.h's STEP_*): InspectStep's, and the entry that runs a step.
const (
	StepBudget = 1 // its loops and function entries count against SetOpBudget
	StepSloppy = 2 // sloppy global code, as Node's REPL runs it
	StepKeep   = 4 // InspectStep keeps the compiled step, for the step's entry to run
)

// PrepareRun readies the sandbox for a run ahead of it, doing what does
// not depend on the program: the allocator's arenas the run will allocate
// from are made now (the shim keeps a block of each small size until the
// sandbox is rewound). It costs the sandbox ~16 KiB of its heap.
func (s *Sandbox) PrepareRun(ctx context.Context) error {
	return s.callCtx(ctx, entryPrepareRun, "prepare")
}

// DropJobs drops every pending job without running it.
func (s *Sandbox) DropJobs(ctx context.Context) error {
	return s.callCtx(ctx, entryDropJobs, "drop jobs")
}

// callCtx calls the shim's function e with the context as its one
// argument, with no stop armed on ctx (call arms one).
func (s *Sandbox) callCtx(ctx context.Context, e Entry, what string) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	s.stack[0] = uint64(s.ctxPtr)
	if err := s.enter(ctx, e, s.stack[:]); err != nil {
		return s.outcomeErr(ctx, err, what)
	}
	return nil
}

// Interrupt stops the bytecode the sandbox runs, as Terminate does, but
// the sandbox stays usable: QuickJS throws an uncatchable InternalError
// ("interrupted") at its next interrupt check, and the Eval, Call or
// RunJobs in progress returns it as an *Exception. Native code is not
// stopped. Safe from any goroutine; ClearInterrupt ends it.
func (s *Sandbox) Interrupt() {
	s.mu.Lock()
	if s.stopWord != nil {
		storeWord(s.mem.word(s.ctl+ctlSoft), 1)
	}
	s.mu.Unlock()
}

// ClearInterrupt lets bytecode run again after Interrupt.
func (s *Sandbox) ClearInterrupt() {
	s.mu.Lock()
	if s.stopWord != nil {
		storeWord(s.mem.word(s.ctl+ctlSoft), 0)
	}
	s.mu.Unlock()
}

// SetOpBudget sets the operation budget of the code a step compiles with
// StepBudget: every loop body's entry and every entry into one of
// its functions (a call by any route, the start or a resumption of an
// async function or a generator) spends one; spent (below zero), the code
// throws an uncatchable error.
func (s *Sandbox) SetOpBudget(n int64) {
	s.mod.Memory().WriteUint64Le(s.ctl+ctlOps, uint64(n))
}

// OpBudget is what is left of the operation budget; negative once spent.
func (s *Sandbox) OpBudget() int64 {
	v, _ := s.mod.Memory().ReadUint64Le(s.ctl + ctlOps)
	return int64(v)
}

// HeapPeak is the most bytes QuickJS's heap held since ResetHeapPeak.
func (s *Sandbox) HeapPeak() uint64 {
	v, _ := s.mod.Memory().ReadUint32Le(s.ctl + ctlHeapPeak)
	return uint64(v)
}

// ResetHeapPeak starts HeapPeak again from the heap in use.
func (s *Sandbox) ResetHeapPeak() {
	mem := s.mod.Memory()
	used, _ := mem.ReadUint32Le(s.ctl + ctlHeapUsed)
	mem.WriteUint32Le(s.ctl+ctlHeapPeak, used)
}

// SetHeapLimit caps QuickJS's heap at n bytes, or at what the sandbox's
// memory limit allows if that is less; it reports whether n fits.
func (s *Sandbox) SetHeapLimit(n uint64) bool {
	room := s.heapRoom()
	s.mod.Memory().WriteUint32Le(s.ctl+ctlHeapLimit, uint32(min(n, room, 1<<32-1)))
	return n <= room
}

// SetMemoryLimit sets the sandbox's memory limit to n bytes, image
// included, as if it had been made with that limit (SandboxOptions): its
// linear memory grows no further (a growth refused there ends the program
// with ErrMemoryLimit), and QuickJS's heap is capped a little below it. A
// limit below the image's size plus 1 MiB is raised to that. It reports
// false, changing nothing, if n is beyond the limit the sandbox was made
// with, which reserved its memory: a sandbox of that limit must be made
// anew. A sandbox made ahead of its program gets its program's limit so.
// Not during a call. Reset, and the pool, restore the limit the sandbox
// was made with.
func (s *Sandbox) SetMemoryLimit(n uint64) bool {
	n = max(n, s.snap.ImageSize()+heapSlack)
	if n > s.made {
		return false
	}
	s.limit = n
	s.applyLimit()
	return true
}

// OutOfMemory reports whether the sandbox's out-of-memory mark is set: an
// allocation was refused for its memory limit. It is set by the engine's
// allocator, outside any program's reach, and stays set.
func (s *Sandbox) OutOfMemory() bool {
	v, _ := s.mod.Memory().ReadUint32Le(s.ctl + ctlOOM)
	return v != 0
}

// InspectStep compiles src as a step (STEP_* of shim.h), without running it, and returns
// the shim's report (qjs_inspect_step): JSON of the syntax error, or of
// the globals the step declares and names, its local bindings and its
// import() calls. Nothing runs in the realm, and no object of it is read.
// flags are StepBudget and StepSloppy, and StepKeep, which keeps the
// compiled step for the step's entry to run with StepKeep, so that a step
// is compiled once. Errors as for Eval (an out-of-memory or a
// stop spends the sandbox).
func (s *Sandbox) InspectStep(ctx context.Context, src, filename string, flags int) (string, error) {
	if err := s.ready(ctx); err != nil {
		return "", err
	}
	buf, err := s.writeSource(ctx, src, filename)
	if err != nil {
		return "", err
	}
	st := s.stack[:]
	st[0], st[1], st[2], st[3] = uint64(s.ctxPtr), uint64(buf), uint64(len(src)), uint64(buf)+uint64(len(src))+1
	st[4] = uint64(flags)
	if err := s.call(ctx, entryInspectStep, "inspect"); err != nil {
		return "", err
	}
	out := uint32(st[0]) // before free, which uses the same stack
	s.free(ctx, buf)
	if out == 0 {
		s.spent = true
		return "", ErrMemoryLimit
	}
	mem := s.mod.Memory()
	n, ok := mem.ReadUint32Le(out)
	b, ok2 := mem.Read(out+4, n)
	if !ok || !ok2 {
		s.spent = true
		return "", &TrapError{Err: errors.New("inspection out of range")}
	}
	text := string(b)
	s.free(ctx, out)
	return text, nil
}
