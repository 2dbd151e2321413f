package integration_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// newExecutor makes and initializes an executor with the demo tools, and
// cleans it up at the end of the test.
func newExecutor(t testing.TB, opts airlock.ExecutorOptions) *airlock.Executor {
	t.Helper()
	ex, err := airlock.NewExecutor(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := ex.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := ex.SendTools(context.Background(), map[string]any{
		"sleepTool": airlock.Async(sleepTool),
		"boomTool":  func() error { return errors.New("boom") },
		"boomAsync": airlock.Async(func() (string, error) { return "", errors.New("async boom") }),
		"readTool":  airlock.Async(func(path string) string { return "content:" + path }),
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s := ex.State(); s == airlock.StateReady || s == airlock.StateDirty {
			if err := ex.Cleanup(context.Background()); err != nil {
				t.Error(err)
			}
		}
	})
	return ex
}

// codeOf is the code of an executor error, "" for nil or another error.
func codeOf(err error) airlock.ErrorCode {
	var e *airlock.ExecutorError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func wantCode(t *testing.T, err error, want airlock.ErrorCode) *airlock.ExecutorError {
	t.Helper()
	var e *airlock.ExecutorError
	if !errors.As(err, &e) {
		t.Fatalf("error = %v, want an *ExecutorError %s", err, want)
	}
	if e.Code != want {
		t.Fatalf("error code = %s (%v), want %s", e.Code, err, want)
	}
	return e
}

func wantState(t *testing.T, ex *airlock.Executor, want airlock.ExecutorState) {
	t.Helper()
	if s := ex.State(); s != want {
		t.Fatalf("state = %s, want %s", s, want)
	}
}

// CF-01: init -> cleanup -> init with the default configuration.
func TestCF01_LifecycleLoop(t *testing.T) {
	ctx := context.Background()
	ex, err := airlock.NewExecutor(airlock.ExecutorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ex.Init(ctx); err != nil {
		t.Fatal(err)
	}
	wantState(t, ex, airlock.StateReady)
	if err := ex.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	wantState(t, ex, airlock.StateDead)
	if err := ex.Init(ctx); err != nil {
		t.Fatal(err)
	}
	wantState(t, ex, airlock.StateReady)
	if err := ex.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
}

// CF-02: with reject, a second concurrent Run fails with ERR_INVALID_STATE.
func TestCF02_RejectConcurrentRun(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{RunConcurrency: airlock.RunReject})
	ctx := context.Background()
	first := make(chan error, 1)
	go func() {
		_, err := ex.Run(ctx, `await sleepTool(300)`)
		first <- err
	}()
	waitState(t, ex, airlock.StateRunning)
	_, err := ex.Run(ctx, `await sleepTool(300)`)
	if codeOf(err) != "ERR_INVALID_STATE" {
		t.Errorf("second run: %v, want ERR_INVALID_STATE", err)
	}
	if err := <-first; err != nil {
		t.Errorf("first run: %v", err)
	}
}

// waitState waits until the executor reaches a state.
func waitState(t *testing.T, ex *airlock.Executor, s airlock.ExecutorState) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ex.State() != s; {
		if time.Now().After(deadline) {
			t.Fatalf("state is %s, never %s", ex.State(), s)
		}
		time.Sleep(time.Millisecond)
	}
}

// CF-03: with queue, two concurrent runs both succeed, in FIFO order.
func TestCF03_QueueFIFO(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{RunConcurrency: airlock.RunQueue, MaxQueuedRuns: 10})
	ctx := context.Background()
	// The order is read inside the sandbox, where the steps ran: the order
	// in which two goroutines return from Run is the scheduler's (the test
	// once recorded it after Run returned, and runB's goroutine could append
	// before runA's).
	var outs [2]*airlock.CodeOutput
	var errs [2]error
	var wg sync.WaitGroup
	run := func(i int, code string) {
		defer wg.Done()
		outs[i], errs[i] = ex.Run(ctx, code)
	}
	wg.Add(2)
	go run(0, `await sleepTool(100); globalThis.trail = (globalThis.trail ?? "") + "A"; final_answer(globalThis.trail)`)
	waitState(t, ex, airlock.StateRunning)
	go run(1, `globalThis.trail = (globalThis.trail ?? "") + "B"; final_answer(globalThis.trail)`)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	if outs[0].Output != "A" || outs[1].Output != "AB" {
		t.Errorf("outputs = %v, %v; want A, then AB (runB after runA)", outs[0].Output, outs[1].Output)
	}
}

// CF-04: with MaxQueuedRuns 1, the third concurrent run fails at once.
func TestCF04_QueueCapacity(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{RunConcurrency: airlock.RunQueue, MaxQueuedRuns: 1})
	ctx := context.Background()
	results := make(chan error, 2)
	go func() { _, err := ex.Run(ctx, `await sleepTool(300)`); results <- err }()
	waitState(t, ex, airlock.StateRunning)
	go func() {
		_, err := ex.Run(ctx, `final_answer(2)`)
		results <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); ex.Queued() != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second run never entered the queue")
		}
	}
	_, err := ex.Run(ctx, `final_answer(3)`)
	wantCode(t, err, "ERR_INVALID_STATE")
	// It failed without waiting: the first run still runs, the second waits.
	if q := ex.Queued(); q != 1 {
		t.Errorf("after the third run failed, %d runs wait; want 1", q)
	}
	for range 2 {
		if err := <-results; err != nil {
			t.Errorf("queued run: %v", err)
		}
	}
}

// CF-05: a static import is refused even when authorized, and nothing runs.
func TestCF05_StaticImportRefused(t *testing.T) {
	ran := false
	ex := newExecutor(t, airlock.ExecutorOptions{AuthorizedImports: []string{"node:fs"}})
	if err := ex.SendTools(context.Background(), map[string]any{"sideEffect": func() { ran = true }}); err != nil {
		t.Fatal(err)
	}
	_, err := ex.Run(context.Background(), `import fs from "node:fs";
sideEffect();`)
	wantCode(t, err, "ERR_IMPORT_NOT_ALLOWED")
	if ran {
		t.Error("the user code ran")
	}
	wantState(t, ex, airlock.StateReady)
}

// CF-06: a dynamic import of an authorized module passes; another fails.
func TestCF06_DynamicImportAllowList(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{
		AuthorizedImports: []string{"x-ok"},
		Modules:           map[string]airlock.Module{"x-ok": {"answer": 42.0}},
	})
	out, err := ex.Run(context.Background(), `const m = await import("x-ok"); return m.answer`)
	if err != nil {
		t.Fatalf("authorized import: %v", err)
	}
	if out.Output != 42.0 {
		t.Errorf("output = %v, want 42", out.Output)
	}
	_, err = ex.Run(context.Background(), `await import("x-denied")`)
	wantCode(t, err, "ERR_IMPORT_NOT_ALLOWED")
}

// CF-07: a tool that throws, sync or async, is ERR_TOOL_PROXY_FAIL; the
// executor is READY again.
func TestCF07_ToolFailure(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	for _, code := range []string{`await boomTool()`, `await boomAsync()`} {
		_, err := ex.Run(context.Background(), code)
		wantCode(t, err, "ERR_TOOL_PROXY_FAIL")
		wantState(t, ex, airlock.StateReady)
	}
}

// CF-08: an error of the code itself is ERR_RUNTIME_EXCEPTION; READY again.
func TestCF08_RuntimeException(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	for _, code := range []string{`throw new Error("x")`, `undefinedVariable.foo`} {
		_, err := ex.Run(context.Background(), code)
		wantCode(t, err, "ERR_RUNTIME_EXCEPTION")
		wantState(t, ex, airlock.StateReady)
	}
}

// CF-09: the loop budget is recognized by its code, not its message.
func TestCF09_MaxOperations(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{MaxOperations: 10})
	_, err := ex.Run(context.Background(), `while(true){}`)
	e := wantCode(t, err, "ERR_MAX_OPS_EXCEEDED")
	if !errors.Is(err, airlock.ErrMaxOpsExceeded) {
		t.Error("errors.Is(err, ErrMaxOpsExceeded) = false")
	}
	if e.Severity != airlock.SeverityError || !e.Retryable {
		t.Errorf("severity %s retryable %v", e.Severity, e.Retryable)
	}
	wantState(t, ex, airlock.StateReady)
}

// CF-10: a timeout leaves the executor DIRTY; cleanup and init recover it.
func TestCF10_DirtyRecovery(t *testing.T) {
	ctx := context.Background()
	ex := newExecutor(t, airlock.ExecutorOptions{Timeout: 50 * time.Millisecond})
	_, err := ex.Run(ctx, `await sleepTool(999999)`)
	wantCode(t, err, "ERR_EXEC_TIMEOUT")
	wantState(t, ex, airlock.StateDirty)
	if err := ex.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	wantState(t, ex, airlock.StateDead)
	if err := ex.Init(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := ex.Run(ctx, `final_answer("ok")`)
	if err != nil {
		t.Fatal(err)
	}
	if out.Output != "ok" || !out.IsFinalAnswer {
		t.Errorf("output %v final %v", out.Output, out.IsFinalAnswer)
	}
}
