package airlock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// A host function takes any number of arguments: more primitives than the
// engine's host call carries cross encoded.
func TestHostCall_ManyPrimitiveArguments(t *testing.T) {
	count := func(args ...any) int { return len(args) }
	res := runOpts(t, `export default [count(1,2,3,4,5,6,7,8,9,10,11,12,13,14), count(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15),
		count(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16), count(...Array(40).fill(1)), count(...Array(40).fill(1), {})]`,
		airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"count": count}})
	wantResult(t, res, []any{14.0, 15.0, 16.0, 40.0, 41.0})
}

// A run settles as soon as its export has resolved, even while the program
// keeps queueing microtasks forever.
func TestRun_SettlesDespiteEndlessMicrotasks(t *testing.T) {
	res := runOpts(t, `async function spin() { for (;;) await null } spin(); export default 1`,
		airlock.Options{Language: airlock.JavaScript})
	wantResult(t, res, 1.0)
	res = runOpts(t, `queueMicrotask(function again() { queueMicrotask(again) }); throw new TypeError("boom")`,
		airlock.Options{Language: airlock.JavaScript})
	wantStatus(t, res, airlock.StatusError)
	if res.Error.Message != "boom" {
		t.Fatalf("%+v", res.Error)
	}
}

// A step stopped by its loop budget whose program then runs a long native
// call is still stopped for good by its time, and Cleanup returns.
func TestExecutor_TimeoutAfterBudgetStopsNativeCall(t *testing.T) {
	ex, err := airlock.NewExecutor(airlock.ExecutorOptions{MaxOperations: 1, Timeout: 100 * time.Millisecond, MemoryLimitBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := ex.Init(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = ex.Run(ctx, `let i = 0; for (;;) { if (i++ > 0) { const a = []; a.length = 2**32 - 1; try { JSON.stringify(a) } catch {} } }`)
	var xe *airlock.ExecutorError
	if !errors.As(err, &xe) || !strings.Contains(string(xe.Code), "MAX_OPS") && !strings.Contains(string(xe.Code), "TIMEOUT") {
		t.Fatalf("%v", err)
	}
	done := make(chan error, 1)
	go func() { done <- ex.Cleanup(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Cleanup still waits for the step's native call 5 s later (it ran 18-24 s before it was stopped for good)")
	}
}

// A panic in a callback the engine calls (here Options.Log) fails the run
// as an error of the host call; it is not taken for a runtime.Goexit.
func TestRun_CallbackPanicIsAnError(t *testing.T) {
	res := runOpts(t, `console.log("x"); export default 1`, airlock.Options{Language: airlock.JavaScript,
		Log: func(airlock.Log) { panic("boom") }})
	wantStatus(t, res, airlock.StatusError)
	if strings.Contains(res.Error.Message, "Goexit") {
		t.Fatalf("%+v", res.Error)
	}
}
