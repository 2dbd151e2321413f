package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/airlockrun/airlock/internal/wasmvm"
)

// A session runs many steps on one VM, as the executor does: its globals,
// tools and the bindings steps declare stay from one step to the next.

// StartSession prepares v for steps. counter and fail name the global
// lexical bindings of the loop guard: the budget of iterations the host sets
// before each step, and the function a guard calls when it is spent. The
// capturing console becomes the global console. memoryLimit bounds the heap
// for the life of the session.
func (v *VM) StartSession(counter, fail string, memoryLimit uintptr) error {
	ctx := context.Background()
	if memoryLimit > 0 {
		if err := v.setMemoryLimit(memoryLimit); err != nil {
			return err
		}
	}
	v.sess = true
	// The guard's bindings are global lexical ones: a step reaches them by
	// name (which validation keeps user code from using), they are not
	// properties of the global object, and functions that a step defines
	// and a later step calls count against the later step's budget. The
	// kernel lends its opsSpent through a global for the one script that
	// binds it.
	lend := v.key + "_spent"
	if _, err := v.sb.KernelCall(ctx, "lendOpsSpent", str(lend)); err != nil {
		return fmt.Errorf("airlock: session setup failed: %w", err)
	}
	setup := fmt.Sprintf("let %s=0,%s=globalThis[%q];delete globalThis[%q];", counter, fail, lend, lend)
	if _, err := v.sb.Eval(ctx, setup, "<session>", wasmvm.Script); err != nil {
		return fmt.Errorf("airlock: session setup failed: %w", err)
	}
	v.counter = counter
	if _, err := v.sb.KernelCall(ctx, "installConsole"); err != nil {
		return fmt.Errorf("airlock: session setup failed: %w", err)
	}
	return nil
}

var errNoSession = errors.New("airlock: the VM has no session")

// DefineTool makes host function id the read-only global name; a JSON
// function takes the JSON text of its argument list. A shown function's
// arguments are values to show or store (final_answer): functions and
// symbols in them are dropped, not a DataCloneError.
func (v *VM) DefineTool(name string, id int, json, shown bool) error {
	if !v.sess {
		return errNoSession
	}
	_, err := v.sb.KernelCall(context.Background(), "defineTool",
		str(name), num(id), wasmvm.Value{Kind: wasmvm.Bool, Bool: json}, wasmvm.Value{Kind: wasmvm.Bool, Bool: shown})
	return err
}

// DefineValue makes the value of wire text the global name.
func (v *VM) DefineValue(name, wire string) error {
	if !v.sess {
		return errNoSession
	}
	_, err := v.sb.KernelCall(context.Background(), "defineValue", str(name), str(wire))
	return err
}

// Step evaluates script, a global script whose value is a function, and
// runs that function with the global object through the kernel, with a
// budget of ops loop iterations. The outcome is as for Run; a script that
// does not compile is LinkFailed. After the step, whatever it left pending
// is dropped: the promises of its host calls never settle and its queued
// jobs are cancelled.
//
// Discarded reports that the VM cannot run another step; the session must
// then end.
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
	if _, err := v.sb.Eval(ctx, fmt.Sprintf("%s=%d", v.counter, ops), "<ops>", wasmvm.Script); err != nil {
		return v.failure(err), false
	}
	_, err := v.sb.Step(ctx, script, "<eval>")
	return v.loop(j, err), false
}

func (v *VM) setRunning(j *Job) {
	v.intrMu.Lock()
	v.running = j
	v.intrMu.Unlock()
}

// discard cancels what the last step left: the kernel forgets its pending
// host calls, and the queued jobs are dropped unrun. It reports whether
// the VM can run the next step.
func (v *VM) discard() bool {
	ctx := context.Background()
	v.sb.ClearInterrupt()
	if _, err := v.sb.KernelCall(ctx, "reset"); err != nil {
		return false
	}
	return v.sb.DropJobs(ctx) == nil
}
