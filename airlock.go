package airlock

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/internal/source"
	"github.com/airlockrun/airlock/internal/worker"
)

// Language is the language of the entry source.
type Language int

const (
	// TypeScript source has its types erased before it runs; type errors are
	// ignored and only syntax errors stop the run. The default.
	TypeScript Language = iota
	// JavaScript source runs as it is.
	JavaScript
)

// String returns "typescript" or "javascript".
func (l Language) String() string {
	if l == JavaScript {
		return "javascript"
	}
	return "typescript"
}

// Module is a bridged module: its named exports, and its default export at
// the key "default". Values cross as described in the package documentation.
type Module map[string]any

// Execute selects the export that becomes the result.
type Execute struct {
	// Fn names the export. "" means the default export, and then a module
	// without one succeeds with an undefined result, as a module that only
	// reports does; a named export that is missing, "default" included, is a
	// link error.
	Fn string
	// Args are passed if the export is a function. They must be empty if it
	// is not.
	Args []any
}

// MaxSourceBytes bounds one source: a run's entry source, each of its
// Options.Modules, an executor step's code. A larger entry or imported
// module settles the run StatusLinkError, a larger step is refused with
// ERR_VALIDATION_FAILED (rule code_size), before anything reads them.
// 4 MiB holds any program a model writes and the bundled libraries one
// passes in Modules, and bounds what the host spends on one source:
// erasing 4 MiB of TypeScript takes esbuild a few seconds and ~330 MB
// (SECURITY.md, "Bounds").
const MaxSourceBytes = source.MaxBytes

// Options configure one run. The zero value runs the default export of a
// TypeScript module that can reach nothing of the host.
type Options struct {
	// Execute selects the export to run; the zero value is the default export.
	Execute Execute
	// Imports are the bridged modules, by bare specifier ("fs", "@scope/pkg").
	// Nothing else of the host can be imported.
	Imports map[string]Module
	// Modules are more source modules, by relative specifier from the
	// module graph root ("./helpers.js", "./lib/math.ts"), or by package
	// name ("lodash", "@scope/pkg"), which is how code imports them; a
	// package without an extension in its name is JavaScript. A name ending
	// in ".json", or imported with { type: "json" }, is a JSON module: its
	// default export is the parsed text. Each, as the
	// entry source, holds at most MaxSourceBytes: a module past it that the
	// program imports is a link error.
	Modules map[string]string
	// Globals are identifiers bound at the module scope of every source
	// module, never on globalThis. A "console" here replaces the capturing
	// console, and then Result.Logs stays empty.
	Globals map[string]any
	// Language of the entry source; the zero value is TypeScript. A module in
	// Modules is TypeScript or JavaScript by its extension, else this.
	Language Language
	// MemoryLimitBytes caps the sandbox heap, and the sandbox's whole
	// memory at it plus about 8 MiB (README, "What the memory limit
	// covers"); 0 means the Runtime's default.
	MemoryLimitBytes int64
	// Filename names the entry source in errors and stack traces, and relative
	// imports of the entry resolve from it; "" means "<runCode>".
	Filename string
	// Report, when set, is given each value the program passes to the
	// built-in report function, synchronously on the goroutine that runs the
	// sandbox (in worker-process mode, on the goroutine that reads the
	// worker), so the program waits for it: return quickly. The report
	// global is installed whether or not Report is set, unless Globals has a
	// "report" of its own; the values are kept in Result.Reports either way.
	Report func(value any)
	// Log, when set, is given each console call of the capturing console as
	// it is made, in order, synchronously on the goroutine that runs the
	// sandbox (in worker-process mode, on the goroutine that reads the
	// worker): the program waits for it, so it must return quickly, handing
	// slow work (a network send) to a goroutine or queue of its own. The
	// Log's Args are shared with Result.Logs: do not modify them. nil, the
	// zero value, calls nothing; the calls are kept in Result.Logs either
	// way. Not called when Globals has a "console" of its own, nor after the
	// run is stopped.
	Log func(Log)
	// Timeout bounds the run's wall time from the call of Run: past it the
	// run settles StatusTerminated with "stopped after <Timeout>
	// (Options.Timeout)" in its message, as Execution.Terminate does. 0, the
	// zero value, means no bound beyond the context's and the Runtime's
	// safety cap (RuntimeConfig.MaxDuration), which still applies when it is
	// shorter. Negative is an error from Run.
	Timeout time.Duration
}

// RuntimeConfig holds the defaults and limits of a Runtime. The zero value
// gives every default.
type RuntimeConfig struct {
	// MemoryLimitBytes is the memory limit of a run that sets none (see
	// Options.MemoryLimitBytes); 0 means 256 MiB.
	MemoryLimitBytes int64
	// MaxDuration is the safety cap on a run's wall time: past it the run
	// settles terminated, with a message that says so. 0 means 30 s; a
	// negative value disables the cap.
	MaxDuration time.Duration
	// Prepared is how many sandboxes are kept created and hardened ahead of
	// the runs that will use them, each for one run only. 0 means 2; a
	// negative value prepares none.
	Prepared int
	// MaxValueBytes bounds what crosses between the sandbox and the host in
	// one run: the result, and all reports, logs, host call arguments
	// (strings included) and host functions' replies together, in bytes of
	// their encoded form plus 16 for each value in a list and 64 for each
	// list or object (what decoding costs). 0 means 64 MiB. Decoded, what
	// crosses takes at most about three times this in host memory.
	MaxValueBytes int
	// Workers, when positive, runs the sandboxes in that many child
	// processes (this same binary, re-executed: the package's init
	// recognises them) instead of in this process, with the same API and
	// results: a fatal error in the engine, or a run that does not stop
	// when told, kills a worker (replaced by a fresh one), never the host.
	// Bridged functions still run in the host; a function must be a global
	// or a module export (not inside a value). Prepared does not apply, and
	// Close ends the workers: runs still in them settle with an error.
	Workers int
	// WorkerGrace is how long a worker has to stop a run the host stopped
	// (Terminate, the context, the safety cap) before the worker is killed,
	// with every run in it, and replaced. 0 means 1 s. A stop normally lands
	// within milliseconds, but a few single native calls over large data (a
	// string operation over tens of megabytes, RATIONALE.md "Native loops")
	// run on for longer in the engine; WorkerGrace bounds them. A shorter
	// grace (100 ms) bounds them harder, at a cost under overload: a worker
	// whose runs share a CPU can be slow to stop without being stuck, and
	// killing it ends its other runs too (TestWorkers_Hammer saw it at
	// 100 ms with 18 runs a worker on 2 CPUs).
	WorkerGrace time.Duration
	// KeepWarm is how long after its last run the Runtime keeps what a run
	// needs warm in the processor's caches: while no run comes, it rehearses
	// one every 2 ms (a one-line program in a sandbox of its own, which the
	// runtime then replaces), so that a run after an idle gap shorter than
	// KeepWarm costs about twice what a run right after another does
	// instead of three and a half times: after a few milliseconds idle, other
	// work has taken the caches (BENCHMARKS.md, "The warm path after an
	// idle gap"). The price is CPU time while idle: ~0.25-0.3 ms a
	// rehearsal on the 2-core VM measured, 12-15% of a core for up to
	// KeepWarm after each run that no other follows at once. 0, the zero
	// value, and negative values rehearse nothing. Not in worker-process
	// mode.
	KeepWarm time.Duration
	// MaxAsyncCalls is how many asynchronous host calls (see [Async]) of one
	// run run at once, each on a goroutine of its own; a call beyond it
	// waits, without a goroutine, until one of them returns. 0 means 64.
	// Apart from it, at most 65,536 asynchronous calls of a run may be
	// started and not yet settled in the sandbox; a call beyond that
	// throws.
	MaxAsyncCalls int
}

const (
	defaultMemoryLimit = 256 << 20
	defaultMaxDuration = 30 * time.Second
	defaultPrepared    = 2
	defaultWorkerGrace = time.Second
	defaultValueBytes  = 64 << 20
	// rehearseEvery is how often an idle Runtime rehearses a run
	// (RuntimeConfig.KeepWarm).
	rehearseEvery = 2 * time.Millisecond
)

// Sentinel errors.
var (
	// ErrClosed is returned by Run on a closed Runtime.
	ErrClosed = errors.New("airlock: runtime closed")
)

// Runtime runs sandboxes. It is safe for concurrent use. Close releases the
// sandboxes it keeps prepared.
type Runtime struct {
	cfg     RuntimeConfig
	workers *worker.Pool // worker-process mode, or nil
	// ready holds the prepared sandboxes, in the order they were prepared.
	// A run takes the first: taking the most recent instead made warm
	// latency worse (p50 102 against 82 µs), though its memory is the
	// likeliest to be in a cache.
	readyMu sync.Mutex
	ready   []*prepared
	// idle counts the workers preparing a sandbox or waiting in ready,
	// closing those closing the sandbox of a run that settled and then
	// stopping. The idle - len(ready) preparing ones and the closing ones
	// each take a run of waiting, if any, when they are done (assign).
	idle    int
	closing int
	waiting []*run
	closed  atomic.Bool // set under readyMu
	once    sync.Once

	// lastRun is when Run was last called, in ns since epoch, noted only
	// with KeepWarm set; warming is set while the goroutine that keeps the
	// runtime warm runs (keepWarm), which stops at stop.
	epoch      time.Time
	lastRun    atomic.Int64
	warming    atomic.Bool
	stop       chan struct{}
	rehearsals atomic.Int64 // for the tests
}

// prepared is a sandbox prepared ahead of its run, and the channel on which
// the goroutine that prepared it (a worker of the Runtime: work) takes the
// run.
type prepared struct {
	vm   *engine.VM
	jobs chan *run
}

// NewRuntime returns a Runtime with the given configuration.
func NewRuntime(cfg RuntimeConfig) *Runtime {
	if cfg.MemoryLimitBytes <= 0 {
		cfg.MemoryLimitBytes = defaultMemoryLimit
	}
	if cfg.MaxDuration == 0 {
		cfg.MaxDuration = defaultMaxDuration
	}
	if cfg.Prepared == 0 {
		cfg.Prepared = defaultPrepared
	}
	if cfg.Prepared < 0 {
		cfg.Prepared = 0
	}
	if cfg.MaxValueBytes <= 0 {
		cfg.MaxValueBytes = defaultValueBytes
	}
	if cfg.WorkerGrace <= 0 {
		cfg.WorkerGrace = defaultWorkerGrace
	}
	rt := &Runtime{cfg: cfg, epoch: time.Now(), stop: make(chan struct{})}
	if cfg.Workers > 0 {
		rt.workers = worker.NewPool(cfg.Workers)
		return rt
	}
	rt.idle = cfg.Prepared
	for i := 0; i < cfg.Prepared; i++ {
		go rt.work(nil)
	}
	return rt
}

// work prepares a VM, waits for a run, runs it, and prepares the next VM
// while the runtime keeps fewer than Prepared ready. A first run, if given,
// is run on a VM made for it, as is a run that waits for the worker once
// it stops preparing (closed1).
func (rt *Runtime) work(r *run) {
	for {
		vm, err := engine.New()
		if r == nil {
			if err == nil {
				// Prepared ahead of its run: what does not depend on the
				// program is done now, off the run's path.
				if err = vm.Prepare(); err != nil {
					vm.Close()
				}
			}
			if err != nil {
				rt.quit()
				return
			}
			w := &prepared{vm: vm, jobs: make(chan *run, 1)}
			var ok bool
			if r, ok = rt.offer(w); ok && r == nil {
				r = <-w.jobs
			}
			if r == nil {
				vm.Close()
				return
			}
		}
		if r.execute(vm, err) {
			r = nil // the next VM is prepared ahead
		} else if r = rt.closed1(); r == nil {
			return
		}
	}
}

// offer puts a prepared sandbox in ready, or returns the run that waits for
// it. It reports false, having stopped counting the worker, when the
// runtime is closed and no run waits.
func (rt *Runtime) offer(w *prepared) (*run, bool) {
	rt.readyMu.Lock()
	defer rt.readyMu.Unlock()
	if r := rt.nextWaiting(); r != nil {
		rt.idle--
		return r, true
	}
	if rt.closed.Load() {
		rt.idle--
		return nil, false
	}
	rt.ready = append(rt.ready, w)
	return nil, true
}

// quit stops counting a preparing worker whose sandbox failed, and gives
// a run that waited for it a worker of its own.
func (rt *Runtime) quit() {
	rt.readyMu.Lock()
	rt.idle--
	var r *run
	if len(rt.waiting) > rt.idle-len(rt.ready)+rt.closing {
		r = rt.nextWaiting()
	}
	rt.readyMu.Unlock()
	if r != nil {
		go rt.work(r)
	}
}

// assign hands r to a worker: the sandbox prepared first, else a worker
// still preparing one, or closing the sandbox of a run that settled, that
// no other run waits for, else a worker of its own. A run waits for such a
// worker rather than making a sandbox of its own because that worker's
// sandbox is usually the previous run's, being rewound: with one
// processor, or two callers in turn on two, the workers that yield to
// their callers after a run fell behind, and a third of the runs made new
// instances (RATIONALE.md, "Runs wait for the sandbox being prepared").
func (rt *Runtime) assign(r *run) {
	rt.readyMu.Lock()
	var w *prepared
	waits := false
	if len(rt.ready) > 0 {
		w = popFront(&rt.ready)
		rt.idle--
	} else if len(rt.waiting) < rt.idle+rt.closing {
		rt.waiting = append(rt.waiting, r)
		waits = true
	}
	rt.readyMu.Unlock()
	switch {
	case w != nil:
		w.jobs <- r
	case !waits:
		go rt.work(r)
	}
}

// wantIdle reports whether a worker that finished a run should prepare the
// next VM, counting itself as idle if so, or else as closing: it then
// calls closed1 once its VM is closed.
func (rt *Runtime) wantIdle() bool {
	rt.readyMu.Lock()
	defer rt.readyMu.Unlock()
	if rt.idle >= rt.cfg.Prepared || rt.closed.Load() {
		rt.closing++
		return false
	}
	rt.idle++
	return true
}

// closed1 stops counting a closing worker, and returns a run that waits,
// for the worker to run on a new VM, or nil.
func (rt *Runtime) closed1() *run {
	rt.readyMu.Lock()
	defer rt.readyMu.Unlock()
	rt.closing--
	return rt.nextWaiting()
}

// nextWaiting removes and returns the run that has waited longest, or nil.
// readyMu is held.
func (rt *Runtime) nextWaiting() *run {
	if len(rt.waiting) == 0 {
		return nil
	}
	return popFront(&rt.waiting)
}

// popFront removes and returns the first of the non-empty *s, leaving no
// reference to it behind.
func popFront[T any](s *[]*T) *T {
	x := (*s)[0]
	(*s)[0] = nil
	*s = (*s)[1:]
	return x
}

// Close stops preparing sandboxes and releases the prepared ones. Runs in
// progress finish. Close is idempotent.
func (rt *Runtime) Close() error {
	rt.once.Do(func() {
		rt.readyMu.Lock()
		rt.closed.Store(true)
		ws := rt.ready
		rt.ready = nil
		rt.idle -= len(ws)
		rt.readyMu.Unlock()
		close(rt.stop)
		if rt.workers != nil {
			rt.workers.Close()
		}
		for _, w := range ws {
			w.jobs <- nil
		}
	})
	return nil
}

// defaultRuntime is the package's default Runtime, made on first use.
var defaultRuntime = sync.OnceValue(func() *Runtime { return NewRuntime(RuntimeConfig{}) })

// Run runs source on the package's default Runtime. See [Runtime.Run].
func Run(ctx context.Context, source string, opts Options) (*Execution, error) {
	return defaultRuntime().Run(ctx, source, opts)
}

// Run starts running source as an ES module in a fresh sandbox and returns
// its Execution at once. The error is only for invalid options or a closed
// Runtime; everything that happens in the sandbox is in the Result. When ctx
// is done the run is terminated.
func (rt *Runtime) Run(ctx context.Context, src string, opts Options) (*Execution, error) {
	start := time.Now()
	if rt.closed.Load() {
		return nil, ErrClosed
	}
	if err := validate(&opts); err != nil {
		return nil, err
	}
	ctx, span := startRunSpan(ctx, &opts) // nil unless traced (trace.go)
	var exec *Execution
	var err error
	if rt.workers != nil {
		exec, err = rt.runRemote(ctx, src, opts, start)
	} else {
		exec, err = rt.runHere(ctx, src, opts, start)
	}
	if span != nil {
		endRunSpan(span, exec, err)
	}
	return exec, err
}

// runHere starts a run of valid options in this process.
func (rt *Runtime) runHere(ctx context.Context, src string, opts Options, start time.Time) (*Execution, error) {
	r, err := rt.newRun(ctx, src, opts)
	if err != nil {
		return nil, err
	}
	r.exec.start = start
	if rt.cfg.KeepWarm > 0 {
		rt.lastRun.Store(int64(start.Sub(rt.epoch)))
		if !rt.warming.Load() && rt.warming.CompareAndSwap(false, true) {
			go rt.keepWarm()
		}
	}
	rt.assign(r)
	return r.exec, nil
}

// keepWarm rehearses a run every rehearseEvery in which no run came, until
// none came for KeepWarm or the runtime is closed (RuntimeConfig.KeepWarm).
// A run after an idle gap otherwise finds its code, the engine's and the
// sandbox's memory out of every cache of the processor (RATIONALE.md, "The
// warm path after an idle gap").
func (rt *Runtime) keepWarm() {
	t := time.NewTimer(rehearseEvery)
	defer t.Stop()
	for {
		select {
		case <-rt.stop:
			rt.warming.Store(false)
			return
		case <-t.C:
		}
		idle := time.Since(rt.epoch) - time.Duration(rt.lastRun.Load())
		if idle >= rt.cfg.KeepWarm {
			rt.warming.Store(false)
			// A Run between the reading and the store saw warming set.
			if idle = time.Since(rt.epoch) - time.Duration(rt.lastRun.Load()); idle >= rt.cfg.KeepWarm ||
				!rt.warming.CompareAndSwap(false, true) {
				return
			}
		}
		if idle >= rehearseEvery {
			rt.rehearse()
			t.Reset(rehearseEvery)
		} else {
			t.Reset(rehearseEvery - idle)
		}
	}
}

// rehearsal is the program keepWarm runs.
const rehearsal = `export default 1`

// rehearse runs the rehearsal as Run would, but without counting it as a
// run (lastRun), and waits for it.
func (rt *Runtime) rehearse() {
	if rt.closed.Load() {
		return
	}
	r, err := rt.newRun(context.Background(), rehearsal, Options{})
	if err != nil {
		return
	}
	r.exec.start = time.Now()
	rt.assign(r)
	r.exec.Wait()
	rt.rehearsals.Add(1)
}

// Execution is a run in progress. Its methods are safe for concurrent use.
type Execution struct {
	done   chan struct{}
	result *Result
	start  time.Time
	job    execution
	span   *runSpan // the run's span, ended as it settles (trace.go)

	mu      sync.Mutex
	reports []any
}

// execution is what an Execution stands in front of: a run in this
// process (run) or in a worker process (remoteRun). Each settles the
// Execution once (its result, then done closed).
type execution interface {
	// terminate stops the run with msg as its error's message, unless it
	// was stopped or has settled.
	terminate(msg string)
}

// Wait blocks until the run settles and returns its Result.
func (e *Execution) Wait() *Result {
	<-e.done
	return e.result
}

// Done is closed when the run settles.
func (e *Execution) Done() <-chan struct{} { return e.done }

// Running reports whether the run has not settled yet.
func (e *Execution) Running() bool {
	select {
	case <-e.done:
		return false
	default:
		return true
	}
}

// Reports returns a snapshot of the values reported so far, in call order.
func (e *Execution) Reports() []any {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]any{}, e.reports...)
}

// Terminate stops the run: it settles with StatusTerminated and reason in
// the error message. Terminate is idempotent; only the first reason counts,
// and it does nothing once the run has settled.
func (e *Execution) Terminate(reason string) {
	msg := "terminated"
	if reason != "" {
		msg = "terminated: " + reason
	}
	e.job.terminate(msg)
}

// validate checks options, in one place (Runtime.Run, for runs in
// process and in worker processes alike), and returns a clear error.
func validate(opts *Options) error {
	if opts.MemoryLimitBytes < 0 {
		return fmt.Errorf("airlock: MemoryLimitBytes must not be negative, got %d", opts.MemoryLimitBytes)
	}
	if opts.Language != TypeScript && opts.Language != JavaScript {
		return fmt.Errorf("airlock: unknown Language %d", opts.Language)
	}
	if opts.Filename != "" {
		if _, ok := source.Clean(opts.Filename); !ok || strings.ContainsAny(opts.Filename, "\x00\n\r") {
			return fmt.Errorf("airlock: invalid Filename %q", opts.Filename)
		}
	}
	for k := range opts.Modules {
		if strings.ContainsAny(k, "\x00\n\r") || !strings.HasPrefix(k, "./") && !isBareSpecifier(k) {
			return fmt.Errorf("airlock: Modules key %q must be a relative specifier from the module graph root, such as './helpers.js', or a package name such as 'lodash'", k)
		}
		if _, ok := source.Clean(k); !ok {
			return fmt.Errorf("airlock: Modules key %q leaves the module graph root", k)
		}
		if _, dup := opts.Imports[k]; dup {
			return fmt.Errorf("airlock: %q is both in Modules and in Imports", k)
		}
	}
	for spec, m := range opts.Imports {
		if !isBareSpecifier(spec) || strings.ContainsAny(spec, "\x00\n\r") {
			return fmt.Errorf("airlock: Imports key %q must be a bare specifier such as 'fs' or '@scope/pkg'", spec)
		}
		if m == nil {
			return fmt.Errorf("airlock: Imports[%q] is nil", spec)
		}
		for name, v := range m {
			if _, ok := v.(glued); ok {
				return fmt.Errorf("airlock: Imports[%q][%q]: fetch and timers go in Options.Globals, not in a module", spec, name)
			}
		}
	}
	for name, v := range opts.Globals {
		if !IsIdentifier(name) {
			return fmt.Errorf("airlock: Globals key %q is not a JavaScript identifier", name)
		}
		if g, ok := v.(glued); ok {
			if err := gluedName(g, name); err != nil {
				return fmt.Errorf("airlock: Globals[%q]: %w", name, err)
			}
		}
	}
	if opts.Timeout < 0 {
		return fmt.Errorf("airlock: Options.Timeout is negative (%s)", opts.Timeout)
	}
	if _, ok := opts.Globals["report"]; ok && opts.Report != nil {
		return errors.New("airlock: Globals has \"report\" and Options.Report is set; choose one")
	}
	return nil
}

var reservedWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`break case catch class const continue debugger default delete do else
		enum export extends false finally for function if import in instanceof new null return super switch
		this throw true try typeof var void while with yield let static implements interface package private
		protected public await arguments eval undefined NaN Infinity globalThis`) {
		reservedWords[w] = true
	}
}

// IsIdentifier reports whether s can name a global or a bridged function
// in the sandbox: a JavaScript identifier that is neither a reserved word nor
// a name the language keeps (undefined, NaN, Infinity, globalThis, eval,
// arguments).
func IsIdentifier(s string) bool {
	if s == "" || reservedWords[s] {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r == '$' || unicode.IsLetter(r):
		case i > 0 && (unicode.IsDigit(r) || r == '\u200c' || r == '\u200d'):
		default:
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// isBareSpecifier reports whether spec names a package: not relative, not
// absolute, not a URL or a node: specifier.
func isBareSpecifier(spec string) bool {
	return spec != "" && !source.IsRelative(spec) && !strings.HasPrefix(spec, "/") && !strings.HasPrefix(spec, ".") && !strings.Contains(spec, ":")
}
