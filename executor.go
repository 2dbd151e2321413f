package airlock

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/airlockrun/airlock/internal/engine"
	"github.com/airlockrun/airlock/internal/session"
)

// ExecutorState is the lifecycle state of an [Executor].
type ExecutorState string

const (
	StateNew          ExecutorState = "NEW"          // made, not initialized
	StateInitializing ExecutorState = "INITIALIZING" // Init is creating the sandbox
	StateReady        ExecutorState = "READY"        // Run may start
	StateRunning      ExecutorState = "RUNNING"      // a step runs
	StateDirty        ExecutorState = "DIRTY"        // must be cleaned up and initialized again
	StateDead         ExecutorState = "DEAD"         // cleaned up; Init makes it READY again
)

// CodeOutput is the outcome of a step that did not fail.
type CodeOutput struct {
	// Output is the value given to final_answer, or the value the step
	// returned, or without a return its completion value (the value of its
	// last expression statement; undefined when there is none), a promise
	// awaited, converted as the package documentation's table says. A value
	// given to final_answer must cross as a run's result must: a function
	// or symbol in it throws a DataCloneError at the call, which names
	// where it was. A step's own value is only shown, as a REPL echoes its
	// last line: a function or symbol in it is left out.
	Output any `json:"output"`
	// Logs are the step's console output, one line per call, arguments
	// joined by spaces.
	Logs string `json:"logs"`
	// IsFinalAnswer is set when the step called final_answer.
	IsFinalAnswer bool `json:"is_final_answer"`
	// LogEntries are the console calls the Logs hold, with their levels.
	LogEntries []LogEntry `json:"log_entries,omitempty"`
}

// Executor runs the steps of a code agent in one long-lived sandbox: what a
// step declares at its top level (const, let, var, function, class), the
// variables and the tools stay for the next step.
//
// A step is JavaScript or TypeScript, evaluated as global code of the
// executor's one realm: top-level await and return work, and so does
// final_answer(value), which ends the step with IsFinalAnswer set. The
// package documentation's "The executor" says how declarations persist and
// what counts against MaxOperations. Termination by the loop budget, the
// timeout, the memory limit or final_answer cannot be swallowed by a
// try/catch in the step.
//
// The methods are safe for concurrent use. Every error is an
// *[ExecutorError].
type Executor struct {
	opts ExecutorOptions

	mu    sync.Mutex
	state ExecutorState
	sess  *session.Session
	queue []*queued // steps waiting, with RunQueue
}

// queued is a step waiting for its turn.
type queued struct {
	turn chan error // nil: the step may run; else it fails
}

// NewExecutor returns an executor in state NEW. Invalid options give
// ERR_VALIDATION_FAILED with the diagnostics in Details.
func NewExecutor(opts ExecutorOptions) (*Executor, error) {
	var bad []Diagnostic
	for _, d := range optionDiagnostics(opts) {
		if d.Severity == DiagnosticError {
			bad = append(bad, d)
		}
	}
	if len(bad) > 0 {
		return nil, newExecError(CodeValidationFailed, map[string]any{"diagnostics": bad}, "Code validation failed: %s", bad[0].Message)
	}
	if opts.MaxOperations == 0 {
		opts.MaxOperations = defaultMaxOperations
	}
	if opts.Timeout == 0 {
		opts.Timeout = defaultStepTimeout
	}
	if opts.RunConcurrency == "" {
		opts.RunConcurrency = RunReject
	}
	if opts.MaxLogBytes == 0 {
		opts.MaxLogBytes = defaultMaxLogBytes
	}
	if opts.CollectConsoleLevels == nil {
		opts.CollectConsoleLevels = []LogLevel{LevelLog, LevelInfo, LevelWarn, LevelError}
	}
	if opts.MemoryLimitBytes == 0 {
		opts.MemoryLimitBytes = defaultMemoryLimit
	}
	return &Executor{opts: opts, state: StateNew}, nil
}

// State returns the current state.
func (e *Executor) State() ExecutorState {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state
}

// Queued returns the number of steps waiting in the run queue.
func (e *Executor) Queued() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.queue)
}

// Init creates and hardens the sandbox: NEW or DEAD become READY; on READY
// it does nothing. A failure gives ERR_SES_INIT_FAILED and state DEAD.
func (e *Executor) Init(ctx context.Context) error {
	e.mu.Lock()
	switch e.state {
	case StateReady:
		e.mu.Unlock()
		return nil
	case StateNew, StateDead:
	default:
		s := e.state
		e.mu.Unlock()
		return invalidState(s)
	}
	e.state = StateInitializing
	e.mu.Unlock()

	cfg := session.Config{MemoryLimitBytes: e.opts.MemoryLimitBytes, AuthorizedImports: e.opts.AuthorizedImports,
		SourceModules: e.opts.SourceModules, Modules: make(map[string]map[string]any, len(e.opts.Modules))}
	for spec, m := range e.opts.Modules {
		cfg.Modules[spec] = m
	}
	s, err := session.Start(ctx, cfg)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.state = StateDead
		ee := newExecError(CodeInitFailed, map[string]any{"cause": err.Error()}, "SES init failed: %s", err.Error())
		ee.Err = err
		return ee
	}
	e.sess = s
	e.state = StateReady
	return nil
}

// SendVariables defines each variable as a global of the sandbox, a deep
// copy of the Go value (see the package documentation's table); a name
// sent again is replaced. The state must be READY.
func (e *Executor) SendVariables(ctx context.Context, vars map[string]any) error {
	s, err := e.ready()
	if err != nil {
		return err
	}
	return executorError(s.SendVariables(ctx, vars, func(name string) error { return checkGlobalName(name, "variable") }))
}

// SendTools makes each tool a read-only global function of the sandbox.
// A tool is any bridged function (see the package documentation), or one
// marked with [Async]; a step may await either. A tool's error, or an
// argument that cannot cross, fails the step with ERR_TOOL_PROXY_FAIL unless
// the step catches it. A [Fetcher] sent as "fetch" is the sandbox's fetch
// under its policy, as in Options.Globals; its requests end with the step
// that made them. [Timers] are refused: what a step leaves pending is
// dropped when it ends. The state must be READY.
func (e *Executor) SendTools(ctx context.Context, tools map[string]any) error {
	s, err := e.ready()
	if err != nil {
		return err
	}
	var glue map[string]string
	bridged := make(map[string]any, len(tools))
	for name, v := range tools {
		switch g := v.(type) {
		case *timerBridge:
			return newExecError(CodeInvalidArgument, map[string]any{"tool": name},
				"Invalid argument: tool %q: timers do not reach an Executor (a step's pending work is dropped when it ends; they work in Runtime.Run's Options.Globals)", name)
		case glued:
			if err := gluedName(g, name); err != nil {
				return newExecError(CodeInvalidArgument, map[string]any{"tool": name}, "Invalid argument: tool %q: %v", name, err)
			}
		}
		var g string
		var ok bool
		if bridged[name], g, ok = unglue(v); ok {
			if glue == nil {
				glue = map[string]string{}
			}
			glue[name] = g
		}
	}
	return executorError(s.SendTools(ctx, bridged, glue, func(name string) error { return checkGlobalName(name, "tool") }))
}

func (e *Executor) ready() (*session.Session, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state != StateReady {
		return nil, invalidState(e.state)
	}
	return e.sess, nil
}

// Run validates and runs one step. The state must be READY,
// or RUNNING with RunQueue, where the step waits its turn in FIFO order.
//
// Errors: ERR_INVALID_STATE, ERR_VALIDATION_FAILED and ERR_IMPORT_NOT_ALLOWED
// before anything ran; ERR_MAX_OPS_EXCEEDED, ERR_TOOL_PROXY_FAIL and
// ERR_RUNTIME_EXCEPTION leave the executor READY, and so does
// ERR_INTERRUPTED (Interrupt) when the step ended; ERR_EXEC_TIMEOUT (also
// when ctx ends), ERR_MEMORY_LIMIT_EXCEEDED and a broken sandbox leave it
// DIRTY, to be cleaned up and initialized again.
func (e *Executor) Run(ctx context.Context, code string) (*CodeOutput, error) {
	e.mu.Lock()
	switch {
	case e.state == StateReady:
		e.state = StateRunning
		e.mu.Unlock()
	case e.state == StateRunning && e.opts.RunConcurrency == RunQueue:
		if len(e.queue) >= e.opts.MaxQueuedRuns {
			e.mu.Unlock()
			ee := invalidState(StateRunning)
			ee.Message += " (the run queue is full)"
			return nil, ee
		}
		q := &queued{turn: make(chan error, 1)}
		e.queue = append(e.queue, q)
		e.mu.Unlock()
		if err := e.wait(ctx, q); err != nil {
			return nil, err
		}
	default:
		s := e.state
		e.mu.Unlock()
		return nil, invalidState(s)
	}
	out, dirty, err := e.sess.Run(ctx, e.step(code))
	e.next(dirty)
	if err != nil {
		return nil, executorError(err)
	}
	return &CodeOutput{Output: out.Value, Logs: out.Logs, IsFinalAnswer: out.Final, LogEntries: logEntries(out.Entries)}, nil
}

// Interrupt stops the running step, if there is one, and keeps the
// sandbox's state, as Node's REPL interrupts a command at Ctrl-C: the step
// fails with ERR_INTERRUPTED and the executor stays READY, with every
// declaration of earlier steps (and what the interrupted step had done).
// The step stops at its next operation, as the operation budget stops it;
// the context its tools were given ends, and a tool in flight that returns
// within a second lets it stop there. A tool that does not return by then
// is abandoned, and a native call that runs on (a long regular expression,
// say) runs until the step's time or context stops it; both leave the
// executor DIRTY, as a timeout does. Steps waiting in the run queue are
// not interrupted. A step still being validated and compiled does not run:
// it fails with ERR_INTERRUPTED at once. Interrupt reports whether a step
// was running or being prepared.
func (e *Executor) Interrupt() bool {
	e.mu.Lock()
	sess := e.sess
	e.mu.Unlock()
	return sess != nil && sess.Interrupt()
}

// step is a step of code with the executor's limits, validated by the
// session's engine (prepareWith).
func (e *Executor) step(code string) *session.Step {
	opts := e.opts
	st := &session.Step{MaxOperations: opts.MaxOperations, Timeout: opts.Timeout, Sloppy: opts.Sloppy,
		MaxLogBytes: opts.MaxLogBytes, ValueBytes: defaultValueBytes, Levels: make([]string, len(opts.CollectConsoleLevels))}
	if opts.noGuards {
		st.MaxOperations = -1
	}
	for i, l := range opts.CollectConsoleLevels {
		st.Levels[i] = string(l)
	}
	if opts.Log != nil {
		st.Log = func(l session.Entry) { opts.Log(logEntry(l)) }
	}
	st.Prepare = func(stop <-chan struct{}, inspect func(string, bool) (*engine.Inspection, error)) (string, func(int, int) (int, int), error) {
		prep := prepareWith(code, opts, stop, inspect)
		if prep.HasErrors() {
			return "", nil, validationError(prep.Diagnostics)
		}
		return prep.TransformedCode, prep.position, nil
	}
	return st
}

// wait waits for a queued step's turn.
func (e *Executor) wait(ctx context.Context, q *queued) error {
	select {
	case err := <-q.turn:
		return err
	case <-ctx.Done():
	}
	e.mu.Lock()
	for i, w := range e.queue {
		if w == q {
			e.queue = append(e.queue[:i], e.queue[i+1:]...)
			e.mu.Unlock()
			return queueTimeout(ctx)
		}
	}
	e.mu.Unlock()
	// The turn came as the context ended: take it and pass it on.
	if err := <-q.turn; err != nil {
		return err
	}
	e.next(false)
	return queueTimeout(ctx)
}

// queueTimeout is the error of a step whose context ended in the queue.
func queueTimeout(ctx context.Context) *ExecutorError {
	ee := newExecError(CodeExecTimeout, nil, "Execution timed out after 0ms: %s while waiting in the run queue", context.Cause(ctx))
	ee.Err = context.Cause(ctx)
	return ee
}

// next ends a step: the first queued step runs, or the state returns to
// READY. A dirty sandbox fails every queued step.
func (e *Executor) next(dirty bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if dirty {
		e.state = StateDirty
		for _, q := range e.queue {
			q.turn <- invalidState(StateDirty)
		}
		e.queue = nil
		return
	}
	if len(e.queue) > 0 {
		q := e.queue[0]
		e.queue = e.queue[1:]
		q.turn <- nil // the state stays RUNNING
		return
	}
	e.state = StateReady
}

// Cleanup releases the sandbox: READY and DIRTY become DEAD; on DEAD it does
// nothing. If the sandbox does not stop before ctx ends, the state is DEAD
// all the same and the error is ERR_CLEANUP_FAILED (severity WARN); the
// sandbox is released when it stops. A sandbox held by a tool call that a
// step abandoned (its time or context ended while the tool ignored its
// context) is not waited for: Cleanup returns at once, and the sandbox is
// released when the call returns.
func (e *Executor) Cleanup(ctx context.Context) error {
	e.mu.Lock()
	switch e.state {
	case StateDead:
		e.mu.Unlock()
		return nil
	case StateReady, StateDirty:
	default:
		s := e.state
		e.mu.Unlock()
		return invalidState(s)
	}
	s := e.sess
	e.sess = nil
	e.state = StateDead
	e.mu.Unlock()
	if err := s.Close(ctx); err != nil {
		ee := newExecError(CodeCleanupFailed, map[string]any{"cause": err.Error()}, "Cleanup failed: %s", err.Error())
		ee.Err = err
		return ee
	}
	return nil
}

// invalidState is the error of a call the state does not allow.
func invalidState(s ExecutorState) *ExecutorError {
	return newExecError(CodeInvalidState, map[string]any{"state": string(s)}, "Invalid executor state: %s", s)
}

// executorError is err as an *ExecutorError: a session's error made one,
// anything else as it is.
func executorError(err error) error {
	var se *session.Error
	if !errors.As(err, &se) {
		return err
	}
	e := newExecError(ErrorCode(se.Code), se.Details, "")
	e.Message, e.Logs, e.LogEntries, e.Err = se.Message, se.Logs, logEntries(se.Entries), se.Err
	if se.Syntax != nil {
		d := Diagnostic{Rule: "syntax_valid", Severity: DiagnosticError, Message: se.Syntax.Message,
			Location: &Location{Line: se.Syntax.Line, Column: se.Syntax.Column}, Fix: "fix the syntax error"}
		e.Details = map[string]any{"diagnostics": []Diagnostic{d}}
	}
	return e
}

// logEntries are a session's console calls as LogEntry values.
func logEntries(es []session.Entry) []LogEntry {
	if es == nil {
		return nil
	}
	out := make([]LogEntry, len(es))
	for i, l := range es {
		out[i] = logEntry(l)
	}
	return out
}

// logEntry is a session's console call as a LogEntry.
func logEntry(l session.Entry) LogEntry {
	return LogEntry{Level: LogLevel(l.Level), Message: l.Message, Time: l.Time}
}

// validationError is the error of a step some rule refused: an import
// rule's finding makes it ERR_IMPORT_NOT_ALLOWED.
func validationError(ds []Diagnostic) *ExecutorError {
	details := map[string]any{"diagnostics": ds}
	for _, d := range ds {
		if d.Severity == DiagnosticError && (d.Rule == "import_allowed" || d.Rule == "static_import_in_script_mode") {
			module := importedModule(d.Message)
			details["module"] = module
			return newExecError(CodeImportNotAllowed, details, "Import not allowed: %s", module)
		}
	}
	var msgs []string
	for _, d := range ds {
		if d.Severity == DiagnosticError {
			msgs = append(msgs, d.Message)
		}
	}
	return newExecError(CodeValidationFailed, details, "Code validation failed: %s", strings.Join(msgs, "; "))
}

// importedModule is the quoted module name in an import rule's message.
func importedModule(msg string) string {
	i := strings.IndexByte(msg, '"')
	if i < 0 {
		return "(not a string literal)"
	}
	if s, err := strconv.QuotedPrefix(msg[i:]); err == nil {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return msg[i:]
}

// checkGlobalName checks the name of a variable or tool.
func checkGlobalName(name, what string) error {
	switch {
	case !IsIdentifier(name):
		return newExecError(CodeInvalidArgument, map[string]any{what: name}, "Invalid argument: %s name %q is not a JavaScript identifier", what, name)
	case name == "final_answer" || name == "console" || name == "globalThis" || strings.HasPrefix(name, reservedPrefix):
		return newExecError(CodeInvalidArgument, map[string]any{what: name}, "Invalid argument: %s name %q is reserved", what, name)
	}
	return nil
}
