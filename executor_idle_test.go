package airlock_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// TestExecutor_SessionImageIsolation: executors start from one image of a
// started session (console and final_answer set up); what one executor's
// steps write (the global object, prototypes, the console, a tool of the
// same name) never reaches the next executor, fresh or made from the
// rewound instance of a closed one, and every executor's final_answer and
// console still work.
func TestExecutor_SessionImageIsolation(t *testing.T) {
	ctx := context.Background()
	start := func() *airlock.Executor {
		t.Helper()
		ex, err := airlock.NewExecutor(airlock.ExecutorOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := ex.Init(ctx); err != nil {
			t.Fatal(err)
		}
		return ex
	}
	const probe = `console.log("hi"); return [typeof leak, ({}).polluted, typeof console.log, Object.isFrozen(Object.prototype), JSON.stringify([1])]`
	const clean = `["undefined",null,"function",false,"[1]"]`
	check := func(ex *airlock.Executor, what string) {
		t.Helper()
		out := mustRun(t, ex, probe)
		if got := jsonText(t, out.Output); got != clean {
			t.Errorf("%s: %s, want %s", what, got, clean)
		}
		if out.Logs != "hi" {
			t.Errorf("%s: logs %+v", what, out.Logs)
		}
		fa := mustRun(t, ex, `final_answer("done")`)
		if !fa.IsFinalAnswer || fa.Output != "done" {
			t.Errorf("%s: final_answer gave %+v", what, fa)
		}
	}
	var dirty []*airlock.Executor
	for i := range 3 {
		ex := start()
		check(ex, "an executor")
		mustRun(t, ex, `globalThis.leak = 1; Object.prototype.polluted = true; console.log = null;
			JSON.stringify = () => "hijacked"; Object.freeze(Object.prototype); return 1`)
		if i == 0 {
			fresh := start()
			check(fresh, "an executor beside a dirty one")
			fresh.Cleanup(ctx)
		}
		dirty = append(dirty, ex)
	}
	for _, ex := range dirty {
		ex.Cleanup(ctx)
	}
	for range 3 { // from the rewound instances of the closed ones
		ex := start()
		check(ex, "an executor after dirty ones closed")
		ex.Cleanup(ctx)
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestExecutor_IdleTrim: an executor idle for a while gives back the pages
// its steps wrote that hold its image's bytes again, and its next steps
// run as before, with what earlier steps declared.
func TestExecutor_IdleTrim(t *testing.T) {
	defer airlock.SetIdleTrim(5 * time.Millisecond)()
	ctx := context.Background()
	ex, err := airlock.NewExecutor(airlock.ExecutorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Cleanup(ctx)
	if err := ex.Init(ctx); err != nil {
		t.Fatal(err)
	}
	mustRun(t, ex, `const rows = [1, 2, 3]; let total = 0; return 1`)
	busy := airlock.WrittenPages(ex)
	if busy < 0 {
		t.Skip("the written pages cannot be read here")
	}
	// The trim lands once the session has waited idle; poll for it (the
	// do of WrittenPages is a task too, and delays it).
	idle := busy
	for range 200 {
		time.Sleep(20 * time.Millisecond)
		if idle = airlock.WrittenPages(ex); idle < busy {
			break
		}
	}
	t.Logf("image pages written: %d after a step, %d once idle", busy, idle)
	if idle >= busy {
		t.Fatalf("an idle executor kept all %d pages", busy)
	}
	for i := range 3 {
		out := mustRun(t, ex, `total += rows.reduce((a, b) => a + b, 0); console.log(total); return total`)
		if want := float64(6 * (i + 1)); out.Output != want {
			t.Errorf("step %d after the trim: %v, want %v", i, out.Output, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// BenchmarkExecutorStepAfterTrim: what the trim of an idle executor costs
// its next step (the pages it writes again, its call stack grown again),
// against a step after a step: µs-step/op times the step alone.
func BenchmarkExecutorStepAfterTrim(b *testing.B) {
	ctx := context.Background()
	for _, trim := range []bool{false, true} {
		name := "after-step"
		if trim {
			name = "after-trim"
		}
		b.Run(name, func(b *testing.B) {
			ex := newExecutor(b, airlock.ExecutorOptions{})
			pages := 0
			var spent time.Duration
			for i := 0; i < b.N; i++ {
				if trim {
					pages += airlock.TrimNow(ex)
				}
				start := time.Now()
				if _, err := ex.Run(ctx, `return [1, 2, 3].map(x => x * 2).length`); err != nil {
					b.Fatal(err)
				}
				spent += time.Since(start)
			}
			b.ReportMetric(float64(spent.Microseconds())/float64(b.N), "µs-step/op")
			b.ReportMetric(float64(pages)/float64(b.N), "pages-trimmed/op")
		})
	}
}
