package engine

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"modernc.org/quickjs"
)

// A session runs many steps on one VM, as the executor does: its globals,
// tools and the bindings steps declare stay from one step to the next.
type session struct {
	exec, reset, defineTool, defineValue, setOps quickjs.Value
}

// StartSession prepares v for steps. counter and fail name the global
// lexical bindings of the loop guard: the budget of iterations the host sets
// before each step, and the function a guard calls when it is spent. The
// capturing console becomes the global console. memoryLimit bounds the heap
// for the life of the session.
func (v *VM) StartSession(counter, fail string, memoryLimit uintptr) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("airlock: session setup failed: %v", p)
		}
	}()
	s := &session{}
	for name, dst := range map[string]*quickjs.Value{
		"exec": &s.exec, "reset": &s.reset, "defineTool": &s.defineTool, "defineValue": &s.defineValue,
	} {
		if *dst, err = v.method(name); err != nil {
			return err
		}
	}
	// The guard's bindings are global lexical ones: a step reaches them by
	// name (which validation keeps user code from using), they are not
	// properties of the global object, and functions that a step defines
	// and a later step calls count against the later step's budget.
	setup, err := v.vm.EvalValue(fmt.Sprintf("let %s=0,%s;(f)=>{%s=f;return(n)=>{%s=n}}", counter, fail, fail, counter), quickjs.EvalGlobal)
	if err != nil {
		return err
	}
	defer setup.Free()
	spent, err := v.method("opsSpent")
	if err != nil {
		return err
	}
	defer spent.Free()
	if s.setOps, err = setup.CallValue(quickjs.UndefinedValue, spent); err != nil {
		return err
	}
	var install quickjs.Value
	if install, err = v.method("installConsole"); err != nil {
		return err
	}
	defer install.Free()
	if _, err := install.Call(v.kernel); err != nil {
		return err
	}
	if memoryLimit > 0 {
		v.setMemoryLimit(memoryLimit)
	}
	v.sess = s
	return nil
}

// method reads a method of the kernel.
func (v *VM) method(name string) (quickjs.Value, error) {
	atom, err := v.vm.NewAtom(name)
	if err != nil {
		return quickjs.Value{}, err
	}
	return v.kernel.GetPropertyValue(atom)
}

func (s *session) free() {
	for _, f := range []quickjs.Value{s.exec, s.reset, s.defineTool, s.defineValue, s.setOps} {
		f.Free()
	}
}

var errNoSession = errors.New("airlock: the VM has no session")

// DefineTool makes host function id the read-only global name; a JSON
// function takes the JSON text of its argument list. A shown function's
// arguments are values to show or store (final_answer): functions and
// symbols in them are dropped, not a DataCloneError.
func (v *VM) DefineTool(name string, id int, json, shown bool) error {
	if v.sess == nil {
		return errNoSession
	}
	_, err := v.sess.defineTool.Call(v.kernel, name, id, json, shown)
	return err
}

// DefineValue makes the value of wire text the global name.
func (v *VM) DefineValue(name, wire string) error {
	if v.sess == nil {
		return errNoSession
	}
	_, err := v.sess.defineValue.Call(v.kernel, name, wire)
	return err
}

// Step evaluates script, a global script whose value is a function, and
// runs that function with the global object through the kernel, with a
// budget of ops loop iterations. The outcome is as for Run; a script that
// does not compile is LinkFailed. After the step, whatever it left pending
// is dropped: the promises of its host calls never settle and its queued
// jobs are cancelled.
//
// Discarded reports that the step left more queued work than the VM could
// cancel; the session must then end.
func (v *VM) Step(j *Job, script string, ops int) (out Outcome, discarded bool) {
	if v.sess == nil {
		return Outcome{Kind: Crashed, Message: errNoSession.Error()}, true
	}
	v.job = j
	v.setRunning(j)
	v.alloc.limitHit = false
	v.alloc.peak = v.HeapBytes()
	defer func() {
		v.setRunning(nil)
		v.conclude(j, &out, recover())
		v.job = nil
		if v.abandoned { // runtime.Goexit from a host function: the engine may run nothing more
			out, discarded = Outcome{Kind: Crashed, Message: "a host function ended its goroutine (runtime.Goexit)"}, true
			return
		}
		discarded = out.Kind == Crashed || !v.discard()
	}()
	if _, err := v.sess.setOps.Call(quickjs.UndefinedValue, ops); err != nil {
		return engineFailure(err), false
	}
	fn, err := v.vm.EvalValue(script, quickjs.EvalGlobal)
	if err != nil {
		o := engineFailure(err)
		var e *quickjs.Error
		if errors.As(err, &e) {
			o.FileName, o.Line, o.Column = e.FileName, e.LineNumber, e.ColumnNumber
		}
		if o.Name == "SyntaxError" {
			o.Kind = LinkFailed
		}
		return o, false
	}
	defer fn.Free()
	_, err = v.sess.exec.Call(v.kernel, fn)
	return v.loop(j, err), false
}

func (v *VM) setRunning(j *Job) {
	v.intrMu.Lock()
	v.running = j
	v.intrMu.Unlock()
}

// maxDiscard bounds the jobs a step may leave queued.
const maxDiscard = 1 << 16

// discard cancels what the last step left: the kernel forgets its pending
// host calls, and each queued job runs only to its first check for an
// interrupt, which the eval timeout of a nanosecond makes fire. Promise
// jobs that call no function end there; the rest end at once. It reports
// whether the queue emptied.
func (v *VM) discard() bool {
	if _, err := v.sess.reset.Call(v.kernel); err != nil {
		return false
	}
	_ = v.vm.SetEvalTimeout(time.Nanosecond)
	defer func() { _ = v.vm.SetEvalTimeout(0) }()
	for range maxDiscard {
		v.intrMu.Lock()
		if v.ctx != nil {
			atomic.StoreInt32(&v.ctx.Finterrupt_counter, 0)
		}
		v.intrMu.Unlock()
		n, _ := v.vm.ExecutePendingJobs()
		if n == 0 {
			return true
		}
	}
	return false
}
