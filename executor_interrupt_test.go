package airlock_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/js"
)

// interruptible is an executor whose steps have a long time, with a tool
// started() that tells the test the step is running, and the tools given.
func interruptible(t *testing.T, opts airlock.ExecutorOptions, tools map[string]any) (*airlock.Executor, <-chan struct{}) {
	t.Helper()
	opts.Timeout = time.Minute
	ex := newExecutor(t, opts)
	started := make(chan struct{}, 1)
	tools["started"] = func() { started <- struct{}{} }
	if err := ex.SendTools(context.Background(), tools); err != nil {
		t.Fatal(err)
	}
	return ex, started
}

// runInterrupted runs code, interrupts it once started() was called, and
// returns the step's error.
func runInterrupted(t *testing.T, ex *airlock.Executor, started <-chan struct{}, code string) error {
	t.Helper()
	errs := make(chan error, 1)
	go func() {
		_, err := ex.Run(context.Background(), code)
		errs <- err
	}()
	<-started
	if !ex.Interrupt() {
		t.Error("Interrupt reported no step running")
	}
	return <-errs
}

func TestExecutorInterrupt_KeepsState(t *testing.T) {
	ex, started := interruptible(t, airlock.ExecutorOptions{MaxOperations: 1 << 40}, map[string]any{})
	mustRun(t, ex, "const kept = 42; var counted = 0;")
	if ex.Interrupt() {
		t.Error("Interrupt reported a step running between steps")
	}
	// A busy loop, even one that catches everything, stops at the
	// interrupt; what it did before stays.
	err := runInterrupted(t, ex, started, "counted = 1; started(); while (true) { try { while (true) {} } catch {} }")
	var ee *airlock.ExecutorError
	if !errors.As(err, &ee) || !errors.Is(err, airlock.ErrInterrupted) {
		t.Fatalf("err = %v, want ERR_INTERRUPTED", err)
	}
	if ee.Message != "Execution interrupted" || !ee.Retryable {
		t.Errorf("error = %+v", ee)
	}
	if s := ex.State(); s != airlock.StateReady {
		t.Fatalf("state after the interrupt = %s, want READY", s)
	}
	out := mustRun(t, ex, "[kept, counted]")
	if got, ok := out.Output.([]any); !ok || len(got) != 2 || got[0] != 42.0 || got[1] != 1.0 {
		t.Errorf("after the interrupt: %#v", out.Output)
	}
}

// A step waiting in a tool that watches its context ends when the tool
// returns, synchronous or asynchronous, and keeps the session.
func TestExecutorInterrupt_ToolInFlight(t *testing.T) {
	wait := func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}
	ex, started := interruptible(t, airlock.ExecutorOptions{}, map[string]any{
		"waitSync":  wait,
		"waitAsync": airlock.Async(wait),
	})
	mustRun(t, ex, "let n = 1")
	for _, code := range []string{"n++; started(); waitSync()", "n++; started(); await waitAsync()", "n++; started(); try { await waitAsync() } catch {} while (true) {}"} {
		if err := runInterrupted(t, ex, started, code); !errors.Is(err, airlock.ErrInterrupted) {
			t.Fatalf("%s: err = %v, want ERR_INTERRUPTED", code, err)
		}
		if s := ex.State(); s != airlock.StateReady {
			t.Fatalf("%s: state = %s, want READY", code, s)
		}
	}
	if out := mustRun(t, ex, "n"); out.Output != 4.0 {
		t.Errorf("n = %v, want 4", out.Output)
	}
}

// A tool that does not return is abandoned after the grace, and the
// executor is DIRTY, as after a timeout.
func TestExecutorInterrupt_ToolThatDoesNotReturn(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{}, 1)
	defer close(release)
	// The interrupt comes once the tool is entered: between two calls it
	// would stop the step's JavaScript, and keep the session.
	ex, _ := interruptible(t, airlock.ExecutorOptions{}, map[string]any{
		"stuck": func() { entered <- struct{}{}; <-release },
	})
	err := runInterrupted(t, ex, entered, "stuck()")
	if !errors.Is(err, airlock.ErrInterrupted) {
		t.Fatalf("err = %v, want ERR_INTERRUPTED", err)
	}
	if s := ex.State(); s != airlock.StateDirty {
		t.Fatalf("state = %s, want DIRTY", s)
	}
}

// ExecutorOptions.Log is given each kept console call while the step
// runs: a tool called after a log sees it given already.
func TestExecutorLog_AsItHappens(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	ex := newExecutor(t, airlock.ExecutorOptions{
		CollectConsoleLevels: []airlock.LogLevel{airlock.LevelLog, airlock.LevelWarn},
		Log: func(l airlock.LogEntry) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, string(l.Level)+":"+l.Message)
		},
	})
	if err := ex.SendTools(context.Background(), map[string]any{"seen": func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(seen, ",")
	}}); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, ex, "console.log('one'); console.info('not kept'); console.warn('two', 2); const during = seen(); console.log('three'); during")
	if out.Output != "log:one,warn:two 2" {
		t.Errorf("seen during the step = %q", out.Output)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"log:one", "warn:two 2", "log:three"}; !slices.Equal(seen, want) {
		t.Errorf("seen = %q, want %q", seen, want)
	}
	if out.Logs != "one\ntwo 2\nthree" || len(out.LogEntries) != 3 {
		t.Errorf("logs = %q, entries %d", out.Logs, len(out.LogEntries))
	}
}

// A step's value is shown, not carried out: what cannot cross is left out
// of it, as functions and symbols are (test262 found a WeakMap or a Proxy
// as a step's last expression failing the step with a DataCloneError).
// final_answer still carries its value out, under a run's rule.
func TestExecutor_StepValueLeavesOutWhatCannotCross(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	for _, code := range []string{"new WeakMap()", "new Proxy({}, {})", "new WeakRef({})", "Object(Symbol())", "new FinalizationRegistry(() => {})"} {
		out := mustRun(t, ex, code)
		if _, undef := out.Output.(js.Undefined); !undef {
			t.Errorf("%s: %#v, want undefined", code, out.Output)
		}
	}
	out := mustRun(t, ex, "({ a: 1, w: new WeakMap(), p: new Proxy({}, {}), s: [1, new WeakSet()], m: new Map([[1, new WeakRef({})], [2, 'two']]) })")
	got, _ := out.Output.(map[string]any)
	if len(got) != 3 || got["a"] != 1.0 {
		t.Fatalf("value = %#v, want a, s and m only", out.Output)
	}
	if s, _ := got["s"].([]any); len(s) != 2 || s[0] != 1.0 {
		t.Errorf("s = %#v", got["s"])
	}
	_, err := ex.Run(context.Background(), "final_answer({ w: new WeakMap() })")
	if e := wantCode(t, err, "ERR_RUNTIME_EXCEPTION"); !strings.Contains(e.Message, "argument 1.w: a WeakMap cannot leave the sandbox") {
		t.Errorf("final_answer: %s", e.Message)
	}
	out = mustRun(t, ex, "console.log(new WeakMap(), 1)")
	if out.Logs != "[WeakMap] 1" {
		t.Errorf("console: %q", out.Logs)
	}
}

// Cleanup of an executor whose step was abandoned in a tool call (its
// context ended while the tool ignored it) returns at once: the
// sandbox is released when the call returns. It used to wait for the
// tool, so an agent's execution with the default configuration returned
// only when the tool did, whatever its timeout.
func TestExecutorCleanup_DoesNotWaitForAbandonedTool(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{}, 1)
	ex, err := airlock.NewExecutor(airlock.ExecutorOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := ex.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := ex.SendTools(context.Background(), map[string]any{"stuck": func() {
		entered <- struct{}{}
		<-release
	}}); err != nil {
		t.Fatal(err)
	}
	// The step's context ends once the tool is entered.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-entered; cancel() }()
	_, err = ex.Run(ctx, "stuck()")
	wantCode(t, err, "ERR_EXEC_TIMEOUT")
	if s := ex.State(); s != airlock.StateDirty {
		t.Fatalf("state = %s, want DIRTY", s)
	}
	if err := ex.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(release) // only now: Cleanup did not wait for it
	if s := ex.State(); s != airlock.StateDead {
		t.Errorf("state = %s, want DEAD", s)
	}
}
