package airlock

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlockrun/airlock/internal/codec"
	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/internal/hostcall"
	"github.com/airlockrun/airlock/internal/source"
)

// run is the state of one run, shared by the caller's goroutine, the VM's
// goroutine and the goroutines of asynchronous host calls.
type run struct {
	rt     *Runtime
	ctx    context.Context
	cancel context.CancelFunc
	opts   Options
	src    string
	exec   *Execution

	fnID     string // the selected export
	fnOpt    bool   // Execute.Fn was omitted
	input    engine.Input
	gnames   []string
	specs    []string
	exports  map[string][]string
	memLimit int64

	builtinConsole bool // the kernel makes a capturing console
	consoleIndex   int  // its place among the globals

	funcs hostcall.Funcs
	// host is the host side of the run's calls: its functions, console,
	// budget and stop.
	host *hostcall.Host
	mu   sync.Mutex
	logs []Log

	settleOnce sync.Once
	unwatch    func() bool       // stops watching the caller's context
	timeout    *time.Timer       // Options.Timeout, stopped when the run settles
	yielding   []string          // globals a module's own binding replaces
	glue       map[string]string // globals made by JavaScript (source.Config.Glue)
	stopStatus Status            // the host's decision (halt)
	stopMsg    string
	vm         atomic.Pointer[engine.VM]
	// paid is the error whose texts came from the sandbox and were paid
	// from the budget, for a worker process to tell its host.
	paid atomic.Pointer[ScriptError]
}

// newRun makes the run of src with opts, which Runtime.Run validated.
func (rt *Runtime) newRun(ctx context.Context, src string, opts Options) (*run, error) {
	if opts.Filename == "" {
		opts.Filename = "<runCode>"
	}
	if opts.Language == TypeScript && !engine.Started() {
		// The run will wait for the engine's start-up (a process's first
		// runs): its entry's TypeScript is transformed meanwhile, on another
		// goroutine, instead of after it (RATIONALE.md, "The entry is
		// transformed while the engine starts").
		source.Pretransform(opts.Filename, src)
	}
	fnOpt := opts.Execute.Fn == ""
	if fnOpt {
		opts.Execute.Fn = "default"
	}
	r := &run{
		fnOpt:    fnOpt,
		rt:       rt,
		opts:     opts,
		src:      src,
		fnID:     opts.Execute.Fn,
		memLimit: opts.MemoryLimitBytes,
		exec:     &Execution{done: make(chan struct{})},
	}
	if r.memLimit == 0 {
		r.memLimit = rt.cfg.MemoryLimitBytes
	}
	r.exec.job = r
	r.exec.span = claimRunSpan(ctx) // trace.go
	h := hostcall.NewHost(rt.cfg.MaxAsyncCalls)
	h.Funcs, h.Limit, h.Spent, h.Results = &r.funcs, rt.cfg.MaxValueBytes, errRunBudgetSpent, r.funcs.Register
	h.OnPanic = func(err error) { r.halt(StatusError, err.Error()) }
	h.Logs = (*runLogs)(r)
	h.Interrupt = func() {
		if vm := r.vm.Load(); vm != nil {
			vm.Interrupt()
		}
	}
	// A host function that does not return keeps the VM's goroutine; the
	// run settles at the stop, and the call is abandoned to finish on its
	// own.
	h.Abandon = func() {
		res := &Result{}
		r.stoppedResult(res)
		r.settle(res)
	}
	h.Ended = r.exec.done
	h.Budget.Init(rt.cfg.MaxValueBytes)
	r.host = h
	var err error
	if len(opts.Execute.Args) > 0 {
		if r.input.Args, err = codec.AppendBinary(nil, opts.Execute.Args, r.funcs.Register); err != nil {
			return nil, fmt.Errorf("airlock: Execute.Args: %w", err)
		}
	}

	if len(opts.Globals) == 0 {
		// Only the built-in console and report: their names are known, and
		// nothing is encoded unless report is not host function 0.
		r.builtinConsole, r.consoleIndex, r.yielding = true, 0, reportYielding
		r.gnames = builtinNames
		r.input.Globals, r.input.Report = builtinGlobals, 1
		enc, err := r.builtinReport()
		if err != nil {
			return nil, fmt.Errorf("airlock: Globals[%q]: %w", "report", err)
		}
		if enc != nil {
			r.input.Globals, r.input.Report = [][]byte{nil, enc}, -1
		}
	} else if err := r.encodeGlobals(); err != nil {
		return nil, err
	}

	if len(opts.Imports) > 0 {
		r.specs = sortedKeys(opts.Imports)
		r.exports = make(map[string][]string, len(r.specs))
		mods := make([]any, len(r.specs))
		for i, s := range r.specs {
			m := opts.Imports[s]
			r.exports[s] = sortedKeys(m)
			mods[i] = map[string]any(m)
		}
		if r.input.Imports, err = codec.AppendBinary(nil, mods, r.funcs.Register); err != nil {
			return nil, fmt.Errorf("airlock: Imports: %w", err)
		}
	}
	// The run's context is cancelled when it settles or is stopped; host
	// functions get it.
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	h.Ctx = r.ctx
	if ctx.Done() != nil {
		r.unwatch = context.AfterFunc(ctx, func() {
			r.halt(StatusTerminated, contextMessage(ctx))
		})
	}
	if d := opts.Timeout; d > 0 {
		r.timeout = time.AfterFunc(d, func() { r.halt(StatusTerminated, timeoutMessage(d)) })
	}
	return r, nil
}

// The globals of a run given none: the built-in console (made by the
// shim) and report (host function 0), in sorted order. builtinGlobals
// is their input, which the engine only reads: nothing is encoded, the
// shim puts its console and report at their places.
var (
	builtinNames   = []string{"console", "report"}
	builtinGlobals = [][]byte{nil, nil}
)

// encodeGlobals encodes the run's globals, the built-in console and report
// among them unless the caller gave its own.
func (r *run) encodeGlobals() error {
	opts := &r.opts
	var err error
	globals := make(map[string]any, len(opts.Globals)+2)
	for k, v := range opts.Globals {
		globals[k] = v
	}
	if _, ok := globals["console"]; !ok {
		globals["console"] = nil // made by the shim; see runLogs
		r.builtinConsole = true
	}
	if _, ok := globals["report"]; !ok {
		// The built-in report yields to a module's own binding of the name
		// (an import of a bridged report, say), so that its presence does
		// not break a program written before it was always there.
		globals["report"] = nil // encoded by builtinReport
		r.yielding = reportYielding
	}
	// Each global is encoded on its own; two globals that share a Go
	// object arrive as two copies.
	r.gnames = sortedKeys(globals)
	r.input.Globals, r.input.Report = make([][]byte, len(r.gnames)), -1
	for i, n := range r.gnames {
		if n == "console" {
			r.consoleIndex = i
		}
		switch {
		case n == "console" && r.builtinConsole: // the shim's, not encoded
		case n == "report" && r.yielding != nil:
			var enc []byte
			if enc, err = r.builtinReport(); enc == nil && err == nil {
				r.input.Report = i
			}
			r.input.Globals[i] = enc
		default:
			v, glue, ok := unglue(globals[n])
			if ok {
				if r.glue == nil {
					r.glue = map[string]string{}
				}
				r.glue[n] = glue
			}
			r.input.Globals[i], err = codec.AppendBinary(nil, v, r.funcs.Register)
		}
		if err != nil {
			return fmt.Errorf("airlock: Globals[%q]: %w", n, err)
		}
	}
	return nil
}

var reportYielding = []string{"report"}

// builtinReport registers the run's built-in report and returns its
// encoding, or nil for the usual id, 0 (no function among the arguments),
// which the shim knows without decoding: it keeps the function made with
// the image (Input.Report). Encoding a function through reflection
// was a tenth of a warm run's time before the engine was entered, and
// decoding it in the sandbox ~6 µs of a warm hello's.
func (r *run) builtinReport() ([]byte, error) {
	id := r.funcs.Add(hostcall.NewShown(func(v any) { r.report(v) }))
	if id == 0 {
		return nil, nil
	}
	return codec.AppendBinary(nil, hostcall.ShownFunc(func(any) {}), func(reflect.Value) (int, error) { return id, nil })
}

// halt decides how the run ends, once: the decision is sticky whatever the
// JavaScript does next. The host side stops the VM (hostcall.Host.Stop).
func (r *run) halt(status Status, msg string) {
	r.host.Stop(func() {
		r.stopStatus, r.stopMsg = status, msg
		r.cancel()
	})
}

// terminate is Execution.Terminate's.
func (r *run) terminate(msg string) { r.halt(StatusTerminated, msg) }

// execute runs on the VM's goroutine and settles the Execution.
//
// It reports whether the worker prepares another VM (Runtime.wantIdle) or
// else, once this one is closed, runs a run that waits if any
// (Runtime.closed1). It claims either before it yields to the caller: a
// run that comes while this VM is torn down waits for the worker
// (Runtime.assign).
func (r *run) execute(vm *engine.VM, vmErr error) (again bool) {
	res := &Result{}
	defer func() {
		goexit := res.Status == ""
		if goexit {
			// Only runtime.Goexit in a host function leaves the run without
			// an outcome: the VM's goroutine ends under it.
			res.Status = StatusError
			res.Error = &ScriptError{Name: "Error", Message: hostcall.ErrGoexit}
		}
		r.settle(res)
		again = !goexit && r.rt.wantIdle()
		// The caller that waits is now runnable on this goroutine's P, where
		// it would wait behind the VM's teardown; let it run first.
		runtime.Gosched()
		if vm != nil {
			vm.Close() // after settling: tearing down the heap is not the caller's wait
		}
	}()
	if vmErr != nil {
		res.Status = StatusError
		res.Error = &ScriptError{Name: "Error", Message: "airlock: the sandbox could not be created: " + vmErr.Error()}
		return
	}
	r.vm.Store(vm)
	var cap *time.Timer
	if d := r.rt.cfg.MaxDuration; d > 0 {
		cap = time.AfterFunc(d, func() { r.halt(StatusTerminated, capMessage(d)) })
		defer cap.Stop()
	}
	graph := source.New(source.Config{
		Key:           vm.Key(),
		GlobalsModule: vm.GlobalsModule(),
		ImportsExport: engine.ImportsExport,
		Filename:      r.opts.Filename,
		Source:        r.src,
		Lang:          source.Language(r.opts.Language),
		Modules:       r.opts.Modules,
		Imports:       r.exports,
		Order:         r.specs,
		Globals:       r.gnames,
		Yielding:      r.yielding,
		Glue:          r.glue,
		Stop:          r.host.StopCh(),
	})
	input := r.input
	if graph.Bare() {
		input.Globals = nil
	}
	console := -1
	if r.builtinConsole {
		console = r.consoleIndex
	}
	job := &engine.Job{
		Entry:       graph.Entry(),
		Fn:          r.fnID,
		FnOptional:  r.fnOpt,
		Input:       &input,
		GlobalNames: r.gnames,
		MemoryLimit: uintptr(r.memLimit),
		Resolve:     graph.Resolve,
		Load:        graph.Load,
		Fallback:    graph.Fallback,
		URL:         graph.URL,
		Console:     console,
	}
	r.host.Job(job)
	out := vm.Run(job)
	r.finish(res, out, graph)
	return // again is set by the deferred settle
}

// The texts of a run whose budget for values crossing to the host
// (RuntimeConfig.MaxValueBytes) its console or its reports used up, in
// process and in a worker process alike.
const (
	logsSpentMessage    = "the run's budget for values crossing to the host is used up by console output"
	reportsSpentMessage = "the run's budget for values crossing to the host is used up by reports"
)

var errRunBudgetSpent = errors.New("airlock: the run's budget for values crossing between the sandbox and the host (RuntimeConfig.MaxValueBytes) is used up")

var logLevels = [...]LogLevel{LevelLog, LevelInfo, LevelWarn, LevelError, LevelDebug}

// runLogs is where a run's console calls go (hostcall.LogSink): its
// Result's Logs and Options.Log.
type runLogs run

func (*runLogs) Wants(int) bool { return true }

func (l *runLogs) Log(level int, args []any) {
	r := (*run)(l)
	e := Log{Level: logLevels[level], Args: args, Time: time.Now()}
	r.mu.Lock()
	r.logs = append(r.logs, e)
	r.mu.Unlock()
	if r.opts.Log != nil {
		r.opts.Log(e)
	}
}

func (l *runLogs) Spent() {
	(*run)(l).halt(StatusError, logsSpentMessage)
}

// The texts of a run the host stopped, in process and in a worker
// process alike.

// timeoutMessage is the error message of a run stopped by Options.Timeout.
func timeoutMessage(d time.Duration) string {
	return fmt.Sprintf("terminated: stopped after %s (Options.Timeout)", d)
}

// contextMessage is the error message of a run stopped by its context.
func contextMessage(ctx context.Context) string {
	return "terminated: " + context.Cause(ctx).Error()
}

// capMessage is the error message of a run stopped by the runtime's
// safety cap (RuntimeConfig.MaxDuration).
func capMessage(d time.Duration) string {
	return fmt.Sprintf("terminated: the runtime's safety cap of %s was reached", d)
}

func (r *run) report(v any) {
	if !r.host.Budget.Spend(hostcall.EntryCost + approxSize(v)) {
		r.halt(StatusError, reportsSpentMessage)
		return
	}
	r.exec.mu.Lock()
	r.exec.reports = append(r.exec.reports, v)
	r.exec.mu.Unlock()
	if r.opts.Report != nil {
		r.opts.Report(v)
	}
}

// approxSize is a cheap lower bound of a primitive's encoded size; encoded
// values were already counted as the call's arguments.
func approxSize(v any) int {
	if s, ok := v.(string); ok {
		return len(s)
	}
	return 8
}

var missingExportRE = regexp.MustCompile(`^Could not find export '(.*)' in module '(.*)'$`)

// finish turns the engine's outcome into the Result. A stop the host
// decided wins over whatever the JavaScript did.
func (r *run) finish(res *Result, out engine.Outcome, g *source.Graph) {
	res.MemoryUsedBytes = out.PeakHeap
	select {
	case <-r.host.StopCh():
		r.stoppedResult(res)
		return
	default:
	}
	// A run in which the engine refused an allocation for the memory limit
	// settles memory, whatever the program did afterwards (it may have
	// caught the error and finished). The status comes from the engine's
	// state, never from error text. A crash stays a crash.
	if out.LimitHit && out.Kind != engine.Crashed {
		res.Status = StatusMemory
		res.Error = &ScriptError{Name: "MemoryError", Message: fmt.Sprintf("the memory limit of %d bytes was exceeded", r.memLimit)}
		return
	}
	switch out.Kind {
	case engine.OK:
		v, err := r.host.Budget.Value(out, r.rt.cfg.MaxValueBytes)
		if err != nil {
			res.Status = StatusError
			res.Error = &ScriptError{Name: "RangeError", Message: err.Error()}
			return
		}
		res.Status = StatusSuccess
		res.Result = v
	case engine.Thrown:
		res.Status = StatusError
		res.Error = r.scriptError(out, g)
		payError(&r.host.Budget, res.Error)
		r.paid.Store(res.Error)
	case engine.LinkFailed:
		res.Status = StatusLinkError
		res.Error = r.linkError(out, g)
		if g.Failure == nil { // the engine's error, not the loader's
			payError(&r.host.Budget, res.Error)
			r.paid.Store(res.Error)
		}
	case engine.ExportMissing:
		res.Status = StatusLinkError
		res.Error = &ScriptError{Name: "LinkError", Message: fmt.Sprintf("the module has no export '%s'", r.fnID),
			Specifier: r.opts.Filename, Filename: r.opts.Filename}
	case engine.Deadlock:
		res.Status = StatusError
		res.Error = &ScriptError{Name: "Error", Message: "the program is waiting for a promise that can never settle: nothing in the sandbox or on the host is left to settle it"}
	case engine.Stopped:
		res.Status = StatusTerminated
		res.Error = &ScriptError{Name: "TerminatedError", Message: "terminated"}
	default:
		res.Status = StatusError
		res.Error = &ScriptError{Name: "InternalError", Message: "airlock: the sandbox failed"}
	}
}

// stoppedResult is the outcome of a run the host stopped: its decision.
func (r *run) stoppedResult(res *Result) {
	res.Status = r.stopStatus
	res.Error = &ScriptError{Name: "Error", Message: r.stopMsg}
	if r.stopStatus == StatusTerminated {
		res.Error.Name = "TerminatedError"
	}
}

func (r *run) scriptError(out engine.Outcome, g *source.Graph) *ScriptError {
	e := &ScriptError{Name: out.Name, Message: out.Message}
	if e.Name == "" {
		e.Name = "Error"
	}
	stack, top := g.MapStack(out.Stack)
	e.Stack = stack
	if top != nil {
		e.Filename, e.Line, e.Column = top.Display, top.Line, top.Col
	} else if out.FileName != "" {
		if d, l, c, ok := g.Position(out.FileName, out.Line, out.Column); ok {
			e.Filename, e.Line, e.Column = d, l, c
		}
	}
	return e
}

func (r *run) linkError(out engine.Outcome, g *source.Graph) *ScriptError {
	if f := g.Failure; f != nil {
		e := &ScriptError{Name: "LinkError", Message: f.Message, Specifier: f.Specifier}
		if f.Display != "" {
			e.Name = "SyntaxError"
			e.Filename, e.Line, e.Column = f.Display, f.Line, f.Col
		}
		return e
	}
	e := &ScriptError{Name: out.Name, Message: out.Message}
	if out.FileName != "" {
		if d, l, c, ok := g.Position(out.FileName, out.Line, out.Column); ok {
			e.Filename, e.Line, e.Column = d, l, c
			if f, ok := g.File(out.FileName); ok {
				e.Specifier = f.Specifier
			}
		}
	}
	if m := missingExportRE.FindStringSubmatch(out.Message); m != nil {
		e.Name = "LinkError"
		e.Specifier = g.SpecifierOf(m[2])
		e.Message = fmt.Sprintf("'%s' has no export named '%s'", e.Specifier, m[1])
	}
	if e.Name == "" {
		e.Name = "LinkError"
	}
	return e
}

// settle publishes the result and ends the run, once: on the VM's
// goroutine when the run ends there, or on halt's when the host stopped the
// run while a synchronous host call held the VM. The run's context is
// cancelled and its asynchronous calls closed: host functions still running
// are abandoned, to finish on their own, and their results discarded.
func (r *run) settle(res *Result) {
	r.settleOnce.Do(func() {
		if r.unwatch != nil {
			r.unwatch()
		}
		if r.timeout != nil {
			r.timeout.Stop()
		}
		r.cancel()
		r.host.Close()
		res.Duration = time.Since(r.exec.start)
		clipError(res.Error)
		r.mu.Lock()
		res.Logs = r.logs[:len(r.logs):len(r.logs)]
		r.mu.Unlock()
		if res.Logs == nil {
			res.Logs = []Log{}
		}
		res.Reports = r.exec.Reports()
		r.exec.result = res
		r.exec.span.end(res)
		close(r.exec.done)
	})
}
