package airlock_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// testRuntime is shared by the tests, made at its first use (a runtime
// prepares sandboxes at once, which would start the engine in every test
// process, TestFirstRunsOfAProcess's child included); each run still gets a
// fresh sandbox.
// Its safety cap is far above any test's need: the long sort tests
// take 11 s on a loaded 2-core machine, and a cap that fires under load fails
// a test for the machine's sake, not the code's.
var testRuntime = sync.OnceValue(func() *airlock.Runtime {
	return airlock.NewRuntime(airlock.RuntimeConfig{MaxDuration: 60 * time.Second})
})

// workerRuntime runs in worker processes. A long grace: a kill would end
// the other runs of a worker too.
var workerRuntime = sync.OnceValue(func() *airlock.Runtime {
	return airlock.NewRuntime(airlock.RuntimeConfig{Workers: 2, MaxDuration: 20 * time.Second, WorkerGrace: 10 * time.Second})
})

func runOpts(t *testing.T, src string, opts airlock.Options) *airlock.Result {
	t.Helper()
	ex, err := testRuntime().Run(context.Background(), src, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return ex.Wait()
}

func run(t *testing.T, src string) *airlock.Result {
	t.Helper()
	return runOpts(t, src, airlock.Options{})
}

func wantStatus(t *testing.T, res *airlock.Result, want airlock.Status) {
	t.Helper()
	if res.Status != want {
		b, _ := json.Marshal(res)
		t.Fatalf("status = %s, want %s; result: %s", res.Status, want, b)
	}
	if (res.Error == nil) != (want == airlock.StatusSuccess) {
		t.Fatalf("error = %v with status %s", res.Error, res.Status)
	}
}

func wantResult(t *testing.T, res *airlock.Result, want any) {
	t.Helper()
	wantStatus(t, res, airlock.StatusSuccess)
	if !reflect.DeepEqual(res.Result, want) {
		t.Fatalf("result = %#v, want %#v", res.Result, want)
	}
}

// evalJS runs a JavaScript entry and returns its default export.
func evalJS(t *testing.T, src string) any {
	t.Helper()
	res := runOpts(t, src, airlock.Options{Language: airlock.JavaScript})
	wantStatus(t, res, airlock.StatusSuccess)
	return res.Result
}

// comparable is a result's JSON, indented, less what changes from run to
// run: the duration, the memory, the logs' timestamps.
func comparable(t *testing.T, res *airlock.Result) string {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	delete(m, "durationMs")
	delete(m, "memoryUsedBytes")
	for _, l := range m["logs"].([]any) {
		delete(l.(map[string]any), "timestamp")
	}
	b, _ = json.MarshalIndent(m, "", "  ")
	return string(b)
}

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

// sleepTool waits ms milliseconds, or until the step ends.
func sleepTool(ctx context.Context, ms float64) error {
	select {
	case <-time.After(time.Duration(ms * float64(time.Millisecond))):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
