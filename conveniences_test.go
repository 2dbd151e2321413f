package airlock_test

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// Both modes of running: in process and in worker processes.
func bothRuntimes(t *testing.T, f func(t *testing.T, rt *airlock.Runtime)) {
	t.Run("process", func(t *testing.T) { f(t, testRuntime()) })
	t.Run("worker", func(t *testing.T) { f(t, workerRuntime()) })
}

// Options.Timeout stops a run that outlasts it, as Terminate does, with a
// message that names it; a run that ends first is not touched.
func TestOptionsTimeout(t *testing.T) {
	bothRuntimes(t, func(t *testing.T, rt *airlock.Runtime) {
		ex, err := rt.Run(context.Background(), `while (true) {}`, airlock.Options{Timeout: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		res := ex.Wait()
		wantStatus(t, res, airlock.StatusTerminated)
		if res.Error.Name != "TerminatedError" || res.Error.Message != "terminated: stopped after 50ms (Options.Timeout)" {
			t.Fatalf("error = %+v", res.Error)
		}

		// A host call that waits is stopped too.
		ex, err = rt.Run(context.Background(), `await wait(); export default 1`, airlock.Options{
			Timeout: 20 * time.Millisecond,
			Globals: map[string]any{"wait": airlock.Async(func(ctx context.Context) { <-ctx.Done() })},
		})
		if err != nil {
			t.Fatal(err)
		}
		res = ex.Wait()
		wantStatus(t, res, airlock.StatusTerminated)
		if !strings.Contains(res.Error.Message, "(Options.Timeout)") {
			t.Fatalf("error = %+v", res.Error)
		}

		ex, err = rt.Run(context.Background(), `export default 6 * 7`, airlock.Options{Timeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if res := ex.Wait(); res.Status != airlock.StatusSuccess || res.Result != 42.0 {
			t.Fatalf("%+v", res)
		}

		if _, err := rt.Run(context.Background(), `export default 1`, airlock.Options{Timeout: -time.Second}); err == nil ||
			!strings.Contains(err.Error(), "Options.Timeout") {
			t.Fatalf("a negative timeout: err = %v", err)
		}
	})
}

// Terminate before the timeout: the first reason counts.
func TestOptionsTimeout_TerminateFirst(t *testing.T) {
	ex, err := testRuntime().Run(context.Background(), `while (true) {}`, airlock.Options{Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ex.Terminate("by hand")
	if res := ex.Wait(); res.Error == nil || res.Error.Message != "terminated: by hand" {
		t.Fatalf("%+v", res.Error)
	}
}

// report() is there without Options.Report, its values in Result.Reports;
// a "report" in Globals replaces it.
func TestReport_WithoutCallback(t *testing.T) {
	bothRuntimes(t, func(t *testing.T, rt *airlock.Runtime) {
		ex, err := rt.Run(context.Background(), `report(1); report({two: [2]}); export default typeof report`, airlock.Options{})
		if err != nil {
			t.Fatal(err)
		}
		res := ex.Wait()
		wantStatus(t, res, airlock.StatusSuccess)
		if res.Result != "function" || !reflect.DeepEqual(res.Reports, []any{1.0, map[string]any{"two": []any{2.0}}}) {
			t.Fatalf("result %v, reports %v", res.Result, res.Reports)
		}
		if got := ex.Reports(); !reflect.DeepEqual(got, res.Reports) {
			t.Fatalf("Execution.Reports = %v", got)
		}

		var mine []any
		ex, err = rt.Run(context.Background(), `report('x'); export default 0`, airlock.Options{
			Globals: map[string]any{"report": func(v any) { mine = append(mine, v) }},
		})
		if err != nil {
			t.Fatal(err)
		}
		res = ex.Wait()
		wantStatus(t, res, airlock.StatusSuccess)
		if len(res.Reports) != 0 || !reflect.DeepEqual(mine, []any{"x"}) {
			t.Fatalf("Result.Reports %v, the global's %v", res.Reports, mine)
		}
	})
}

// Options.Log is called with each console call as it is made: before the
// program goes on, in order, the same calls as Result.Logs.
func TestOptionsLog(t *testing.T) {
	bothRuntimes(t, func(t *testing.T, rt *airlock.Runtime) {
		var mu sync.Mutex
		var streamed []airlock.Log
		count := func() int { mu.Lock(); defer mu.Unlock(); return len(streamed) }
		var seenAtStep []int
		step := airlock.Async(func() error {
			// A log made before this call has been given to Log by now:
			// in process synchronously; in a worker the log message comes
			// before the call on the same pipe.
			seenAtStep = append(seenAtStep, count())
			return nil
		})
		ex, err := rt.Run(context.Background(), `
			console.log('one', 1);
			await step();
			console.warn({two: 2});
			console.error('three');
			await step();
			export default 0`, airlock.Options{
			Globals: map[string]any{"step": step},
			Log: func(l airlock.Log) {
				mu.Lock()
				streamed = append(streamed, l)
				mu.Unlock()
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		res := ex.Wait()
		wantStatus(t, res, airlock.StatusSuccess)
		if !reflect.DeepEqual(seenAtStep, []int{1, 3}) {
			t.Fatalf("logs given to Log at each step: %v", seenAtStep)
		}
		if len(res.Logs) != 3 || !reflect.DeepEqual(streamed, res.Logs) {
			t.Fatalf("streamed %+v\nResult.Logs %+v", streamed, res.Logs)
		}
		if streamed[0].Message() != "one 1" || streamed[1].Level != airlock.LevelWarn {
			t.Fatalf("streamed %+v", streamed)
		}

		// A console of the caller's own: Log is not called. (In worker
		// mode a function cannot be inside a global's value.)
		if rt == workerRuntime() {
			return
		}
		called := false
		ex, err = rt.Run(context.Background(), `console.log('x'); export default 0`, airlock.Options{
			Globals: map[string]any{"console": map[string]any{"log": func(...any) {}}},
			Log:     func(airlock.Log) { called = true },
		})
		if err != nil {
			t.Fatal(err)
		}
		wantStatus(t, ex.Wait(), airlock.StatusSuccess)
		if called {
			t.Fatal("Log was called with the caller's console")
		}
	})
}

// The built-in report yields to a module's own binding of the name: a
// program that imports or declares a report of its own still links.
func TestReport_YieldsToOwnBinding(t *testing.T) {
	var bridged []any
	for _, src := range []string{
		`import { report } from 'supervisor'; report(1); export default 0`,
		`import { report as r } from 'supervisor'; import * as report from 'supervisor'; report.report(1); export default 0`,
		`import { x, report } from 'supervisor'; report(1); export default 0`,
		`import * as supervisor from 'supervisor'; const report = (v) => supervisor.report(v); report(1); export default 0`,
		`import * as supervisor from 'supervisor'; let { report } = supervisor; report(1); export default 0`,
		`import * as supervisor from 'supervisor'; const { a: { report } } = { a: supervisor }; report(1); export default 0`,
		`import * as supervisor from 'supervisor'; var [report] = [supervisor.report]; report(1); export default 0`,
		`import * as supervisor from 'supervisor'; class report {}; supervisor.report(1); export default 0`,
	} {
		bridged = nil
		ex, err := testRuntime().Run(context.Background(), src, airlock.Options{
			Language: airlock.JavaScript,
			Imports:  map[string]airlock.Module{"supervisor": {"report": func(v any) { bridged = append(bridged, v) }, "x": 1}},
		})
		if err != nil {
			t.Fatal(err)
		}
		res := ex.Wait()
		if res.Status != airlock.StatusSuccess || len(bridged) != 1 || len(res.Reports) != 0 {
			t.Fatalf("%s: %s, bridged %v", src, res.Text(src), bridged)
		}
	}
	// Uses of the name that bind nothing keep the built-in.
	for _, src := range []string{
		"// report the answer\nreport(1); export default 0",
		`const o = { report: 1 }; [1].forEach(report); export default o.report`,
		`function f(report) { return report } report(f(1)); export default 0`,
	} {
		ex, err := testRuntime().Run(context.Background(), src, airlock.Options{Language: airlock.JavaScript})
		if err != nil {
			t.Fatal(err)
		}
		if res := ex.Wait(); res.Status != airlock.StatusSuccess || len(res.Reports) != 1 {
			t.Fatalf("%s: %s", src, res.Text(src))
		}
	}
}
