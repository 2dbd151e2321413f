package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/internal/instrument"
	"github.com/airlockrun/airlock/internal/source"
)

// scriptLogBytes bounds a plain script's console output as the value
// budget of a run bounds a module's: the text given back to the model is
// cut to Config.MaxOutput afterwards.
const scriptLogBytes = 64 << 20

// executeScript runs code that has no import or export declaration as a
// plain script: a step of a fresh executor, sloppy global code as Node's
// REPL runs it, with the rules of a CodeAgent step (top-level await, the
// completion value as the result, TypeScript erased). js is the code with
// its TypeScript erased, prog js parsed, erased the map back to code.
func (it *Interpreter) executeScript(ctx context.Context, code, js string, prog *instrument.Program, erased *source.StepMap, x *execution,
	globals map[string]any, timeout time.Duration, start time.Time) *Execution {
	src, edit := prepareScript(js, prog, x.asyncable)
	modules, sources := it.registeredModules()
	names := append(slices.Collect(maps.Keys(modules)), slices.Collect(maps.Keys(sources))...)
	slices.Sort(names)
	fail := func(err error) *Execution {
		return &Execution{Status: airlock.StatusError, Error: err.Error(), Duration: time.Since(start)}
	}
	ex, err := airlock.NewExecutor(airlock.ExecutorOptions{
		Sloppy:            true,
		Timeout:           timeout,
		MemoryLimitBytes:  it.cfg.MemoryLimitBytes,
		MaxOperations:     math.MaxInt, // code mode bounds time and memory, not loops
		MaxLogBytes:       scriptLogBytes,
		AuthorizedImports: names,
		Modules:           modules,
		SourceModules:     sources,
	})
	if err != nil {
		return fail(err)
	}
	if err := ex.Init(ctx); err != nil {
		return fail(err)
	}
	defer ex.Cleanup(context.Background())
	input := globals["input"]
	delete(globals, "input")
	if err := ex.SendTools(ctx, globals); err != nil {
		return fail(err)
	}
	if err := ex.SendVariables(ctx, map[string]any{"input": input}); err != nil {
		return fail(err)
	}
	out, err := ex.Run(ctx, src)
	e := &Execution{Status: airlock.StatusSuccess, Duration: time.Since(start)}
	e.Calls, e.Usage = x.tr.drain()
	e.Fetches = x.tr.drainFetches()
	var logs []airlock.Log
	if err == nil {
		logs = entryLogs(out.LogEntries)
	}
	x.mu.Lock()
	e.Output, e.Done = strings.Join(x.output, "\n"), x.done
	e.Logs = mergeLogs(logs, x.logs)
	x.mu.Unlock()
	if err == nil {
		e.Result = out.Output
		if out.IsFinalAnswer { // the CodeAgent's final_answer(value) is complete()'s twin
			e.Done = true
		}
		return e
	}
	var ee *airlock.ExecutorError
	if !errors.As(err, &ee) {
		e.Status, e.Error = airlock.StatusError, err.Error()
		return e
	}
	if len(ee.LogEntries) > 0 {
		x.mu.Lock()
		e.Logs = mergeLogs(entryLogs(ee.LogEntries), x.logs)
		x.mu.Unlock()
	}
	e.Status = airlock.StatusError
	switch ee.Code {
	case airlock.CodeExecTimeout:
		e.Status = airlock.StatusTerminated
		if _, byTime := ee.Details["timeoutMs"]; byTime {
			e.Error, e.Timeout = fmt.Sprintf("Execution timed out after %dms", timeout.Milliseconds()), true
			return e
		}
		e.Error = "terminated: " + context.Cause(ctx).Error()
		return e
	case airlock.CodeMemoryLimit:
		e.Status = airlock.StatusMemory
		e.Error = ee.Message
		return e
	case airlock.CodeRuntimeException, airlock.CodeToolProxyFail:
		name, _ := ee.Details["name"].(string)
		msg, ok := ee.Details["message"].(string)
		switch {
		case !ok:
			e.Error = strings.TrimPrefix(ee.Message, "Runtime exception: ")
		case name == "":
			e.Error = "Error: " + msg
		default:
			e.Error = name + ": " + msg
		}
	case airlock.CodeValidationFailed, airlock.CodeImportNotAllowed:
		e.Status = airlock.StatusLinkError // as a module that does not compile or link
		e.Error = strings.TrimPrefix(ee.Message, "Code validation failed: ")
		if ds, _ := ee.Details["diagnostics"].([]airlock.Diagnostic); len(ds) > 0 && ds[0].Rule == "syntax_valid" {
			e.Error = "SyntaxError: " + ds[0].Message
		}
	default:
		e.Error = ee.Message
	}
	if line, col := errorPosition(ee); line > 0 {
		e.Line, e.Column = erased.Position(line, edit.column(line, col))
		e.Context = sourceLine(code, e.Line)
	} else if line, col := x.thrownAt(); line > 0 && !failedCall(e) {
		e.Line, e.Column = erased.Position(line, col)
		e.Context = sourceLine(code, e.Line)
	}
	return e
}

// prepareScript is prepareSource for a plain script, whose value the
// executor finds itself: the calls whose promise the code uses call their
// twins, and each throw statement tells its position first.
func prepareScript(code string, prog *instrument.Program, asyncable func(string) bool) (string, sourceEdits) {
	return editSource(code, prog, asyncable, false)
}

// entryLogs are an executor's console entries as code mode's logs.
func entryLogs(entries []airlock.LogEntry) []airlock.Log {
	var logs []airlock.Log
	for _, l := range entries {
		logs = append(logs, airlock.Log{Level: l.Level, Args: []any{l.Message}, Time: l.Time})
	}
	return logs
}
