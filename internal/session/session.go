// Package session is an executor's sandbox: one VM owned by one goroutine,
// which runs the tasks sent to it in order, and the host side of a step
// run there (its calls, console, budget and stop, and the outcome made
// into an output or an error). airlock.Executor keeps the lifecycle, the
// queue and the public types; it hands a session plain values and a
// validation of its own (Step.Prepare), and turns an *Error into an
// *airlock.ExecutorError.
package session

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/airlockrun/airlock/internal/clip"
	"github.com/airlockrun/airlock/internal/codec"
	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/internal/hostcall"
	"github.com/airlockrun/airlock/internal/inspect"
)

// The executor's error codes a session gives (airlock.ErrorCode, whose
// constants are the same strings: TestSessionCodes).
const (
	CodeValidationFailed = "ERR_VALIDATION_FAILED"
	CodeMaxOpsExceeded   = "ERR_MAX_OPS_EXCEEDED"
	CodeExecTimeout      = "ERR_EXEC_TIMEOUT"
	CodeRuntimeException = "ERR_RUNTIME_EXCEPTION"
	CodeToolProxyFail    = "ERR_TOOL_PROXY_FAIL"
	CodeMemoryLimit      = "ERR_MEMORY_LIMIT_EXCEEDED"
	CodeInvalidArgument  = "ERR_INVALID_ARGUMENT"
	CodeInterrupted      = "ERR_INTERRUPTED"
)

// ReservedPrefix starts the executor's own identifiers; a step may not
// use one.
const ReservedPrefix = "__smol_"

// Error is a step's failure, or a refused variable or tool: the root makes
// it an *airlock.ExecutorError of Code.
type Error struct {
	Code    string
	Details map[string]any
	Message string
	Logs    string
	Entries []Entry
	Err     error
	// Syntax is set when the engine refused to compile a step that
	// validation took (CodeValidationFailed): the root makes its
	// diagnostic.
	Syntax *Syntax
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Syntax is the engine's syntax error in a step, at a place in the step.
type Syntax struct {
	Message      string
	Line, Column int
}

func newError(code string, details map[string]any, format string, args ...any) *Error {
	return &Error{Code: code, Details: details, Message: fmt.Sprintf(format, args...)}
}

// Output is the outcome of a step that did not fail.
type Output struct {
	Value   any
	Logs    string
	Final   bool
	Entries []Entry
}

// Entry is one console call of a step: its level ("log", "info", "warn",
// "error"; debug is log) and its line.
type Entry struct {
	Level   string
	Message string
	Time    time.Time
}

// Config is what a session keeps for its life.
type Config struct {
	MemoryLimitBytes  int64
	AuthorizedImports []string
	// Modules are Go values by module name, SourceModules ES modules'
	// source: what authorized imports resolve to.
	Modules       map[string]map[string]any
	SourceModules map[string]string
}

// Step is one step's code and limits.
type Step struct {
	// Prepare validates the step with the engine's inspection, on the
	// session's goroutine, and gives the script to run and the map of its
	// positions to the step's; or the error that refuses the step, handed
	// back as it is. inspect compiles js, strict or sloppy, and keeps it
	// for the run (the last one inspected is the one run). When stop
	// closes, the host's work for it is abandoned.
	Prepare func(stop <-chan struct{}, inspect func(js string, sloppy bool) (*engine.Inspection, error)) (script string, position func(line, col int) (int, int), err error)
	// MaxOperations is the step's budget; negative: none.
	MaxOperations int
	Timeout       time.Duration
	Sloppy        bool
	MaxLogBytes   int
	// Levels are the console methods whose calls are kept.
	Levels []string
	// ValueBytes bounds what crosses in the step.
	ValueBytes int
	// Log, when set, is given each console call the step keeps, as it is
	// made (on the goroutine that made it: the VM's, or an asynchronous
	// tool's).
	Log func(Entry)
}

// TruncatedMark ends the logs of a step that wrote more than MaxLogBytes.
const TruncatedMark = "...[TRUNCATED]"

// MaxErrorText bounds each text of an exception (engine.MaxErrorText).
const MaxErrorText = engine.MaxErrorText

// Session is an executor's sandbox: one VM owned by one goroutine, which
// runs the tasks sent to it in order.
type Session struct {
	tasks chan func(*engine.VM)
	done  chan struct{} // closed when the goroutine has closed the VM

	// funcs are the session's functions, kept from step to step; the
	// rest is touched on the VM's goroutine only.
	funcs   hostcall.Funcs
	names   []string          // the tool name of each function, "" for others
	glues   map[string]string // the glue of each tool sent, "" for none
	modules map[string]string
	memory  int64 // the VM's memory limit
	cur     *step
	// running is the step being run, for Interrupt.
	running atomic.Pointer[step]
	// preparing is set while a step is validated and compiled, before it
	// runs; interruptPending, when Interrupt came then. Both under
	// interruptMu, with the store of running.
	interruptMu      sync.Mutex
	preparing        bool
	interruptPending bool
	// abandoned is set once a step returned while a tool call held the
	// VM: the goroutine ends when that call returns.
	abandoned atomic.Bool
}

// finalAnswerID is the host function id of final_answer.
const finalAnswerID = engine.FinalAnswerID

// modulePrefix names the modules authorized imports resolve to.
const modulePrefix = "airlock:module:"

// Start creates and hardens the VM on a new goroutine.
func Start(ctx context.Context, cfg Config) (*Session, error) {
	// A done context fails the start before anything is made: a session
	// from the pool can be ready at once, and select would then choose
	// between the two at random.
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	s := &Session{tasks: make(chan func(*engine.VM)), done: make(chan struct{}), modules: map[string]string{}, memory: cfg.MemoryLimitBytes}
	ready := make(chan error, 1)
	go func() {
		defer close(s.done)
		vm, err := engine.NewSession(uintptr(cfg.MemoryLimitBytes))
		if err == nil {
			if err = s.setup(vm, cfg); err != nil {
				vm.Close()
			}
		}
		ready <- err
		if err != nil {
			return
		}
		defer vm.Close()
		s.serve(vm)
	}()
	select {
	case err := <-ready:
		if err != nil {
			return nil, err
		}
		return s, nil
	case <-ctx.Done():
		go func() {
			if <-ready == nil {
				close(s.tasks)
			}
		}()
		return nil, context.Cause(ctx)
	}
}

// idleTrim is how long a session waits without a task before it gives
// back what its VM holds and can make again (engine's VM.Trim): an agent's
// steps come seconds apart, and the step after a trim pays for the pages
// it writes again (RATIONALE.md, "Idle executor memory").
// Nanoseconds; atomic, for the tests that set it.
var idleTrim atomic.Int64

func init() { idleTrim.Store(int64(time.Second)) }

// SetIdleTrim sets how long a session waits idle before it trims its VM,
// for the tests, and returns a function that restores it.
func SetIdleTrim(d time.Duration) func() {
	old := idleTrim.Swap(int64(d))
	return func() { idleTrim.Store(old) }
}

// serve runs the tasks sent to the session until the channel closes, and
// trims the VM once the session has been idle for idleTrim.
func (s *Session) serve(vm *engine.VM) {
	d := time.Duration(idleTrim.Load())
	idle := time.NewTimer(d)
	defer idle.Stop()
	for {
		select {
		case f, ok := <-s.tasks:
			if !ok {
				return
			}
			f(vm)
			idle.Reset(d)
		case <-idle.C:
			vm.Trim()
		}
	}
}

// setup registers final_answer (the VM has it defined: engine.NewSession)
// and defines the modules, on the VM's goroutine. final_answer keeps its
// value as the step's answer and stops the step.
func (s *Session) setup(vm *engine.VM, cfg Config) error {
	s.funcs.Add(hostcall.NewShown(func(v any) {
		if st := s.cur; st != nil {
			st.final = v
			st.halt(stopFinal, nil)
		}
	}))
	s.names = []string{""}
	for i, spec := range slices.Sorted(maps.Keys(cfg.Modules)) {
		if !slices.Contains(cfg.AuthorizedImports, spec) {
			continue
		}
		m := cfg.Modules[spec]
		hidden := fmt.Sprintf("%smod_%d", ReservedPrefix, i)
		enc, err := codec.AppendBinary(nil, m, s.register(""))
		if err != nil {
			return fmt.Errorf("module %q: %w", spec, err)
		}
		if err := vm.DefineValueBytes(hidden, enc); err != nil {
			return fmt.Errorf("module %q: %w", spec, err)
		}
		var src strings.Builder
		fmt.Fprintf(&src, "const m = globalThis[%q]; delete globalThis[%q]; Object.freeze(m);\n", hidden, hidden)
		for j, k := range slices.Sorted(maps.Keys(m)) {
			fmt.Fprintf(&src, "const v%d = m[%s]; export { v%d as %s };\n", j, strconv.Quote(k), j, strconv.Quote(k))
		}
		if _, ok := m["default"]; !ok {
			src.WriteString("export default m;\n")
		}
		s.modules[modulePrefix+spec] = src.String()
	}
	for spec, src := range cfg.SourceModules {
		if !slices.Contains(cfg.AuthorizedImports, spec) {
			continue
		}
		if _, dup := s.modules[modulePrefix+spec]; dup {
			return fmt.Errorf("module %q is both a Go module and a source module", spec)
		}
		s.modules[modulePrefix+spec] = src
	}
	return nil
}

// register returns a registrar that gives functions ids in the session.
func (s *Session) register(name string) codec.Registrar {
	return func(v reflect.Value) (int, error) {
		id, err := s.funcs.Register(v)
		if err == nil {
			s.names = append(s.names, name)
		}
		return id, err
	}
}

// Do runs f on the VM's goroutine and waits for it.
func (s *Session) Do(ctx context.Context, f func(*engine.VM) error) error {
	errc := make(chan error, 1)
	task := taskOf(f, errc)
	select {
	case s.tasks <- task:
	case <-s.done:
		return errClosed
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return <-errc
}

// taskOf is f as a task of the session's goroutine, which sends f's error,
// or its panic, to errc.
func taskOf(f func(*engine.VM) error, errc chan<- error) func(*engine.VM) {
	return func(vm *engine.VM) {
		returned := false
		defer func() {
			if p := recover(); p != nil {
				errc <- fmt.Errorf("airlock: %v", p)
			} else if !returned { // runtime.Goexit: this goroutine, and the session, end
				errc <- errors.New("airlock: " + hostcall.ErrGoexit)
			}
		}()
		err := f(vm)
		returned = true
		errc <- err
	}
}

// errClosed is the error of a task sent to a session that has ended.
var errClosed = errors.New("the sandbox is closed")

// errStepStopped is doUntil's error when stop closed first.
var errStepStopped = errors.New("airlock: the step was stopped")

// doUntil runs f on the VM's goroutine and waits for it, or for stop,
// whichever comes first: at stop it returns errStepStopped and f runs on,
// its results not to be read. The session must then be left DIRTY.
func (s *Session) doUntil(stop <-chan struct{}, f func(*engine.VM) error) error {
	errc := make(chan error, 1)
	task := taskOf(f, errc)
	select {
	case s.tasks <- task:
	case <-s.done:
		return errClosed
	case <-stop:
		return errStepStopped
	}
	select {
	case err := <-errc:
		return err
	case <-stop:
		select {
		case err := <-errc: // it ended as the stop came
			return err
		default:
			return errStepStopped
		}
	}
}

// SendVariables defines each variable as a global, a deep copy; check
// refuses a name.
func (s *Session) SendVariables(ctx context.Context, vars map[string]any, check func(name string) error) error {
	encs := make(map[string][]byte, len(vars))
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		if err := check(name); err != nil {
			return err
		}
		// Variables are data: a function among them would be a tool.
		enc, err := codec.AppendBinary(nil, vars[name], func(reflect.Value) (int, error) {
			return 0, errors.New("a variable cannot hold a function; send it with SendTools")
		})
		if err != nil {
			return newError(CodeInvalidArgument, map[string]any{"variable": name}, "Invalid argument: variable %q: %v", name, err)
		}
		encs[name] = enc
	}
	return s.Do(ctx, func(vm *engine.VM) error {
		for _, name := range slices.Sorted(maps.Keys(encs)) {
			if err := vm.DefineValueBytes(name, encs[name]); err != nil {
				return newError(CodeInvalidArgument, map[string]any{"variable": name}, "Invalid argument: variable %q: %v", name, err)
			}
		}
		return nil
	})
}

// SendTools makes each tool a global function; check refuses a name. A
// tool named in glue is made by that JavaScript from its function
// (engine.VM.DefineGluedTool); a name keeps its kind, glued by the same
// glue or not, once sent.
func (s *Session) SendTools(ctx context.Context, tools map[string]any, glue map[string]string, check func(name string) error) error {
	for _, name := range slices.Sorted(maps.Keys(tools)) {
		if err := check(name); err != nil {
			return err
		}
		v := reflect.ValueOf(tools[name])
		if !hostcall.IsBridged(v) {
			return newError(CodeInvalidArgument, map[string]any{"tool": name}, "Invalid argument: tool %q is not a function but %T", name, tools[name])
		}
		if _, err := hostcall.New(v); err != nil {
			return newError(CodeInvalidArgument, map[string]any{"tool": name}, "Invalid argument: tool %q: %v", name, err)
		}
	}
	return s.Do(ctx, func(vm *engine.VM) error {
		for _, name := range slices.Sorted(maps.Keys(tools)) {
			if was, ok := s.glues[name]; ok && was != glue[name] {
				return newError(CodeInvalidArgument, map[string]any{"tool": name}, "Invalid argument: tool %q was sent as another kind of tool before (a fetch, timers or a function stay what they were)", name)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(tools)) {
			v := reflect.ValueOf(tools[name])
			id, err := s.register(name)(v)
			if err == nil {
				if g, ok := glue[name]; ok {
					err = vm.DefineGluedTool(ctx, name, id, g)
				} else {
					err = vm.DefineTool(name, id, hostcall.IsJSON(v), false)
				}
			}
			if err != nil {
				return newError(CodeInvalidArgument, map[string]any{"tool": name}, "Invalid argument: tool %q: %v", name, err)
			}
			if s.glues == nil {
				s.glues = map[string]string{}
			}
			s.glues[name] = glue[name]
		}
		return nil
	})
}

// Close ends the goroutine, which closes the VM. It does not wait for a
// VM held by a tool call that a step abandoned: that one is closed when
// the call returns, which may be never.
func (s *Session) Close(ctx context.Context) error {
	select {
	case <-s.done:
		return nil
	default:
	}
	// The goroutine may still run a step that was stopped; the channel is
	// closed once, by the one Cleanup that took the session.
	close(s.tasks)
	if s.abandoned.Load() {
		return nil
	}
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the sandbox did not stop before the context ended: %w", context.Cause(ctx))
	}
}

// stopReason is why the host stopped a step.
type stopReason int

const (
	stopNone stopReason = iota
	stopFinal
	stopOps
	stopTimeout
	stopContext
	stopInterrupt
)

// step is the state of one step, shared by the caller's goroutine, the
// VM's goroutine and the goroutines of asynchronous tool calls.
type step struct {
	s    *Session
	opts *Step
	// host is the host side of the step's calls: the session's functions,
	// the step's console, budget and stop. A step stopped for its time
	// while a synchronous tool call holds the VM returns at once.
	host   *hostcall.Host
	reason stopReason
	cause  error
	final  any
	ended  chan struct{} // closed when the VM has finished the step
	cancel func()        // ends the context of the step's tools

	mu      sync.Mutex
	logs    strings.Builder
	entries []Entry
	cut     bool
	// terminal is set once the step must stop for good (its time, its
	// context), whatever stopped it first.
	terminal atomic.Bool
	vm       atomic.Pointer[engine.VM]
	job      atomic.Pointer[engine.Job]
}

// newStep makes the state of a step whose tools get ctx.
func (s *Session) newStep(ctx context.Context, opts *Step) *step {
	st := &step{s: s, opts: opts, ended: make(chan struct{})}
	h := hostcall.NewHost(0)
	h.Funcs, h.Ctx, h.Limit, h.Spent = &s.funcs, ctx, opts.ValueBytes, codec.ErrTooLarge
	// A tool's results are data: a function among them cannot cross. A
	// tool that panics fails like one that returns an error (OnPanic nil).
	h.Results = func(reflect.Value) (int, error) { return 0, errors.New("a tool cannot return a function") }
	h.Logs = (*stepLogs)(st)
	h.Interrupt = func() {
		if vm, j := st.vm.Load(), st.job.Load(); vm != nil && j != nil {
			vm.InterruptJob(j, st.terminal.Load())
		}
	}
	h.Ended = st.ended
	h.Budget.Init(opts.ValueBytes)
	st.host = h
	return st
}

// Interrupt stops the step being run, if any, as its operation budget
// would stop it, keeping the session: its tools' context ends, and the
// step ends at its next operation, or when a tool in flight returns. It
// reports whether a step was running.
func (s *Session) Interrupt() bool {
	s.interruptMu.Lock()
	st := s.running.Load()
	if st == nil {
		// A step being prepared stops before it runs.
		s.interruptPending = s.interruptPending || s.preparing
		pending := s.interruptPending
		s.interruptMu.Unlock()
		return pending
	}
	s.interruptMu.Unlock()
	st.halt(stopInterrupt, nil)
	st.cancel()
	return true
}

// halt stops the step for a reason, once (hostcall.Host.Stop).
func (st *step) halt(r stopReason, cause error) {
	if r == stopTimeout || r == stopContext {
		// Also after a final answer or a spent budget stopped the step:
		// those stop its bytecode only, and a native call in flight
		// then runs on until the time stops it for good.
		st.terminal.Store(true)
	}
	st.host.Stop(func() { st.reason, st.cause = r, cause })
}

// stepResult is what the VM's goroutine hands back.
type stepResult struct {
	out       engine.Outcome
	discarded bool
}

// Run runs one step. dirty reports that the executor must become DIRTY.
func (s *Session) Run(ctx context.Context, opts *Step) (_ *Output, dirty bool, _ error) {
	ops := opts.MaxOperations
	// The session's engine validates the step and keeps what it compiled
	// for the run: a step is compiled once. The step's time (one deadline
	// for its validation and its run) and its context bound the
	// validation too: the compile stops the VM for good, as a step's stop
	// would, and the host's scan and erasure of the step are abandoned.
	var script string
	var position func(int, int) (int, int)
	var refused error
	deadline := time.Now().Add(opts.Timeout)
	cctx, ccancel := context.WithDeadline(ctx, deadline)
	defer ccancel()
	s.interruptMu.Lock()
	s.preparing, s.interruptPending = true, false
	s.interruptMu.Unlock()
	defer func() {
		s.interruptMu.Lock()
		s.preparing, s.interruptPending = false, false
		s.interruptMu.Unlock()
	}()
	if err := s.doUntil(cctx.Done(), func(vm *engine.VM) error {
		script, position, refused = opts.Prepare(cctx.Done(), func(js string, sloppy bool) (*engine.Inspection, error) { return vm.PrepareStep(cctx, js, ops, sloppy) })
		return nil
	}); err != nil && err != errStepStopped {
		return nil, true, newError(CodeRuntimeException, nil, "Runtime exception: %s", err)
	}
	if cctx.Err() != nil {
		if ctx.Err() != nil { // the caller's context, not the step's time
			cause := context.Cause(ctx)
			e := newError(CodeExecTimeout, map[string]any{"cause": cause.Error()}, "Execution timed out after %dms: %s", opts.Timeout.Milliseconds(), cause)
			e.Err = cause
			return nil, true, e
		}
		return nil, true, timeoutError(opts.Timeout)
	}
	if refused != nil {
		return nil, false, refused
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	st := s.newStep(runCtx, opts)
	st.cancel = cancel
	s.interruptMu.Lock()
	interrupted := s.interruptPending
	s.preparing, s.interruptPending = false, false
	if !interrupted {
		s.running.Store(st)
	}
	s.interruptMu.Unlock()
	if interrupted { // while the step was prepared: it does not run
		return nil, false, newError(CodeInterrupted, nil, "Execution interrupted")
	}
	defer s.running.CompareAndSwap(st, nil)
	timer := time.AfterFunc(time.Until(deadline), func() { st.halt(stopTimeout, nil) })
	defer timer.Stop()
	if ctx.Done() != nil {
		stopWatch := context.AfterFunc(ctx, func() { st.halt(stopContext, context.Cause(ctx)) })
		defer stopWatch()
	}
	results := make(chan stepResult, 1)
	task := func(vm *engine.VM) {
		defer close(st.ended)
		sent := false
		defer func() {
			if !sent { // runtime.Goexit in a tool: the session's goroutine ends
				results <- stepResult{engine.Outcome{Kind: engine.Crashed, Message: hostcall.ErrGoexit}, true}
			}
		}()
		st.vm.Store(vm)
		s.cur = st
		defer func() { s.cur = nil }()
		job := &engine.Job{
			Resolve:  s.resolve,
			Load:     s.load,
			OpsSpent: func() { st.halt(stopOps, nil) },
			Sloppy:   opts.Sloppy,
		}
		st.host.Job(job)
		st.job.Store(job)
		out, discarded := vm.Step(job, script, ops)
		sent = true
		results <- stepResult{out, discarded}
	}
	select {
	case s.tasks <- task:
	case <-s.done:
		return nil, true, newError(CodeRuntimeException, nil, "Runtime exception: %s", errClosed)
	}
	// abandon leaves the VM to a call that has not returned: the session
	// is dirty, and its goroutine ends when the call returns.
	abandon := func() (*Output, bool, error) {
		cancel()
		st.host.Close()
		s.abandoned.Store(true)
		return nil, true, st.stopError(st.logText())
	}
	var res stepResult
	select {
	case res = <-results:
	case <-st.host.StopCh():
		// A tool call that does not return is abandoned at once: the
		// session is left dirty, never to run another step. A native call
		// that polls for no interrupt may keep the VM a while; the caller
		// gets the host's decision after a grace period.
		if (st.reason == stopTimeout || st.reason == stopContext) && st.host.InCall() {
			return abandon()
		}
		// An interrupted step's tools were told (their context ended):
		// one that returns lets the step end with the session kept.
		select {
		case res = <-results:
		case <-time.After(time.Second):
			return abandon()
		}
	}
	cancel()
	st.host.Close()
	return st.finish(res, position)
}

// stopError is the error of a step the host stopped for a limit.
func (st *step) stopError(logs string) *Error {
	var e *Error
	switch st.reason {
	case stopOps:
		e = newError(CodeMaxOpsExceeded, map[string]any{"maxOperations": st.opts.MaxOperations}, "Max operations exceeded (%d)", st.opts.MaxOperations)
	case stopInterrupt:
		e = newError(CodeInterrupted, nil, "Execution interrupted")
	case stopContext:
		e = newError(CodeExecTimeout, map[string]any{"cause": st.cause.Error()}, "Execution timed out after %dms: %s", st.opts.Timeout.Milliseconds(), st.cause)
		e.Err = st.cause
	default:
		e = timeoutError(st.opts.Timeout)
	}
	e.Logs, e.Entries = logs, st.logEntries()
	return e
}

// timeoutError is the error of a step that ran out of its time d.
func timeoutError(d time.Duration) *Error {
	return newError(CodeExecTimeout, map[string]any{"timeoutMs": d.Milliseconds()}, "Execution timed out after %dms", d.Milliseconds())
}

// finish turns the engine's outcome into the step's output or error.
func (st *step) finish(res stepResult, position func(int, int) (int, int)) (*Output, bool, error) {
	out := res.out
	logs := st.logText()
	dirty := res.discarded
	fail := func(code string, details map[string]any, format string, args ...any) (*Output, bool, error) {
		e := newError(code, details, format, args...)
		e.Logs, e.Entries = logs, st.logEntries()
		return nil, dirty, e
	}
	failText := func(code string, details map[string]any, text string) (*Output, bool, error) {
		e := newError(code, details, "")
		e.Message, e.Logs, e.Entries = text, logs, st.logEntries()
		return nil, dirty, e
	}
	select {
	case <-st.host.StopCh():
		switch st.reason {
		case stopFinal:
			return &Output{Value: st.final, Logs: logs, Final: true, Entries: st.entries}, dirty, nil
		case stopOps:
			return nil, dirty, st.stopError(logs)
		case stopInterrupt:
			if out.Kind == engine.Stopped {
				return nil, dirty, st.stopError(logs)
			}
			// It came after the step had ended: the step's own outcome.
		default:
			return nil, true, st.stopError(logs)
		}
	default:
	}
	if out.LimitHit {
		dirty = true // the state the steps keep may be what fills the heap
		return fail(CodeMemoryLimit, map[string]any{"limitBytes": st.s.memory},
			"Memory limit exceeded: the sandbox's limit of %d bytes was reached", st.s.memory)
	}
	switch out.Kind {
	case engine.OK:
		v, err := st.host.Budget.Value(out, st.opts.ValueBytes)
		if err != nil {
			return fail(CodeRuntimeException, map[string]any{"name": "DataCloneError", "message": err.Error()}, "Runtime exception: %s", err)
		}
		return &Output{Value: v, Logs: logs, Entries: st.entries}, dirty, nil
	case engine.Thrown:
		// The error's texts, cut in the sandbox, are paid for once, and
		// held once: Details' name and message are the text of Message.
		name, msg := st.host.Budget.PayText(clip.Chars(out.Name, MaxErrorText)), st.host.Budget.PayText(clip.Chars(out.Message, MaxErrorText))
		out.Stack = st.host.Budget.PayText(out.Stack)
		if out.FromHost && out.HostFunc != finalAnswerID && out.HostFunc < len(st.s.names) {
			text := "Tool execution failed: " + msg
			msg = text[len(text)-len(msg):]
			details := st.exceptionDetails(name, msg, out.Stack, position)
			details["tool"] = st.s.names[out.HostFunc]
			details["cause"] = msg
			return failText(CodeToolProxyFail, details, text)
		}
		text := "Runtime exception: " + msg
		if name != "" && name != "Error" {
			text = "Runtime exception: " + name + ": " + msg
			name = text[len("Runtime exception: ") : len("Runtime exception: ")+len(name)]
		}
		msg = text[len(text)-len(msg):]
		return failText(CodeRuntimeException, st.exceptionDetails(name, msg, out.Stack, position), text)
	case engine.LinkFailed: // the engine refused what the parser took
		line, col := position(out.Line, out.Column)
		text := "Code validation failed: " + st.host.Budget.PayText(clip.Chars(out.Message, MaxErrorText))
		e := newError(CodeValidationFailed, nil, "")
		e.Message, e.Syntax = text, &Syntax{Message: text[len("Code validation failed: "):], Line: line, Column: col}
		return nil, dirty, e
	case engine.Deadlock:
		return fail(CodeRuntimeException, map[string]any{"name": "Error"},
			"Runtime exception: the code waits for a promise that nothing can settle")
	default:
		dirty = true
		return fail(CodeRuntimeException, map[string]any{"name": "InternalError", "message": out.Message},
			"Runtime exception: the sandbox failed: %s", out.Message)
	}
}

// exceptionDetails describes a thrown error, with its positions in the
// step's code.
func (st *step) exceptionDetails(name, message, stack string, position func(int, int) (int, int)) map[string]any {
	d := map[string]any{"name": name, "message": message}
	stack, line, col := mapStepStack(stack, position)
	if stack != "" {
		d["stack"] = stack
	}
	if line > 0 {
		d["line"], d["column"] = line, col
	}
	return d
}

// mapStepStack keeps the frames of the step's code, with positions in the
// step, and returns the position of the first.
func mapStepStack(stack string, position func(int, int) (int, int)) (string, int, int) {
	var lines []string
	first, firstCol := 0, 0
	for _, l := range strings.Split(stack, "\n") {
		i := strings.Index(l, "<eval>:")
		if i < 0 {
			if m := strings.TrimSpace(l); strings.HasPrefix(m, "... [truncated ") {
				lines = append(lines, "    "+m) // the sandbox cut the frames after it
			}
			continue
		}
		pos := l[i+len("<eval>:"):]
		end := strings.IndexByte(pos, ')')
		if end >= 0 {
			pos = pos[:end]
		}
		parts := strings.Split(pos, ":")
		ln, _ := strconv.Atoi(parts[0])
		cn := 1
		if len(parts) > 1 {
			cn, _ = strconv.Atoi(parts[1])
		}
		ln, cn = position(ln, cn)
		if first == 0 {
			first, firstCol = ln, cn
		}
		lines = append(lines, l[:i]+"<code>:"+strconv.Itoa(ln)+":"+strconv.Itoa(cn)+l[i+len("<eval>:")+len(pos):])
	}
	return strings.Join(lines, "\n"), first, firstCol
}

// resolve resolves a dynamic import: only authorized modules exist.
func (s *Session) resolve(_, spec string) (string, error) {
	name := modulePrefix + spec
	if _, ok := s.modules[name]; ok {
		return name, nil
	}
	return "", fmt.Errorf("module %q is not available", spec)
}

func (s *Session) load(name string) (string, error) {
	if src, ok := s.modules[name]; ok {
		return src, nil
	}
	return "", fmt.Errorf("module %q is not available", strings.TrimPrefix(name, modulePrefix))
}

// stepLogs is where a step's console calls go (hostcall.LogSink): the
// levels Step.Levels names (ExecutorOptions.CollectConsoleLevels), formatted as Node's
// console formats them, within MaxLogBytes; past it, or past the budget,
// the logs are cut.
type stepLogs step

// levels are the console's methods, by the index the engine gives.
var levels = [...]string{"log", "info", "warn", "error", "debug"}

// stepLevel is console method level's name in a step, where debug is log.
func stepLevel(level int) string {
	if lv := levels[level]; lv != "debug" {
		return lv
	}
	return "log"
}

func (l *stepLogs) Wants(level int) bool {
	st := (*step)(l)
	if !slices.Contains(st.opts.Levels, stepLevel(level)) {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return !st.cut
}

func (l *stepLogs) Spent() { (*step)(l).truncate() }

func (l *stepLogs) Log(level int, args []any) {
	st := (*step)(l)
	msg := logMessage(args)
	st.mu.Lock()
	defer st.mu.Unlock()
	sep := 0
	if st.logs.Len() > 0 {
		sep = 1
	}
	room := st.opts.MaxLogBytes - st.logs.Len() - sep
	if len(msg) > room {
		msg = cutUTF8(msg, max(room, 0))
		st.cut = true
	}
	if sep == 1 && (msg != "" || !st.cut) {
		st.logs.WriteByte('\n')
	}
	st.logs.WriteString(msg)
	if st.cut {
		st.logs.WriteString(TruncatedMark)
	}
	e := Entry{Level: stepLevel(level), Message: msg, Time: time.Now()}
	st.entries = append(st.entries, e)
	if st.opts.Log != nil {
		st.opts.Log(e)
	}
}

// truncate marks the logs as cut when nothing more fits.
func (st *step) truncate() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.cut {
		st.cut = true
		st.logs.WriteString(TruncatedMark)
	}
}

// logEntries are the console calls kept so far.
func (st *step) logEntries() []Entry {
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Clone(st.entries)
}

func (st *step) logText() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.logs.String()
}

// cutUTF8 cuts s to at most n bytes, at a character boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// logMessage formats console arguments as one line, as Node's console
// does: strings as they are, other values as airlock.Inspect shows them,
// joined by spaces.
func logMessage(args []any) string { return inspect.Line(args, nil) }
