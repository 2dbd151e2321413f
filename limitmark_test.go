package airlock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// oomLimit is the heap of the runs that hit it: small under -race, where
// the engine is 40 times slower.
var oomLimit = map[bool]int64{false: 16 << 20, true: 6 << 20}[raceEnabled]

// oomCaught allocates until the memory limit refuses, catches the error,
// and finishes as if nothing happened.
const oomCaught = `let caught = 0;
for (let i = 0; i < 3; i++) {
  try { const a = []; for (;;) a.push(new Array(1e4).fill(i)) } catch (e) { caught++ }
}
export default caught`

// A run in which the engine refused an allocation for the memory limit
// settles memory, whatever the program did afterwards: it used to settle
// success when it caught the error and finished, in process and in worker
// mode.
func TestMemoryLimit_CaughtStillMemory(t *testing.T) {
	for _, tc := range []struct {
		name string
		rt   *airlock.Runtime
	}{{"in process", testRuntime()}, {"worker", workerRuntime()}} {
		t.Run(tc.name, func(t *testing.T) {
			ex, err := tc.rt.Run(context.Background(), oomCaught, airlock.Options{Language: airlock.JavaScript, MemoryLimitBytes: oomLimit})
			if err != nil {
				t.Fatal(err)
			}
			res := ex.Wait()
			wantStatus(t, res, airlock.StatusMemory)
			if res.Result != nil {
				t.Fatalf("result %v with status memory", res.Result)
			}
		})
	}
}

// The mark of a refused allocation belongs to the run that made it: runs
// after one that hit the limit report their own errors, with their
// messages. A later TypeError used to be reported as memory, its message
// lost.
func TestMemoryLimit_MarkBelongsToItsRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		rt   *airlock.Runtime
	}{
		{"prepared", airlock.NewRuntime(airlock.RuntimeConfig{Prepared: 1})},
		{"unprepared", airlock.NewRuntime(airlock.RuntimeConfig{Prepared: -1})},
		{"worker", workerRuntime()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i < 3; i++ {
				ex, err := tc.rt.Run(context.Background(), oomCaught, airlock.Options{Language: airlock.JavaScript, MemoryLimitBytes: oomLimit})
				if err != nil {
					t.Fatal(err)
				}
				wantStatus(t, ex.Wait(), airlock.StatusMemory)
				ex, err = tc.rt.Run(context.Background(), `null.boom`, airlock.Options{Language: airlock.JavaScript, MemoryLimitBytes: oomLimit})
				if err != nil {
					t.Fatal(err)
				}
				res := ex.Wait()
				wantStatus(t, res, airlock.StatusError)
				if res.Error.Name != "TypeError" || !strings.Contains(res.Error.Message, "null") {
					t.Fatalf("run after a memory run: %s: %s", res.Error.Name, res.Error.Message)
				}
			}
		})
	}
}

// In an executor, a step that hits the limit fails with ERR_MEMORY_LIMIT
// even when it catches the error, and the next step's TypeError is its own.
func TestMemoryLimit_ExecutorSteps(t *testing.T) {
	e, err := airlock.NewExecutor(airlock.ExecutorOptions{MemoryLimitBytes: 32 << 20, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Cleanup(context.Background())
	if err := e.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err = e.Run(context.Background(), `let caught = 0; try { const a = []; for (;;) a.push(new Array(1e4).fill(1)) } catch (e) { caught++ } caught`)
	var xe *airlock.ExecutorError
	if !asExecErr(err, &xe) || xe.Code != airlock.CodeMemoryLimit {
		t.Fatalf("memory step: %v", err)
	}
	if err := e.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err = e.Run(context.Background(), `null.boom`)
	if !asExecErr(err, &xe) || xe.Code != airlock.CodeRuntimeException || !strings.Contains(xe.Message, "TypeError") {
		t.Fatalf("next step: %v", err)
	}
}

func asExecErr(err error, xe **airlock.ExecutorError) bool { return errors.As(err, xe) }
