package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/internal/instrument"
	"github.com/airlockrun/airlock/internal/source"
	"github.com/airlockrun/airlock/js"
)

// DefaultTimeout is how long code may run when neither the interpreter nor
// the call sets a timeout.
const DefaultTimeout = 30 * time.Second

// defaultMaxParallel bounds the tool calls parallel() runs at once.
const defaultMaxParallel = 128

// Config configures an Interpreter.
type Config struct {
	// Runtime, if set, runs all code as ES modules on it (its worker
	// processes, if it has them): strict code, where a plain script's
	// `x = 5` fails. Nil runs plain scripts as sloppy steps of a fresh
	// executor in process, and modules on a default Runtime whose safety
	// cap on wall time is 10 minutes (timeouts beyond it end there).
	Runtime *airlock.Runtime
	// Completer answers llm() and llmJson(); nil makes them throw.
	Completer Completer
	// Timeout of an execution that sets none; 0 means DefaultTimeout.
	Timeout time.Duration
	// MemoryLimitBytes caps the sandbox heap; 0 means the runtime's default.
	MemoryLimitBytes int64
	// MaxParallel bounds how many tool calls one parallel() runs at once;
	// 0 means 128.
	MaxParallel int
	// Policy governs the tool calls of every execution (allow, deny, ask
	// for approval, per-tool timeouts); nil allows every call.
	// ExecuteOptions.Policy and the agents' Policy take its place.
	Policy *Policy
	// MaxOutput bounds the text run_code gives back to the model, in
	// characters: a longer text keeps its head and tail around a marker
	// that says how much was cut (ClipText). 0 means
	// DefaultMaxOutput (20,000); negative means no bound.
	MaxOutput int
}

// An Interpreter runs model-written JavaScript in a fresh sandbox per
// execution, with the functions and modules registered on it, the tools of
// the call as camelCase functions, and the helpers of code mode (parallel,
// llm, llmJson, complete, output, done, log, store, recall, toolSchema).
// It is safe for concurrent use.
type Interpreter struct {
	cfg       Config
	mu        sync.RWMutex
	functions map[string]any
	docs      map[string]Helper // Document's, by name
	modules   map[string]airlock.Module
	sources   map[string]string
}

// NewInterpreter returns an interpreter with nothing registered.
func NewInterpreter(cfg Config) *Interpreter {
	return &Interpreter{cfg: cfg, functions: map[string]any{}, docs: map[string]Helper{}, modules: map[string]airlock.Module{}, sources: map[string]string{}}
}

// helperNames are the globals of code mode; nothing registered may take them.
var helperNames = map[string]bool{
	"parallel": true, "llm": true, "llmJson": true, "complete": true, "output": true, "done": true,
	"log": true, "store": true, "recall": true, "toolSchema": true, "input": true,
	"console": true, "report": true,
}

func reservedName(name string) bool {
	return helperNames[name] || strings.HasPrefix(name, "__airlock")
}

// Register makes fn a global function of the sandbox under name, as a
// plugin does: any function shape airlock bridges (see the airlock
// package), airlock.Async and airlock.JSONFunc included. Registering a name
// again replaces the function.
func (it *Interpreter) Register(name string, fn any) error {
	if !airlock.IsIdentifier(name) {
		return fmt.Errorf("agent: Register: %q is not a JavaScript identifier", name)
	}
	if reservedName(name) {
		return fmt.Errorf("agent: Register: %q is a sandbox helper", name)
	}
	if fn == nil {
		return fmt.Errorf("agent: Register %q: nil function", name)
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	it.functions[name] = fn
	return nil
}

// AddModule registers a module of Go values that code can import by name:
// import { slugify } from "text".
func (it *Interpreter) AddModule(name string, m airlock.Module) error {
	if err := checkModuleName(name); err != nil {
		return err
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	if _, dup := it.sources[name]; dup {
		return fmt.Errorf("agent: AddModule: %q is already a source module", name)
	}
	it.modules[name] = m
	return nil
}

// AddSourceModule registers an ES module of JavaScript source, such as a
// library, that code can import by name.
func (it *Interpreter) AddSourceModule(name, source string) error {
	if err := checkModuleName(name); err != nil {
		return err
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	if _, dup := it.modules[name]; dup {
		return fmt.Errorf("agent: AddSourceModule: %q is already a Go module", name)
	}
	it.sources[name] = source
	return nil
}

func checkModuleName(name string) error {
	if name == "" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "/") || strings.Contains(name, ":") ||
		strings.Contains(name, "..") || strings.ContainsAny(name, " \t\r\n\x00\\") {
		return fmt.Errorf("agent: module name %q must be a package name such as 'lodash' or '@scope/pkg'", name)
	}
	return nil
}

// ModuleNames returns the names of the registered modules, sorted.
func (it *Interpreter) ModuleNames() []string {
	it.mu.RLock()
	defer it.mu.RUnlock()
	names := make([]string, 0, len(it.modules)+len(it.sources))
	for n := range it.modules {
		names = append(names, n)
	}
	for n := range it.sources {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// registeredModules are copies of the registered modules: the Go-defined
// ones and those given as source.
func (it *Interpreter) registeredModules() (map[string]airlock.Module, map[string]string) {
	it.mu.RLock()
	defer it.mu.RUnlock()
	return maps.Clone(it.modules), maps.Clone(it.sources)
}

// FunctionNames returns the names of the registered functions, sorted.
func (it *Interpreter) FunctionNames() []string {
	it.mu.RLock()
	defer it.mu.RUnlock()
	names := make([]string, 0, len(it.functions))
	for n := range it.functions {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Clone returns a new interpreter with the same configuration and, at the
// moment of the call, the same registered functions and modules; what is
// registered on either afterwards is its own. A code-mode step clones the
// interpreter the plugins registered on, so that their functions are
// there; an interpreter with nothing registered clones to an empty one.
func (it *Interpreter) Clone() *Interpreter {
	it.mu.RLock()
	defer it.mu.RUnlock()
	c := NewInterpreter(it.cfg)
	for k, v := range it.functions {
		c.functions[k] = v
	}
	for k, v := range it.docs {
		c.docs[k] = v
	}
	for k, v := range it.modules {
		c.modules[k] = v
	}
	for k, v := range it.sources {
		c.sources[k] = v
	}
	return c
}

// ExecuteOptions are the options of one execution.
type ExecuteOptions struct {
	// Tools are callable from the code, as camelCase functions and through
	// parallel() and toolSchema().
	Tools *Toolbox
	// Input is bound to the global input; nil leaves it undefined.
	Input any
	// Timeout overrides the interpreter's.
	Timeout time.Duration
	// State keeps store()/recall() values (and complete()'s data, as
	// "_lastData") across executions; nil gives the execution its own.
	State *State
	// Policy governs the execution's tool calls in place of
	// Config.Policy.
	Policy *Policy

	// run is the tracker of the agent run the execution is part of.
	run *tracker
}

// An Execution is the outcome of running code.
type Execution struct {
	// Status is the sandbox's status: success, error, memory, terminated or
	// link_error.
	Status airlock.Status `json:"status"`
	// Result is the value of the code: a script's completion value (its
	// last expression statement's, as a REPL shows it); a module's default
	// export if it has one, else its last expression statement's.
	Result any `json:"result,omitempty"`
	// Output is the text given to output() and complete(), one line each.
	Output string `json:"output,omitempty"`
	// Done is set when the code called done() or complete().
	Done bool `json:"done,omitempty"`
	// Logs are the console calls and log() calls, in order.
	Logs []airlock.Log `json:"logs,omitempty"`
	// Error, Line, Column and Context describe a failure: the message, the
	// 1-based position in the code when known, and the trimmed line there.
	Error   string `json:"error,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Context string `json:"context,omitempty"`
	// Timeout is set when the execution ran out of time.
	Timeout bool `json:"timeout,omitempty"`
	// Calls are the tool calls the code made, in the order they started.
	Calls []CallRecord `json:"calls,omitempty"`
	// Fetches are the requests the code made with a Fetcher
	// (airlock.Fetch) registered on the Interpreter, in order.
	Fetches []airlock.FetchRecord `json:"fetches,omitempty"`
	// Usage is what the code's llm()/llmJson() calls spent.
	Usage Usage `json:"usage"`
	// Duration is the wall time of the execution.
	Duration time.Duration `json:"durationNs"`
}

// MarshalJSON encodes the execution with its result as js.JSONValue
// makes it: NaN and the infinities as null, a cycle cut. It does not fail
// on any result a run gives; a Go value that JSON cannot hold at all is
// encoded as its airlock.Inspect text.
func (e Execution) MarshalJSON() ([]byte, error) {
	type plain Execution
	p := plain(e)
	return marshalWithValue(&p, &p.Result)
}

// marshalWithValue encodes p, whose *v is a value a run gave, with that
// value as js.JSONValue makes it, or as its airlock.Inspect text when
// JSON cannot hold it at all.
func marshalWithValue(p any, v *any) ([]byte, error) {
	x := *v
	*v = js.JSONValue(x)
	if b, err := json.Marshal(p); err == nil {
		return b, nil
	}
	*v = airlock.Inspect(x)
	return json.Marshal(p)
}

// OK reports whether the code ran to its end.
func (e *Execution) OK() bool { return e.Error == "" }

// State is what store() keeps for recall(), across the executions that
// share it. It is safe for concurrent use.
type State struct {
	mu     sync.Mutex
	values map[string]json.RawMessage
}

// NewState returns an empty state.
func NewState() *State { return &State{values: map[string]json.RawMessage{}} }

// Get returns the JSON text stored under key.
func (s *State) Get(key string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.values[key]
	return v, ok
}

// Set stores JSON text under key.
func (s *State) Set(key string, v json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values[key] = v
}

func (s *State) delete(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.values, key)
}

// LastDataKey is where complete() stores its data.
const LastDataKey = "_lastData"

const filename = "code.js"

var (
	defaultRuntimeOnce sync.Once
	defaultRuntime     *airlock.Runtime
)

func (it *Interpreter) runtime() *airlock.Runtime {
	if it.cfg.Runtime != nil {
		return it.cfg.Runtime
	}
	defaultRuntimeOnce.Do(func() {
		defaultRuntime = airlock.NewRuntime(airlock.RuntimeConfig{MaxDuration: 10 * time.Minute})
	})
	return defaultRuntime
}

// Execute runs code in a fresh sandbox and returns its outcome; it fails
// only inside the Execution. A plain script runs as a CodeAgent step does:
// sloppy global code (as in Node's REPL) with top-level await, its value
// its completion value; it imports the registered modules with import().
// Code with an import or export declaration is an ES module, whose value
// is its default export or its last expression statement; so is all code
// when Config.Runtime is set. TypeScript is erased first. Tools and
// helpers return their values directly; awaiting them works too.
func (it *Interpreter) Execute(ctx context.Context, code string, opts ExecuteOptions) *Execution {
	start := time.Now()
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = it.cfg.Timeout
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	state := opts.State
	if state == nil {
		state = NewState()
	}
	policy := opts.Policy
	if policy == nil && opts.run.effectivePolicy() == nil {
		policy = it.cfg.Policy
	}
	x := &execution{it: it, tools: opts.Tools, state: state, tr: newTracker(policy, Budget{}, opts.run)}
	x.tr.watchFetches(it)
	globals, err := x.globals(opts.Input)
	if err != nil {
		return &Execution{Status: airlock.StatusError, Error: err.Error(), Duration: time.Since(start)}
	}
	if strings.TrimSpace(code) == "" {
		return &Execution{Status: airlock.StatusError, Error: "the code is empty", Duration: time.Since(start)}
	}
	// TypeScript is erased first, as airlock.Run would, so that the
	// preparation reads JavaScript; positions are mapped back.
	js, erased := code, (*source.StepMap)(nil)
	prog := instrument.Parse(code)
	if prog == nil {
		if out, smap, lf := source.EraseModule(code); lf == nil {
			js, erased = out, smap
			prog = instrument.Parse(js)
		}
	}
	if it.cfg.Runtime == nil && !prog.ModuleSyntax() {
		return it.executeScript(ctx, code, js, prog, erased, x, globals, timeout, start)
	}
	src, edit := prepareSource(js, prog, x.asyncable)
	imports, sources := it.registeredModules()

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ex, err := it.runtime().Run(runCtx, src, airlock.Options{
		Language:         airlock.JavaScript,
		Filename:         filename,
		Globals:          globals,
		Imports:          imports,
		Modules:          sources,
		MemoryLimitBytes: it.cfg.MemoryLimitBytes,
	})
	if err != nil {
		return &Execution{Status: airlock.StatusError, Error: err.Error(), Duration: time.Since(start)}
	}
	res := ex.Wait()
	out := &Execution{Status: res.Status, Result: res.Result, Duration: time.Since(start)}
	out.Calls, out.Usage = x.tr.drain()
	out.Fetches = x.tr.drainFetches()
	x.mu.Lock()
	out.Output, out.Done = strings.Join(x.output, "\n"), x.done
	out.Logs = mergeLogs(res.Logs, x.logs)
	x.mu.Unlock()
	if res.Status == airlock.StatusSuccess {
		return out
	}
	out.Result = nil
	if res.Status == airlock.StatusTerminated && errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		out.Error, out.Timeout = fmt.Sprintf("Execution timed out after %dms", timeout.Milliseconds()), true
		return out
	}
	e := res.Error
	out.Error = e.Error()
	if e.Filename == filename && e.Line > 0 {
		out.Line, out.Column = erased.Position(e.Line, edit.column(e.Line, e.Column))
		out.Context = sourceLine(code, out.Line)
	} else if line, col := x.thrownAt(); line > 0 && !failedCall(out) {
		out.Line, out.Column, out.Context = line, col, sourceLine(code, line)
	}
	return out
}

// asyncPrefix names the promise-returning twin of a tool or helper in the
// sandbox: the calls AsyncCalls finds call the twin.
const asyncPrefix = "__airlockAsync_"

// throwAtName is the sandbox function a throw statement calls before it
// throws, with its line and column: a thrown value that is not an Error
// (throw "text") has no position of its own.
const throwAtName = "__airlockThrowAt"

// An insertion is text the source preparation put into the code, at a
// byte offset of the user's code, on its 1-based line and column.
type insertion struct {
	off, line, col, n int
	text              string
}

// sourceEdits are the insertions of a prepared source, in order.
type sourceEdits []insertion

const completionOpen = "export default ("

// prepareSource makes the value of the code's last expression statement
// its default export, and makes the calls of async-able functions whose
// promise the code uses (awaited, in Promise.all) call their
// promise-returning twins, by edits that keep every line where it was.
func prepareSource(code string, prog *instrument.Program, asyncable func(string) bool) (string, sourceEdits) {
	return editSource(code, prog, asyncable, true)
}

// editSource makes prepareSource's edits; the completion's only with
// completion. prog is code parsed (nil: it does not parse, and nothing is
// edited).
func editSource(code string, prog *instrument.Program, asyncable func(string) bool, completion bool) (string, sourceEdits) {
	var ins []insertion
	for _, off := range prog.AsyncCalls(asyncable) {
		ins = append(ins, insertion{off: off, text: asyncPrefix})
	}
	for _, sp := range prog.Throws() {
		line := 1 + strings.Count(code[:sp[0]], "\n")
		col := sp[0] - strings.LastIndexByte(code[:sp[0]], '\n')
		ins = append(ins, insertion{off: sp[0], text: fmt.Sprintf("(%s(%d, %d), ", throwAtName, line, col)}, insertion{off: sp[1], text: ")"})
	}
	if completion {
		if s, e, ok := prog.Completion(); ok {
			ins = append(ins, insertion{off: s, text: completionOpen}, insertion{off: e, text: ")"})
		}
	}
	sort.SliceStable(ins, func(i, j int) bool { return ins[i].off < ins[j].off })
	var b strings.Builder
	last := 0
	for i := range ins {
		in := &ins[i]
		in.line = 1 + strings.Count(code[:in.off], "\n")
		in.col = in.off - strings.LastIndexByte(code[:in.off], '\n')
		in.n = len(in.text)
		b.WriteString(code[last:in.off])
		b.WriteString(in.text)
		last = in.off
	}
	b.WriteString(code[last:])
	return b.String(), ins
}

// column maps a column of the edited code back to the user's code.
func (es sourceEdits) column(line, col int) int {
	shift := 0
	for _, in := range es {
		if in.line != line {
			continue
		}
		at := in.col + shift // where the insertion starts in the edited line
		if col < at {
			break
		}
		if col < at+in.n {
			return in.col
		}
		shift += in.n
	}
	return col - shift
}

// failedCall reports whether the execution's error is a failed tool
// call's, which a throw statement's position would not describe.
func failedCall(e *Execution) bool {
	for _, c := range e.Calls {
		if c.Error != "" && strings.Contains(e.Error, c.Error) {
			return true
		}
	}
	return false
}

// sourceLine is line n of code, trimmed.
func sourceLine(code string, n int) string {
	lines := strings.Split(code, "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	return strings.TrimSpace(lines[n-1])
}

// mergeLogs puts the console's logs and log()'s together, in time order.
func mergeLogs(a, b []airlock.Log) []airlock.Log {
	if len(b) == 0 {
		return a
	}
	out := append(append(make([]airlock.Log, 0, len(a)+len(b)), a...), b...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}
