package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/airlockrun/airlock/internal/wasmvm"
)

// A session runs many steps on one VM, as the executor does: its globals,
// tools and the bindings steps declare stay from one step to the next.

// StartSession prepares v for steps. The capturing console becomes the
// global console. memoryLimit bounds the heap for the life of the session.
func (v *VM) StartSession(memoryLimit uintptr) error {
	if memoryLimit > 0 {
		if err := v.setMemoryLimit(memoryLimit); err != nil {
			return err
		}
	}
	v.sess = true
	return v.installSession()
}

// installSession installs the capturing console.
func (v *VM) installSession() error {
	if _, err := v.sb.Call(context.Background(), entryInstallConsole); err != nil {
		return fmt.Errorf("airlock: session setup failed: %w", err)
	}
	return nil
}

// FinalAnswerID is the host function id of the final_answer tool that
// NewSession's VMs have defined.
const FinalAnswerID = 0

// NewSession makes a VM whose session has started, as New and
// StartSession make one, with the tool final_answer defined (host
// function FinalAnswerID, shown: DefineTool(name, FinalAnswerID, false,
// true)). It starts from a snapshot of that state, made at the first
// call: what the set-up writes is the image's, shared by every session,
// not each session's own pages (RATIONALE.md, "Idle executor memory").
func NewSession(memoryLimit uintptr) (*VM, error) {
	sn, err := sessionSnapshot()
	if err != nil {
		return nil, err
	}
	v, err := vmOf(context.Background(), sn)
	if err != nil {
		return nil, err
	}
	v.snap, v.sess = sn, true
	if memoryLimit > 0 {
		if err := v.setMemoryLimit(memoryLimit); err != nil {
			v.Close()
			return nil, err
		}
	}
	return v, nil
}

// The snapshot of a started session, made at the first NewSession.
var sessionShared struct {
	once sync.Once
	sn   *wasmvm.Snapshot
	err  error
}

// sessionPool is how many closed sessions' instances the session
// snapshot keeps, rewound, for the next sessions.
const sessionPool = wasmvm.DefaultPool

func sessionSnapshot() (*wasmvm.Snapshot, error) {
	sessionShared.once.Do(func() {
		sessionShared.sn, sessionShared.err = captureSession()
	})
	return sessionShared.sn, sessionShared.err
}

// captureSession starts a session in a VM of the shared snapshot and
// captures it. The hot pages are learned from a first step.
func captureSession() (*wasmvm.Snapshot, error) {
	ctx := context.Background()
	base, err := snapshot()
	if err != nil {
		return nil, err
	}
	v, err := vmOf(ctx, base)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	v.sess = true
	if err := v.installSession(); err != nil {
		return nil, err
	}
	if err := v.DefineTool("final_answer", FinalAnswerID, false, true); err != nil {
		return nil, fmt.Errorf("airlock: session setup failed: %w", err)
	}
	sn, err := v.sb.Capture(ctx, &wasmvm.CaptureOptions{Pool: sessionPool, Learn: func(sb *wasmvm.Sandbox) error {
		v := newVM(sb)
		v.sess = true
		j := &Job{Stop: make(chan struct{}), LogBytes: func(int, []byte) {}}
		if out, _ := v.Step(j, "return 1 + 2", -1); out.Kind != OK {
			return fmt.Errorf("airlock: a first step failed: %s", out.Message)
		}
		return nil
	}})
	if err != nil {
		return nil, fmt.Errorf("airlock: the session could not be captured: %w", err)
	}
	return sn, nil
}

var errNoSession = errors.New("airlock: the VM has no session")

// DefineTool makes host function id the read-only global name; a JSON
// function takes the JSON text of its argument list. A shown function
// (final_answer) takes its value as decoded; its arguments cross as any
// host function's do, so a function or symbol in them is a DataCloneError
// that says where it was.
func (v *VM) DefineTool(name string, id int, json, shown bool) error {
	mode := fnPlain
	switch {
	case shown:
		mode = fnShown
	case json:
		mode = fnJSON
	}
	return v.defineTool(context.Background(), name, id, mode)
}

// defineTool is ENTRY_DEFINE_TOOL, with the glue as its fourth slot when
// one is given.
func (v *VM) defineTool(ctx context.Context, name string, id, mode int, glue ...string) error {
	if !v.sess {
		return errNoSession
	}
	args := []wasmvm.Value{str(name), num(id), num(mode)}
	for _, g := range glue {
		args = append(args, str(g))
	}
	_, err := v.sb.Call(ctx, entryDefineTool, args...)
	return err
}

// DefineGluedTool makes the global name what glue (JavaScript: a
// function expression) makes of host function id: glue is called with
// the function and returns an object, whose property name becomes the
// read-only global (fetch, from the host function that does its
// requests). The host function itself is no global. The glue runs as the
// realm's code, stopped when ctx ends (the VM is then spent).
func (v *VM) DefineGluedTool(ctx context.Context, name string, id int, glue string) error {
	return v.defineTool(ctx, name, id, fnPlain, glue)
}

// DefineValueBytes makes the value encoded in the codec's binary format
// (internal/qjs/shim/codec.c) the global name. A step's global let of
// that name takes the value too (it shadows the global object's
// property); a step's const or class of that name, or a binding still in
// its temporal dead zone, is an error. name must be an identifier.
func (v *VM) DefineValueBytes(name string, encoded []byte) error {
	if !v.sess {
		return errNoSession
	}
	ctx := context.Background()
	if _, err := v.sb.Call(ctx, entryDefineValue, str(name), bytesValue(encoded)); err != nil {
		return err
	}
	if _, err := v.sb.Eval(ctx, fmt.Sprintf("%s = globalThis[%q]", name, name), "<variables>", wasmvm.Script); err != nil {
		return fmt.Errorf("a step declared %s as a constant (or its declaration failed)", name)
	}
	return nil
}

// Step evaluates script as strict global code of the session's realm, or
// sloppy with Job.Sloppy (entryStep, the shim's session_step): its top-level let, const and class stay in
// the realm's global lexical scope, its var and function declarations on
// the global object; await and return are allowed at its top level. Its
// value is what it returns, else its completion value (the last
// expression statement's). The engine counts ops operations: every loop
// body's entry and every entry into one of the session's functions (a
// call from the code or from native code, such as a forEach callback or a
// promise reaction; a constructor; the start and every resumption of an
// async function or a generator); past the budget an uncatchable error
// ends the step, wherever it is spent, and Job.OpsSpent is called. The
// outcome is as for Run; a script that does not compile is LinkFailed.
// After the step, whatever it left pending is dropped: the
// promises of its host calls never settle and its queued jobs are
// cancelled.
//
// Discarded reports that the VM cannot run another step; the session must
// then end.
//
// ops < 0 compiles the step without a budget (to measure what the budget
// costs).
func (v *VM) Step(j *Job, script string, ops int) (out Outcome, discarded bool) {
	if !v.sess {
		return Outcome{Kind: Crashed, Message: errNoSession.Error()}, true
	}
	ctx := context.Background()
	v.job = j
	v.limitHit = false
	v.sb.SetModuleHooks(v.hooks(j))
	v.sb.ClearInterrupt()
	v.sb.ResetHeapPeak()
	v.setRunning(j)
	defer func() {
		v.setRunning(nil)
		v.conclude(j, &out, recover())
		v.job = nil
		if v.abandoned {
			out, discarded = Outcome{Kind: Crashed, Message: "a host function ended its goroutine (runtime.Goexit)"}, true
			return
		}
		discarded = out.Kind == Crashed || !v.discard()
	}()
	if ops < 0 {
		v.sb.SetOpBudget(math.MaxInt64)
	} else {
		v.sb.SetOpBudget(int64(ops))
	}
	var err error
	if flags := stepFlags(ops >= 0, j.Sloppy); v.kept != "" && v.kept == script && v.keptFlags == flags {
		// compiled by PrepareStep, with its flags
		_, err = v.sb.Call(ctx, entryStep, wasmvm.Value{}, wasmvm.Value{}, num(wasmvm.StepKeep))
	} else {
		_, err = v.sb.Call(ctx, entryStep, str(script), str("<eval>"), num(flags))
	}
	v.kept = ""
	return v.loop(j, err), false
}

func (v *VM) setRunning(j *Job) {
	v.intrMu.Lock()
	v.running = j
	v.intrMu.Unlock()
}

// discard cancels what the last step left: the shim forgets its pending
// host calls, and the queued jobs are dropped unrun. It reports whether
// the VM can run the next step.
func (v *VM) discard() bool {
	ctx := context.Background()
	v.sb.ClearInterrupt()
	if _, err := v.sb.Call(ctx, entryReset); err != nil {
		return false
	}
	return v.sb.DropJobs(ctx) == nil
}

// Trim gives back what the idle VM holds and can make again: the image's
// pages its runs wrote that hold the image's bytes again, and its call
// stack (wasmvm's Sandbox.Trim). The next step pays for what it takes
// again. It returns the pages given back.
func (v *VM) Trim() int {
	if v.closed {
		return 0
	}
	return v.sb.Trim()
}
