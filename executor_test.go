package airlock_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/js"
)

func mustRun(t *testing.T, ex *airlock.Executor, code string) *airlock.CodeOutput {
	t.Helper()
	out, err := ex.Run(context.Background(), code)
	if err != nil {
		t.Fatalf("Run(%q): %v", code, err)
	}
	return out
}

// §4: every method outside its states is ERR_INVALID_STATE; Init on READY
// and Cleanup on DEAD do nothing.
func TestExecutor_StateMachine(t *testing.T) {
	ctx := context.Background()
	ex, err := airlock.NewExecutor(airlock.ExecutorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, ex, airlock.StateNew)
	_, err = ex.Run(ctx, `1`)
	wantCode(t, err, "ERR_INVALID_STATE")
	wantCode(t, ex.SendVariables(ctx, map[string]any{"a": 1}), "ERR_INVALID_STATE")
	wantCode(t, ex.SendTools(ctx, map[string]any{"f": func() {}}), "ERR_INVALID_STATE")
	e := wantCode(t, ex.Cleanup(ctx), "ERR_INVALID_STATE")
	if e.Message != "Invalid executor state: NEW" || e.Retryable || e.Severity != airlock.SeverityError {
		t.Errorf("error = %+v", e)
	}
	if err := ex.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ex.Init(ctx); err != nil { // READY: no-op
		t.Fatal(err)
	}
	mustRun(t, ex, `globalThis.kept = 1`)
	if err := ex.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, ex, `return kept`); out.Output != 1.0 {
		t.Errorf("Init on READY lost state: %v", out.Output)
	}
	// RUNNING refuses Init, Cleanup and sends.
	done := make(chan struct{})
	if err := ex.SendTools(ctx, map[string]any{"sleepTool": airlock.Async(sleepTool)}); err != nil {
		t.Fatal(err)
	}
	go func() { defer close(done); _, _ = ex.Run(ctx, `await sleepTool(200)`) }()
	waitState(t, ex, airlock.StateRunning)
	wantCode(t, ex.Init(ctx), "ERR_INVALID_STATE")
	wantCode(t, ex.Cleanup(ctx), "ERR_INVALID_STATE")
	wantCode(t, ex.SendVariables(ctx, map[string]any{"a": 1}), "ERR_INVALID_STATE")
	<-done
	if err := ex.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ex.Cleanup(ctx); err != nil { // DEAD: no-op
		t.Fatal(err)
	}
	_, err = ex.Run(ctx, `1`)
	wantCode(t, err, "ERR_INVALID_STATE")
}

// An Init that fails leaves the executor DEAD with ERR_SES_INIT_FAILED, and
// a later Init succeeds.
func TestExecutor_InitFailure(t *testing.T) {
	ex, err := airlock.NewExecutor(airlock.ExecutorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e := wantCode(t, ex.Init(ctx), "ERR_SES_INIT_FAILED")
	if e.Severity != airlock.SeverityFatal || e.Retryable || !strings.HasPrefix(e.Message, "SES init failed: ") {
		t.Errorf("error = %+v", e)
	}
	if !errors.Is(e, context.Canceled) {
		t.Error("the cause is not the context's error")
	}
	wantState(t, ex, airlock.StateDead)
	if err := ex.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer ex.Cleanup(context.Background())
	mustRun(t, ex, `1`)
}

// The sandbox's one-time preparation is safe from many goroutines at once.
func TestExecutor_ConcurrentInit(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			ex, err := airlock.NewExecutor(airlock.ExecutorOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			if err := ex.Init(context.Background()); err != nil {
				t.Error(err)
				return
			}
			if out, err := ex.Run(context.Background(), `return 6 * 7`); err != nil || out.Output != 42.0 {
				t.Errorf("%v %v", out, err)
			}
			_ = ex.Cleanup(context.Background())
		})
	}
	wg.Wait()
}

// The system prompt promises that declared variables, functions, classes
// and imports remain available from one step to the next.
func TestExecutor_StatePersists(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{
		AuthorizedImports: []string{"x-ok"},
		Modules:           map[string]airlock.Module{"x-ok": {"double": func(x float64) float64 { return 2 * x }}},
	})
	mustRun(t, ex, `
const a = 1;
let b = 2, [c, d] = [3, 4];
var e = 5;
const {f, g: {h}} = {f: 6, g: {h: 7}};
function add(x, y) { return x + y }
class Counter { constructor() { this.n = 0 } inc() { return ++this.n } }
let count = 0;
const bump = () => ++count;
if (true) { var nested = "v" }
for (var i = 0; i < 3; i++) {}
const m = await import("x-ok");
let empty;
`)
	out := mustRun(t, ex, `return [a, b, c, d, e, f, h, add(2, 3), new Counter().inc(), nested, i, await m.double(21), empty]`)
	want := []any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 5.0, 1.0, "v", 3.0, 42.0, js.Undefined{}}
	if fmt.Sprint(out.Output) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", out.Output, want)
	}
	// Closures of an earlier step and later steps share the binding.
	mustRun(t, ex, `bump(); bump();`)
	if out := mustRun(t, ex, `count += 10; return bump()`); out.Output != 13.0 {
		t.Errorf("shared binding: %v, want 13", out.Output)
	}
	// A let, const or class declared again in a later step is a
	// SyntaxError, as in Node's REPL, and nothing of that step runs; var
	// and function may be declared again.
	_, err := ex.Run(context.Background(), `sideEffect = 1; const a = "again"`)
	if e := wantCode(t, err, "ERR_VALIDATION_FAILED"); !strings.Contains(e.Message, "Identifier 'a' has already been declared") {
		t.Errorf("redeclared: %v", e)
	}
	mustRun(t, ex, `var i = 10; function add(x, y) { return x * y }`)
	if out := mustRun(t, ex, `return [a, typeof sideEffect, i, add(2, 3)]`); fmt.Sprint(out.Output) != "[1 undefined 10 6]" {
		t.Errorf("after redeclarations: %v", out.Output)
	}
	// Names keep what the user sees: a function's and a class's name.
	if out := mustRun(t, ex, `return [add.name, Counter.name, bump.name]`); fmt.Sprint(out.Output) != "[add Counter bump]" {
		t.Errorf("names: %v", out.Output)
	}
	// Nested scopes stay local.
	mustRun(t, ex, `{ let local = 1 } function f2() { var inner = 1; let x = 2 } for (let k = 0; k < 1; k++) {}`)
	if out := mustRun(t, ex, `return [typeof local, typeof inner, typeof k, typeof f2]`); fmt.Sprint(out.Output) != "[undefined undefined undefined function]" {
		t.Errorf("scopes: %v", out.Output)
	}
}

func TestExecutor_VariablesAndTools(t *testing.T) {
	ctx := context.Background()
	ex := newExecutor(t, airlock.ExecutorOptions{})
	if err := ex.SendVariables(ctx, map[string]any{"question": "q?", "rows": []any{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, ex, `return [question, rows.length, typeof readTool, typeof final_answer]`); fmt.Sprint(out.Output) != "[q? 3 function function]" {
		t.Errorf("got %v", out.Output)
	}
	// The same name again replaces the value.
	if err := ex.SendVariables(ctx, map[string]any{"question": "new"}); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, ex, `return question`); out.Output != "new" {
		t.Errorf("got %v", out.Output)
	}
	// Tools are read-only: the step cannot replace one, or final_answer.
	for _, code := range []string{`readTool = 1`, `final_answer = () => 1`, `globalThis.readTool = 1`, `delete globalThis.readTool`} {
		_, err := ex.Run(ctx, code)
		wantCode(t, err, "ERR_RUNTIME_EXCEPTION")
	}
	// Nor shadow one with a declaration of its own.
	for _, code := range []string{`const readTool = 5`, `let final_answer`, `class readTool {}`} {
		_, err := ex.Run(ctx, code)
		wantCode(t, err, "ERR_VALIDATION_FAILED")
	}
	if out := mustRun(t, ex, `return typeof readTool`); out.Output != "function" {
		t.Errorf("readTool is %v", out.Output)
	}
	// Bad input is refused with a clear error.
	for _, tools := range []map[string]any{{"not-an-identifier": func() {}}, {"final_answer": func() {}}, {"x": 42}, {"__smol_x": func() {}}} {
		wantCode(t, ex.SendTools(ctx, tools), "ERR_INVALID_ARGUMENT")
	}
	wantCode(t, ex.SendVariables(ctx, map[string]any{"f": func() {}}), "ERR_INVALID_ARGUMENT")
	wantCode(t, ex.SendVariables(ctx, map[string]any{"console": 1}), "ERR_INVALID_ARGUMENT")
	// Cleanup and Init start clean.
	mustRun(t, ex, `const leftover = 1`)
	if err := ex.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ex.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, ex, `return [typeof leftover, typeof question, typeof readTool]`); fmt.Sprint(out.Output) != "[undefined undefined undefined]" {
		t.Errorf("after Cleanup+Init: %v", out.Output)
	}
}

// §7.2: the value of a step is what it returns; final_answer sets the flag.
func TestExecutor_Output(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	for code, want := range map[string]any{
		`1 + 1`:                      2.0,
		`const k = 1`:                js.Undefined{},
		`return {a: [1, "x"]}`:       map[string]any{"a": []any{1.0, "x"}},
		`return await readTool("p")`: "content:p",
		`const r = await readTool("p"); return r.length`: 9.0,
	} {
		out := mustRun(t, ex, code)
		if fmt.Sprint(out.Output) != fmt.Sprint(want) || out.IsFinalAnswer {
			t.Errorf("%s: output %#v final %v; want %#v", code, out.Output, out.IsFinalAnswer, want)
		}
	}
	out := mustRun(t, ex, `final_answer({answer: 42}); throw new Error("not reached")`)
	if !out.IsFinalAnswer || fmt.Sprint(out.Output) != "map[answer:42]" {
		t.Errorf("final answer: %#v", out)
	}
	out = mustRun(t, ex, `final_answer()`)
	if !out.IsFinalAnswer || out.Output != (js.Undefined{}) {
		t.Errorf("empty final answer: %#v", out)
	}
}

// final_answer ends the step as its call returns: nothing after it runs,
// not even a catch of the call. Its call used to answer undefined and let
// the code after it run until the stop's interrupt, sent from another
// goroutine, landed: a log after it was in some steps' output and not in
// others'.
func TestExecutor_NothingRunsAfterFinalAnswer(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	for i := 0; i < 20; i++ {
		out := mustRun(t, ex, `try { final_answer(7) } catch (e) { console.log("caught", e.message) }
			console.log("after"); for (let i = 0; i < 1e5; i++) {} console.log("later")`)
		if !out.IsFinalAnswer || out.Output != 7.0 || out.Logs != "" || len(out.LogEntries) != 0 {
			t.Fatalf("step %d: %#v", i, out)
		}
	}
}

// The host decides how a step ends: a try/catch cannot swallow the loop
// budget, final_answer, the timeout, or the memory limit.
func TestExecutor_HostDecidesTermination(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{MaxOperations: 100})
	for _, code := range []string{
		`try { while (true) {} } catch {} return "escaped"`,
		`try { while (true) {} } finally { return "escaped" }`,
		`for (;;) { try { for (;;) {} } catch (e) { console.log(e) } }`,
		`const spin = async () => { while (true) {} }; await spin().catch(() => {}); return "escaped"`,
	} {
		_, err := ex.Run(context.Background(), code)
		wantCode(t, err, "ERR_MAX_OPS_EXCEEDED")
	}
	for _, code := range []string{
		`try { final_answer(1) } catch {} final_answer(2)`,
		`try { final_answer(1) } finally { final_answer(2) }`,
		`await (async () => { final_answer(1) })().catch(() => {}); final_answer(2)`,
	} {
		out := mustRun(t, ex, code)
		if out.Output != 1.0 || !out.IsFinalAnswer {
			t.Errorf("%s: %v", code, out.Output)
		}
	}
	// A loop the budget does not catch (one long native call per turn) is
	// still stopped by the timeout, which a catch does not swallow either.
	ex2 := newExecutor(t, airlock.ExecutorOptions{MaxOperations: 1 << 30, Timeout: 100 * time.Millisecond})
	_, err := ex2.Run(context.Background(), `for (;;) { try { for (;;) {} } catch {} }`)
	wantCode(t, err, "ERR_EXEC_TIMEOUT")
	wantState(t, ex2, airlock.StateDirty)

	// A timeout also starves the VM, so one long native call ends at its
	// next allocation (here it ran until the 1 GiB limit, tens of seconds);
	// the executor is DIRTY and its VM discarded. A final answer or a spent
	// loop budget does not starve it: the next step runs on the same VM.
	ex4 := newExecutor(t, airlock.ExecutorOptions{Timeout: 100 * time.Millisecond, MemoryLimitBytes: 1 << 30})
	start := time.Now()
	_, err = ex4.Run(context.Background(), `const a = []; a.length = 2**32 - 1; try { JSON.stringify(a) } catch {} return 1`)
	wantCode(t, err, "ERR_EXEC_TIMEOUT")
	wantState(t, ex4, airlock.StateDirty)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the timeout took %v to stop a native call", d)
	}
	ex5 := newExecutor(t, airlock.ExecutorOptions{MaxOperations: 10})
	mustRun(t, ex5, `final_answer(1)`)
	_, err = ex5.Run(context.Background(), `for (;;) {}`)
	wantCode(t, err, "ERR_MAX_OPS_EXCEEDED")
	if out := mustRun(t, ex5, `return JSON.stringify({a: "x".repeat(100000)}).length`); out.Output != 100008.0 {
		t.Errorf("after a final answer and a spent budget: %v", out.Output)
	}

	ex3 := newExecutor(t, airlock.ExecutorOptions{MemoryLimitBytes: 16 << 20})
	_, err = ex3.Run(context.Background(), `const a = []; try { for (;;) a.push("x".repeat(1000) + a.length) } catch {} return a.length`)
	wantCode(t, err, "ERR_MEMORY_LIMIT_EXCEEDED")
	wantState(t, ex3, airlock.StateDirty)
}

// Loops in functions of an earlier step count against the step that runs
// them (and so does the call), every loop kind counts, and the budget is
// per step.
func TestExecutor_LoopBudget(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{MaxOperations: 1000})
	mustRun(t, ex, `function spin(n) { let i = 0; while (i < n) i++; return i }`)
	if out := mustRun(t, ex, `return spin(999)`); out.Output != 999.0 {
		t.Errorf("got %v", out.Output)
	}
	_, err := ex.Run(context.Background(), `return spin(1000)`)
	wantCode(t, err, "ERR_MAX_OPS_EXCEEDED")
	// The budget is the step's, over all its loops.
	_, err = ex.Run(context.Background(), `spin(600); spin(600)`)
	wantCode(t, err, "ERR_MAX_OPS_EXCEEDED")
	mustRun(t, ex, `spin(600)`) // a new step, a new budget
	for _, loop := range []string{
		`for (let i = 0; i < 2000; i++) {}`,
		`for (const k in Object.fromEntries(Array.from({length: 2000}, (_, i) => ["k" + i, i]))) {}`,
		`for (const x of Array(2000).fill(0)) {}`,
		`for await (const x of Array(2000).fill(0)) {}`,
		`{ let i = 0; while (i++ < 2000); }`,
		`{ let i = 0; do i++; while (i < 2000) }`,
		`const o = {m() { for (;;) {} }}; o.m()`,
		`class K { static { } run() { for (;;); } } new K().run()`,
		`label: for (;;) { for (;;) continue label }`,
	} {
		_, err := ex.Run(context.Background(), loop)
		if codeOf(err) != "ERR_MAX_OPS_EXCEEDED" {
			t.Errorf("%s: %v, want ERR_MAX_OPS_EXCEEDED", loop, err)
		}
	}
}

// Errors in a step point at the user's lines and columns.
func TestExecutor_ErrorPositions(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	code := "const xs = [1, 2, 3];\nfor (const x of xs) { if (x === 2) nope(x) }\n"
	_, err := ex.Run(context.Background(), code)
	e := wantCode(t, err, "ERR_RUNTIME_EXCEPTION")
	if e.Details["line"] != 2 || e.Details["column"] != 36 {
		t.Errorf("position %v:%v, want 2:36; stack %v", e.Details["line"], e.Details["column"], e.Details["stack"])
	}
	if e.Details["name"] != "ReferenceError" || !strings.Contains(e.Message, "nope") {
		t.Errorf("error %+v", e)
	}
	code = "let n = 0;\nwhile (n < 3) n++\nfunction f() {\n  for (;;) { throw new TypeError('deep') }\n}\nf()"
	_, err = ex.Run(context.Background(), code)
	e = wantCode(t, err, "ERR_RUNTIME_EXCEPTION")
	// The engine places a `new` at its argument list.
	if e.Details["line"] != 4 || e.Details["column"] != 33 {
		t.Errorf("position %v:%v, want 4:33; stack %v", e.Details["line"], e.Details["column"], e.Details["stack"])
	}
	if st, _ := e.Details["stack"].(string); !strings.Contains(st, "<code>:4:33") || !strings.Contains(st, "<code>:6:") {
		t.Errorf("stack %q", st)
	}
}

// §7.4: failures of tools and of code are told apart by what was thrown.
func TestExecutor_ToolOrRuntime(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	for code, want := range map[string]airlock.ErrorCode{
		`boomTool()`: "ERR_TOOL_PROXY_FAIL",
		`await Promise.all([boomAsync(), readTool("x")])`:                        "ERR_TOOL_PROXY_FAIL",
		`try { boomTool() } catch (e) { throw e }`:                               "ERR_TOOL_PROXY_FAIL",
		`readTool(() => 1)`:                                                      "ERR_TOOL_PROXY_FAIL", // an argument that cannot cross
		`try { boomTool() } catch (e) { throw new Error("mine: " + e.message) }`: "ERR_RUNTIME_EXCEPTION",
		`const r = await readTool("x"); r.missing.field`:                         "ERR_RUNTIME_EXCEPTION",
		`final_answer(new WeakMap())`:                                            "ERR_RUNTIME_EXCEPTION", // a function inside is dropped, a WeakMap is refused
	} {
		_, err := ex.Run(context.Background(), code)
		if codeOf(err) != want {
			t.Errorf("%s: %v, want %s", code, err, want)
		}
		wantState(t, ex, airlock.StateReady)
	}
	_, err := ex.Run(context.Background(), `console.log("before"); await boomAsync()`)
	e := wantCode(t, err, "ERR_TOOL_PROXY_FAIL")
	if e.Message != "Tool execution failed: async boom" || e.Details["tool"] != "boomAsync" || e.Logs != "before" {
		t.Errorf("error %+v", e)
	}
}

// §7.3: logs in order, levels filtered, cut at MaxLogBytes with the mark.
func TestExecutor_Logs(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{MaxLogBytes: 1024, CollectConsoleLevels: []airlock.LogLevel{airlock.LevelLog, airlock.LevelError}})
	out := mustRun(t, ex, `console.log("a", 1, {b: [true, null]}, undefined); console.info("hidden"); console.warn("hidden"); console.error("e"); console.debug("d")`)
	if want := "a 1 { b: [ true, null ] } undefined\ne\nd"; out.Logs != want { // as Node's console.log prints them
		t.Errorf("logs %q, want %q", out.Logs, want)
	}
	if len(out.LogEntries) != 3 || out.LogEntries[1].Level != airlock.LevelError || out.LogEntries[1].Message != "e" {
		t.Errorf("entries %+v", out.LogEntries)
	}
	out = mustRun(t, ex, `for (let i = 0; i < 500; i++) console.log("line " + i)`)
	if !strings.HasSuffix(out.Logs, "...[TRUNCATED]") || len(out.Logs) > 1024+len("...[TRUNCATED]") || len(out.Logs) < 1000 {
		t.Errorf("truncated logs: %d bytes, ends %q", len(out.Logs), out.Logs[max(0, len(out.Logs)-30):])
	}
	if !strings.HasPrefix(out.Logs, "line 0\nline 1\n") {
		t.Errorf("logs start %q", out.Logs[:20])
	}
	// Each step has its own logs.
	if out := mustRun(t, ex, `console.log("fresh")`); out.Logs != "fresh" {
		t.Errorf("logs %q", out.Logs)
	}
	// An error carries the logs up to it.
	_, err := ex.Run(context.Background(), `console.log("one"); console.error("two"); null.x`)
	if e := wantCode(t, err, "ERR_RUNTIME_EXCEPTION"); e.Logs != "one\ntwo" {
		t.Errorf("error logs %q", e.Logs)
	}
}

// What a step leaves pending ends with it: its callbacks never run later.
func TestExecutor_LeftoverWorkDropped(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	mustRun(t, ex, `globalThis.late = []; sleepTool(20).then(() => late.push("timer")); Promise.resolve().then(() => Promise.resolve()).then(() => late.push("chain"))`)
	time.Sleep(50 * time.Millisecond)
	if out := mustRun(t, ex, `await sleepTool(30); return late`); fmt.Sprint(out.Output) != "[chain]" {
		t.Errorf("late = %v, want only the chain that settled within the step", out.Output)
	}
	mustRun(t, ex, `Promise.resolve().then(() => { late.push("after final") }); final_answer(1)`)
	if out := mustRun(t, ex, `return late`); fmt.Sprint(out.Output) != "[chain]" {
		t.Errorf("late = %v", out.Output)
	}
}

// A context that ends stops the step: ERR_EXEC_TIMEOUT with the cause.
func TestExecutor_ContextEnds(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err := ex.Run(ctx, `while (true) { await sleepTool(1) }`)
	if codeOf(err) != "ERR_EXEC_TIMEOUT" && codeOf(err) != "ERR_MAX_OPS_EXCEEDED" {
		t.Fatalf("err = %v", err)
	}
	if codeOf(err) == "ERR_EXEC_TIMEOUT" && !errors.Is(err, context.Canceled) {
		t.Errorf("errors.Is(err, context.Canceled) = false: %v", err)
	}
}

// Queued steps fail when the running one leaves the sandbox DIRTY.
func TestExecutor_QueueFailsWhenDirty(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{RunConcurrency: airlock.RunQueue, MaxQueuedRuns: 2, Timeout: 100 * time.Millisecond})
	first := make(chan error, 1)
	go func() { _, err := ex.Run(context.Background(), `await sleepTool(99999)`); first <- err }()
	waitState(t, ex, airlock.StateRunning)
	_, err := ex.Run(context.Background(), `1`)
	wantCode(t, err, "ERR_INVALID_STATE")
	wantCode(t, <-first, "ERR_EXEC_TIMEOUT")
}

// §3.3, §6.2: invalid options are validation failures, not panics.
func TestExecutor_InvalidOptions(t *testing.T) {
	for _, o := range []airlock.ExecutorOptions{
		{MaxOperations: -1}, {Timeout: -time.Second}, {Timeout: time.Microsecond}, {RunConcurrency: "parallel"},
		{MaxQueuedRuns: -1}, {AuthorizedImports: []string{""}}, {MaxLogBytes: 100}, {MemoryLimitBytes: -1},
		{CollectConsoleLevels: []airlock.LogLevel{"trace"}},
	} {
		_, err := airlock.NewExecutor(o)
		e := wantCode(t, err, "ERR_VALIDATION_FAILED")
		if ds, _ := e.Details["diagnostics"].([]airlock.Diagnostic); len(ds) == 0 {
			t.Errorf("%+v: no diagnostics", o)
		}
	}
}

// An interrupt meant for a step that ended never lands on the next one
// (the halt of a final_answer step kept interrupting the VM for 2 ms).
func TestExecutor_StopDoesNotLeakIntoNextStep(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{MaxOperations: 10})
	for i := range 300 {
		if out := mustRun(t, ex, `final_answer(1)`); !out.IsFinalAnswer {
			t.Fatal("no final answer")
		}
		if i%3 == 0 {
			_, _ = ex.Run(context.Background(), `for (;;) {}`)
		}
		if out := mustRun(t, ex, `{ let s = 0; for (let i = 0; i < 5; i++) s += i; return s }`); out.Output != 10.0 {
			t.Fatalf("step %d: %v", i, out.Output)
		}
	}
}

// §5.2, §9.2: nothing of Node or the browser is there, and code cannot be
// generated from strings.
func TestExecutor_NoHostGlobals(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	out := mustRun(t, ex, `return ["process", "require", "module", "global", "fetch", "setTimeout", "window", "document", "eval", "SharedArrayBuffer"].filter((n) => typeof globalThis[n] !== "undefined")`)
	if fmt.Sprint(out.Output) != "[]" {
		t.Errorf("host globals present: %v", out.Output)
	}
	_, err := ex.Run(context.Background(), `return Function("return 1")()`)
	wantCode(t, err, "ERR_RUNTIME_EXCEPTION")
	// The diagnostics warn about them before the run.
	ds := airlock.ValidateCode(`process.env.HOME`, airlock.ExecutorOptions{})
	if len(ds) != 1 || ds[0].Rule != "forbidden_global_access" || ds[0].Severity != airlock.DiagnosticWarning || ds[0].Location == nil {
		t.Errorf("diagnostics %+v", ds)
	}
}

// §6: the validation API reports every rule, and PrepareProgram shows
// what runs.
func TestExecutor_ValidationAPI(t *testing.T) {
	opts := airlock.ExecutorOptions{AuthorizedImports: []string{"x-ok"}, MaxLogBytes: 2048}
	for code, want := range map[string]string{
		"":                               "code_non_empty",
		"let = ;":                        "syntax_valid",
		`import a from "x-ok"`:           "static_import_in_script_mode",
		`await import("nope")`:           "import_allowed",
		`let __smol_ops = 1e9`:           "reserved_identifier",
		`require("fs")`:                  "forbidden_global_access",
		`const x = await import("x-ok")`: "",
	} {
		var rules []string
		for _, d := range airlock.ValidateCode(code, opts) {
			if d.Rule != "log_budget_too_small" {
				rules = append(rules, d.Rule)
			}
		}
		if strings.Join(rules, ",") != want {
			t.Errorf("%q: rules %v, want %s", code, rules, want)
		}
	}
	ds := airlock.ValidateCode("1", airlock.ExecutorOptions{MaxOperations: -5, Timeout: -1})
	if len(ds) != 2 || ds[0].Rule != "max_operations_valid" || ds[1].Rule != "timeout_valid" {
		t.Errorf("option rules %+v", ds)
	}
	ds = airlock.ValidateCode("1", opts)
	if len(ds) != 1 || ds[0].Rule != "log_budget_too_small" || ds[0].Severity != airlock.DiagnosticInfo {
		t.Errorf("info rule %+v", ds)
	}
	// The engine counts the loops and keeps the declarations: the code
	// runs as it was written.
	p := airlock.PrepareProgram("const a = 1;\nwhile (a) break", airlock.ExecutorOptions{})
	if p.HasErrors() || p.TransformedCode != p.OriginalCode {
		t.Errorf("prepared %q", p.TransformedCode)
	}
	// A blocked step never runs and names its rule in the details.
	ex := newExecutor(t, airlock.ExecutorOptions{})
	_, err := ex.Run(context.Background(), "   ")
	e := wantCode(t, err, "ERR_VALIDATION_FAILED")
	if ds, _ := e.Details["diagnostics"].([]airlock.Diagnostic); len(ds) != 1 || ds[0].Rule != "code_non_empty" {
		t.Errorf("details %+v", e.Details)
	}
	wantState(t, ex, airlock.StateReady)
}

// A variable sent under a name a step declared with let or var replaces
// its value; a constant stays constant.
func TestExecutor_SendVariableOverDeclaredName(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	mustRun(t, ex, `const fixed = 1; var v = 1; let data = 1; function get() { return data }`)
	wantCode(t, ex.SendVariables(context.Background(), map[string]any{"fixed": 2}), "ERR_INVALID_ARGUMENT")
	if err := ex.SendVariables(context.Background(), map[string]any{"v": 2}); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, ex, `return [fixed, v]`); fmt.Sprint(out.Output) != "[1 2]" {
		t.Errorf("got %v", out.Output)
	}
	if err := ex.SendVariables(context.Background(), map[string]any{"data": "sent"}); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, ex, `return [data, get()]`); fmt.Sprint(out.Output) != "[sent sent]" {
		t.Errorf("got %v", out.Output)
	}
}

// A step whose context ends while it waits in the queue leaves the queue.
func TestExecutor_QueuedContextEnds(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{RunConcurrency: airlock.RunQueue, MaxQueuedRuns: 1})
	first := make(chan error, 1)
	go func() { _, err := ex.Run(context.Background(), `await sleepTool(300)`); first <- err }()
	waitState(t, ex, airlock.StateRunning)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := ex.Run(ctx, `1`)
	wantCode(t, err, "ERR_EXEC_TIMEOUT")
	if !errors.Is(err, context.DeadlineExceeded) || ex.Queued() != 0 {
		t.Errorf("err %v, queued %d", err, ex.Queued())
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	wantState(t, ex, airlock.StateReady)
}

// A tool that calls runtime.Goexit (a test's t.FailNow, say) ends the
// session's goroutine: the step fails with a clear error instead of hanging
// until its timeout or crashing the host, the executor is DIRTY, and
// Cleanup and Init start afresh.
func TestExecutor_ToolGoexit(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{Timeout: time.Minute})
	if err := ex.SendTools(context.Background(), map[string]any{"quit": func() { runtime.Goexit() }}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := ex.Run(context.Background(), `quit(); return 1`)
	wantCode(t, err, "ERR_RUNTIME_EXCEPTION")
	if !strings.Contains(err.Error(), "runtime.Goexit") || time.Since(start) > 30*time.Second { // well before the timeout
		t.Fatalf("%v after %v", err, time.Since(start))
	}
	wantState(t, ex, airlock.StateDirty)
	if err := ex.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := ex.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, ex, `return 2`); out.Output != 2.0 {
		t.Fatalf("after Init: %v", out.Output)
	}
}

// A step whose value is a promise finishes with what it settles to, and
// the wait reads nothing of the promise: a subclass's then is not called
// and Promise.prototype.then is not read (test262 counted one then too
// many in a finally, and a lookup of constructor after a for await, when a
// step ended with the promise). A thenable that is not a promise is still
// settled through its then.
func TestExecutor_StepPromiseIsAwaitedUnseen(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	mustRun(t, ex, `globalThis.thens = 0; globalThis.reads = 0;
		globalThis.P = class extends Promise { then(a, b) { thens++; return super.then(a, b) } };
		const then = Promise.prototype.then;
		Object.defineProperty(Promise.prototype, "then", { get() { reads++; return then }, configurable: true });
		undefined`)
	if out := mustRun(t, ex, `P.resolve(1)`); out.Output != 1.0 {
		t.Errorf("a subclass's promise: %v", out.Output)
	}
	if out := mustRun(t, ex, `Promise.resolve(2)`); out.Output != 2.0 {
		t.Errorf("a promise: %v", out.Output)
	}
	if out := mustRun(t, ex, `[thens, reads]`); fmt.Sprint(out.Output) != "[0 0]" {
		t.Errorf("then calls and reads: %v, want [0 0]", out.Output)
	}
	_, err := ex.Run(context.Background(), `P.reject(new Error("no"))`)
	wantCode(t, err, "ERR_RUNTIME_EXCEPTION")
	if out := mustRun(t, ex, `({ then(r) { r(3) } })`); out.Output != 3.0 {
		t.Errorf("a thenable: %v", out.Output)
	}
}
