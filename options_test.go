package airlock_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// Invalid options are a clear error from Run, never a panic and never a run.
func TestOptionsValidation(t *testing.T) {
	for _, c := range []struct {
		name string
		opts airlock.Options
		want string
	}{
		{"negative memory", airlock.Options{MemoryLimitBytes: -1}, "MemoryLimitBytes"},
		{"unknown language", airlock.Options{Language: 7}, "Language"},
		{"filename leaves the root", airlock.Options{Filename: "../x.ts"}, "Filename"},
		{"module key not relative", airlock.Options{Modules: map[string]string{"/helpers.js": ""}}, "relative"},
		{"module key leaves the root", airlock.Options{Modules: map[string]string{"./../x.js": ""}}, "leaves"},
		{"import key relative", airlock.Options{Imports: map[string]airlock.Module{"./fs": {}}}, "bare specifier"},
		{"import key URL", airlock.Options{Imports: map[string]airlock.Module{"https://x": {}}}, "bare specifier"},
		{"nil import", airlock.Options{Imports: map[string]airlock.Module{"fs": nil}}, "nil"},
		{"global not an identifier", airlock.Options{Globals: map[string]any{"a-b": 1}}, "identifier"},
		{"global reserved word", airlock.Options{Globals: map[string]any{"class": 1}}, "identifier"},
		{"report twice", airlock.Options{Globals: map[string]any{"report": 1}, Report: func(any) {}}, "report"},
		{"Async of a non-function", airlock.Options{Globals: map[string]any{"f": airlock.Async(42)}}, "function"},
		{"bad host function shape", airlock.Options{Globals: map[string]any{"f": func() (int, int) { return 0, 0 }}}, "error"},
		{"channel argument", airlock.Options{Execute: airlock.Execute{Args: []any{make(chan int)}}}, "could not be cloned"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ex, err := testRuntime().Run(context.Background(), `export default 1`, c.opts)
			if err == nil || ex != nil {
				t.Fatalf("Run = %v, %v; want an error", ex, err)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "airlock: ") {
				t.Fatalf("error %q does not say %q", err, c.want)
			}
		})
	}
}

// Valid but unusual options are accepted.
func TestOptionsAccepted(t *testing.T) {
	res := runOpts(t, `export default [typeof $, typeof _x1, typeof ünïcode]`, airlock.Options{
		Globals:  map[string]any{"$": 1, "_x1": "s", "ünïcode": true},
		Filename: "dir/sub/agent.ts",
	})
	wantResult(t, res, []any{"number", "string", "boolean"})
}

// A closed Runtime refuses runs; Close is idempotent.
func TestRuntimeClose(t *testing.T) {
	rt := airlock.NewRuntime(airlock.RuntimeConfig{Prepared: 3})
	ex, err := rt.Run(context.Background(), `export default 1`, airlock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	rt.Close()
	if res := ex.Wait(); res.Status != airlock.StatusSuccess {
		t.Fatalf("a run in progress at Close: %s", res.Status)
	}
	if _, err := rt.Run(context.Background(), `export default 1`, airlock.Options{}); !errors.Is(err, airlock.ErrClosed) {
		t.Fatalf("Run after Close: %v", err)
	}
}

// Close releases every prepared sandbox, also those still being prepared
// when it is called: none is left waiting for a run that never comes.
func TestRuntimeCloseWhilePreparing(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := 0; i < 20; i++ {
		rt := airlock.NewRuntime(airlock.RuntimeConfig{Prepared: 4})
		time.Sleep(time.Duration(i%5) * 100 * time.Microsecond)
		rt.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines left after Close, %d before", n, before)
	}
}

// A Runtime that prepares no sandboxes still runs.
func TestRuntimeNoPrepared(t *testing.T) {
	rt := airlock.NewRuntime(airlock.RuntimeConfig{Prepared: -1})
	defer rt.Close()
	ex, err := rt.Run(context.Background(), `export default 2`, airlock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantResult(t, ex.Wait(), 2.0)
}

// A terminate before the sandbox starts running still settles terminated.
func TestTerminateBeforeStart(t *testing.T) {
	rt := airlock.NewRuntime(airlock.RuntimeConfig{Prepared: -1})
	defer rt.Close()
	ex, _ := rt.Run(context.Background(), `export default 2`, airlock.Options{})
	ex.Terminate("early")
	res := ex.Wait()
	if res.Status != airlock.StatusTerminated && res.Status != airlock.StatusSuccess {
		t.Fatalf("status %s", res.Status)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ex, _ = rt.Run(ctx, `for (;;) {}`, airlock.Options{})
	wantStatus(t, ex.Wait(), airlock.StatusTerminated)
}

func TestModules_PackageNames(t *testing.T) {
	res := runOpts(t, `
		import _ from "lodash";
		import { shout } from "@acme/text";
		export default shout(_.chunk([1, 2, 3], 2).length + "");`, airlock.Options{
		Modules: map[string]string{
			"lodash":                          `import { helper } from "./lodash-helper.js"; export default { chunk: (a, n) => helper(a, n) };`,
			"./node_modules/lodash-helper.js": `export const helper = (a, n) => { const out = []; for (let i = 0; i < a.length; i += n) out.push(a.slice(i, i + n)); return out; };`,
			"@acme/text":                      `export const shout = (s) => s + "!";`,
		},
	})
	wantResult(t, res, "2!")

	res = runOpts(t, `import x from "nope"; export default x`, airlock.Options{Modules: map[string]string{"lodash": `export default 1`}})
	wantStatus(t, res, airlock.StatusLinkError)
	if res.Error.Specifier != "nope" {
		t.Fatalf("specifier = %q", res.Error.Specifier)
	}
	// A package's error names the package.
	res = runOpts(t, `import f from "bad"; export default f()`, airlock.Options{Modules: map[string]string{"bad": "export default () => { throw new Error('inside'); }"}})
	wantStatus(t, res, airlock.StatusError)
	if !strings.Contains(res.Error.Stack, "bad") {
		t.Fatalf("stack = %q", res.Error.Stack)
	}
	for _, bad := range []string{"/abs", "node:fs", "https://x/y.js", ".hidden", "pkg/../../x"} {
		if _, err := testRuntime().Run(context.Background(), "export default 1", airlock.Options{Modules: map[string]string{bad: "export default 1"}}); err == nil {
			t.Errorf("Modules key %q accepted", bad)
		}
	}
	if _, err := testRuntime().Run(context.Background(), "export default 1", airlock.Options{
		Modules: map[string]string{"x": "export default 1"}, Imports: map[string]airlock.Module{"x": {}}}); err == nil {
		t.Error("a package in both Modules and Imports was accepted")
	}
}
