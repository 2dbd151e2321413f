package airlock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/internal/source"
	"github.com/airlockrun/airlock/internal/wasmvm"
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
	args     string // wire texts
	globals  string
	imports  string
	gnames   []string
	specs    []string
	exports  map[string][]string
	memLimit int64

	builtinConsole bool // the kernel makes a capturing console
	consoleIndex   int  // its place among the globals

	mu     sync.Mutex
	funcs  atomic.Pointer[[]*hostFunc] // copied on write: read without the lock
	logs   []Log
	budget byteBudget // for values crossing between sandbox and host
	async  *asyncCalls

	// inCall is set while the VM's goroutine is in a synchronous host
	// call; stopped is set by halt before it closes stop. Each side sets
	// its own flag before it reads the other's, so that a call that starts
	// as the run is stopped is either refused or seen, and abandoned.
	inCall     atomic.Bool
	stopped    atomic.Bool
	settleOnce sync.Once

	unwatch    func() bool // stops watching the caller's context
	timeout    *time.Timer // Options.Timeout, stopped when the run settles
	yielding   []string    // globals a module's own binding replaces
	stop       chan struct{}
	stopOnce   sync.Once
	stopStatus Status
	stopMsg    string
	vm         atomic.Pointer[engine.VM]
	// paid is the error whose texts came from the sandbox and were paid
	// from the budget, for a worker process to tell its host.
	paid atomic.Pointer[ScriptError]
}

func (rt *Runtime) newRun(ctx context.Context, src string, opts Options) (*run, error) {
	if err := validate(&opts); err != nil {
		return nil, err
	}
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
		async:    newAsyncCalls(rt.cfg.MaxAsyncCalls),
		stop:     make(chan struct{}),
		exec:     &Execution{done: make(chan struct{})},
	}
	r.budget.init(rt.cfg.MaxValueBytes)
	if r.memLimit == 0 {
		r.memLimit = rt.cfg.MemoryLimitBytes
	}
	r.exec.r = r
	var err error
	if len(opts.Execute.Args) == 0 {
		r.args = emptyArray
	} else if r.args, err = encodeWire(opts.Execute.Args, r.register); err != nil {
		return nil, fmt.Errorf("airlock: Execute.Args: %w", err)
	}

	if len(opts.Globals) == 0 {
		// Only the built-in console and report: their names and texts are
		// known, unless report is not host function 0.
		r.builtinConsole, r.consoleIndex, r.yielding = true, 0, reportYielding
		text, err := r.builtinReport()
		if err != nil {
			return nil, fmt.Errorf("airlock: Globals[%q]: %w", "report", err)
		}
		r.gnames = builtinNames
		r.globals = builtinGlobals
		if text != builtinReportText {
			b, _ := json.Marshal([]string{consoleText, text})
			r.globals = string(b)
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
		if r.imports, err = encodeWire(mods, r.register); err != nil {
			return nil, fmt.Errorf("airlock: Imports: %w", err)
		}
	} else {
		r.imports = emptyArray
	}
	// The run's context is cancelled when it settles or is stopped; host
	// functions get it.
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if ctx.Done() != nil {
		r.unwatch = context.AfterFunc(ctx, func() {
			r.halt(StatusTerminated, "terminated: "+context.Cause(ctx).Error())
		})
	}
	if d := opts.Timeout; d > 0 {
		r.timeout = time.AfterFunc(d, func() { r.halt(StatusTerminated, timeoutMessage(d)) })
	}
	return r, nil
}

// The globals of a run given none: the built-in console (made by the
// kernel, its text null) and report (host function 0), in sorted order.
var builtinNames = []string{"console", "report"}

const (
	consoleText    = "Jnull"
	builtinGlobals = `["` + consoleText + `","` + builtinReportText + `"]`
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
		globals["console"] = nil // made by the kernel; see run.log
		r.builtinConsole = true
	}
	if _, ok := globals["report"]; !ok {
		// The built-in report yields to a module's own binding of the name
		// (an import of a bridged report, say), so that its presence does
		// not break a program written before it was always there.
		globals["report"] = nil // encoded by builtinReport
		r.yielding = reportYielding
	}
	// Each global is encoded on its own, so that data globals take the plain
	// JSON path even when other globals are functions; two globals that share
	// a Go object arrive as two copies.
	r.gnames = sortedKeys(globals)
	texts := make([]string, len(r.gnames))
	for i, n := range r.gnames {
		if n == "console" {
			r.consoleIndex = i
		}
		if n == "report" && r.yielding != nil {
			texts[i], err = r.builtinReport()
		} else {
			texts[i], err = encodeWire(globals[n], r.register)
		}
		if err != nil {
			return fmt.Errorf("airlock: Globals[%q]: %w", n, err)
		}
	}
	b, _ := json.Marshal(texts)
	r.globals = string(b)
	return nil
}

var reportYielding = []string{"report"}

// builtinReport registers the run's built-in report and returns its wire
// text. For the usual id, 0 (no function among the arguments), the text is
// "R", which the kernel knows without decoding: it keeps the function made
// with the image (bootstrap.js). Encoding a function through reflection
// was a tenth of a warm run's time before the engine was entered, and
// decoding it in the kernel ~6 µs of a warm hello's.
func (r *run) builtinReport() (string, error) {
	f := shownFunc(func(v any) { r.report(v) })
	h := &hostFunc{fn: reflect.ValueOf(f), params: []reflect.Type{typeAny},
		fast: func(args []any) (any, error) { f(argAt(args, 0)); return Undefined{}, nil }}
	id := r.add(h)
	if id == 0 {
		return builtinReportText, nil
	}
	return encodeWire(shownFunc(func(any) {}), func(reflect.Value) (int, error) { return id, nil })
}

// builtinReportText is the global text of the built-in report as host
// function 0.
const builtinReportText = "R"

// add appends h to the run's host functions and returns its id.
func (r *run) add(h *hostFunc) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var funcs []*hostFunc
	if p := r.funcs.Load(); p != nil {
		funcs = *p
	}
	funcs = append(funcs[:len(funcs):len(funcs)], h)
	r.funcs.Store(&funcs)
	return len(funcs) - 1
}

// register gives a Go function an id the sandbox can call.
func (r *run) register(v reflect.Value) (int, error) {
	h, err := newHostFunc(v)
	if err != nil {
		return 0, err
	}
	return r.add(h), nil
}

// halt decides how the run ends, once: the decision is sticky whatever the
// JavaScript does next. It stops the VM, and keeps interrupting it until it
// has stopped, since the engine forgets an interrupt that arrives between
// two calls into it.
func (r *run) halt(status Status, msg string) {
	r.stopOnce.Do(func() {
		r.stopStatus, r.stopMsg = status, msg
		r.stopped.Store(true)
		close(r.stop)
		r.cancel()
		go func() {
			if r.inCall.Load() {
				// A host function that does not return keeps the VM's
				// goroutine; the run settles now, and the call is
				// abandoned to finish on its own (see run.call).
				res := &Result{}
				r.stoppedResult(res)
				r.settle(res)
				return
			}
			t := time.NewTicker(2 * time.Millisecond)
			defer t.Stop()
			for {
				if vm := r.vm.Load(); vm != nil {
					vm.Interrupt()
				}
				select {
				case <-r.exec.done:
					return
				case <-t.C:
				}
			}
		}()
	})
}

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
			res.Error = &ScriptError{Name: "Error", Message: errGoexit}
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
		cap = time.AfterFunc(d, func() {
			r.halt(StatusTerminated, fmt.Sprintf("terminated: the runtime's safety cap of %s was reached", d))
		})
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
		Stop:          r.stop,
	})
	globals := r.globals
	if graph.Bare() {
		globals = ""
	}
	console := -1
	if r.builtinConsole {
		console = r.consoleIndex
	}
	job := &engine.Job{
		Entry:       graph.Entry(),
		Fn:          r.fnID,
		FnOptional:  r.fnOpt,
		Args:        r.args,
		Globals:     globals,
		GlobalNames: r.gnames,
		Imports:     r.imports,
		MemoryLimit: uintptr(r.memLimit),
		Resolve:     graph.Resolve,
		Load:        graph.Load,
		Fallback:    graph.Fallback,
		URL:         graph.URL,
		Console:     console,
		Call:        r.answer,
		Log:         r.log,
		Stop:        r.stop,
	}
	r.async.job(job)
	out := vm.Run(job)
	r.finish(res, out, graph)
	return // again is set by the deferred settle
}

// answer is engine.Job.Call: it runs a host function for the sandbox, on
// the VM's goroutine, and writes its reply to rep.
func (r *run) answer(id int, in []engine.Arg, wire string, encoded bool, rep *engine.Reply) {
	if r.stopped.Load() { // set before r.stop is closed
		*rep = stoppedReply
		return
	}
	var h *hostFunc
	if p := r.funcs.Load(); p != nil && id >= 0 && id < len(*p) {
		h = (*p)[id]
	}
	switch {
	case h == nil:
		*rep = engine.Reply{Kind: engine.ReplyError, Value: "airlock: unknown host function"}
	case h.typed != nil && !encoded && !h.async:
		r.callTyped(h, in, rep)
	default:
		*rep = r.call(h, in, wire, encoded)
	}
}

// call is answer for any other host function h: its arguments decoded.
func (r *run) call(h *hostFunc, in []engine.Arg, wire string, encoded bool) engine.Reply {
	args, err := callArgs(in, wire, encoded, r.budget.spend, errRunBudgetSpent, r.rt.cfg.MaxValueBytes)
	if err != nil {
		return engine.Reply{Kind: engine.ReplyError, Value: err.Error()}
	}
	if h.async {
		return r.async.start(func() engine.Reply { return r.invoke(h, args) })
	}
	if !r.begin() {
		return stoppedReply
	}
	// Called directly, not through a closure: one the asynchronous branch
	// may keep would be allocated for every synchronous call too.
	rep := r.invoke(h, args)
	if !r.end() {
		return stoppedReply
	}
	return rep
}

// stoppedReply is a host call's answer once its run is stopped.
var stoppedReply = engine.Reply{Kind: engine.ReplyError, Value: "the run was stopped"}

// begin marks a synchronous host call under way (inCall: halt then
// settles the run without waiting for the VM), and reports false, the
// call not to be made, if the run was stopped.
func (r *run) begin() bool {
	r.inCall.Store(true)
	if r.stopped.Load() {
		r.inCall.Store(false)
		return false
	}
	return true
}

// end marks the call begun done, and reports false if the run was
// stopped meanwhile: it may have settled without the call, whose answer
// is discarded, and the VM, stopped for good, is interrupted here, since
// nothing else interrupts it any more.
func (r *run) end() bool {
	r.inCall.Store(false)
	if r.stopped.Load() {
		if vm := r.vm.Load(); vm != nil {
			vm.Interrupt()
		}
		return false
	}
	return true
}

// callTyped is answer for a synchronous function of numbers, strings and
// booleans (hostFunc.typed): it takes the primitives as the engine typed
// them, no []any, and writes a number, boolean or empty answer as it came
// into rep, field by field: a Reply returned and copied whole cost the
// processor a stall at each copy (it is larger than Go keeps in registers).
func (r *run) callTyped(h *hostFunc, in []engine.Arg, rep *engine.Reply) {
	// The answer's 8 bytes are paid with the arguments: one update of
	// the budget for a call that answers a number.
	if !r.budget.spend(argCost(in) + 8) {
		*rep = engine.Reply{Kind: engine.ReplyError, Value: errRunBudgetSpent.Error()}
		return
	}
	if !r.begin() {
		*rep = stoppedReply
		return
	}
	v, err, panicked := h.callTyped(in)
	if panicked {
		r.halt(StatusError, err.Error())
	}
	// A string answer's text is paid here (typedReply's work for UTF-8,
	// without its closures).
	plain := err == nil && (v.Kind != wasmvm.String ||
		utf8.ValidString(v.Text) && (v.Text == "" || r.budget.spend(len(v.Text))))
	if err != nil {
		*rep = r.reply(nil, err)
	} else if !plain {
		*rep = typedReply(v, r.register, r.budget.spend, errRunBudgetSpent)
	}
	if !r.end() {
		*rep = stoppedReply
		return
	}
	if plain {
		rep.Kind, rep.Arg = engine.ReplyArg, v
	}
}

// invoke calls host function h with args and makes its reply; a panic in
// it ends the run with an error.
func (r *run) invoke(h *hostFunc, args []any) engine.Reply {
	v, err, panicked := h.call(r.ctx, args)
	if panicked {
		r.halt(StatusError, err.Error())
	}
	return r.reply(v, err)
}

var errRunBudgetSpent = errors.New("airlock: the run's budget for values crossing between the sandbox and the host (RuntimeConfig.MaxValueBytes) is used up")

var logLevels = [...]LogLevel{LevelLog, LevelInfo, LevelWarn, LevelError, LevelDebug}

// log records a call of the capturing console: level is an index into
// logLevels, wire the encoded arguments.
func (r *run) log(level int, wire string) {
	if level < 0 || level >= len(logLevels) || r.stopped.Load() {
		return
	}
	if !r.budget.spend(16 + wireCost(wire)) {
		r.halt(StatusError, "the run's budget for values crossing to the host is used up by console output")
		return
	}
	v, err := decodeWire(wire, r.rt.cfg.MaxValueBytes)
	args, _ := v.([]any)
	if err != nil || args == nil {
		args = []any{}
	}
	l := Log{Level: logLevels[level], Args: args, Time: time.Now()}
	r.mu.Lock()
	r.logs = append(r.logs, l)
	r.mu.Unlock()
	if r.opts.Log != nil {
		r.opts.Log(l)
	}
}

// timeoutMessage is the error message of a run stopped by Options.Timeout.
func timeoutMessage(d time.Duration) string {
	return fmt.Sprintf("terminated: stopped after %s (Options.Timeout)", d)
}

func (r *run) report(v any) {
	if !r.budget.spend(16 + approxSize(v)) {
		r.halt(StatusError, "the run's budget for values crossing to the host is used up by reports")
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
// values were already counted as wire text.
func approxSize(v any) int {
	if s, ok := v.(string); ok {
		return len(s)
	}
	return 8
}

// emptyArray is the wire text of [], which the kernel knows without decoding.
const emptyArray = `J[]`

var missingExportRE = regexp.MustCompile(`^Could not find export '(.*)' in module '(.*)'$`)

// finish turns the engine's outcome into the Result. A stop the host
// decided wins over whatever the JavaScript did.
func (r *run) finish(res *Result, out engine.Outcome, g *source.Graph) {
	res.MemoryUsedBytes = out.PeakHeap
	select {
	case <-r.stop:
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
		v, err := r.budget.value(out, r.rt.cfg.MaxValueBytes)
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
		r.budget.payError(res.Error)
		r.paid.Store(res.Error)
	case engine.LinkFailed:
		res.Status = StatusLinkError
		res.Error = r.linkError(out, g)
		if g.Failure == nil { // the engine's error, not the loader's
			r.budget.payError(res.Error)
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
		r.async.close()
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
		close(r.exec.done)
	})
}
