package airlock_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/js"
)

// shownSrc builds a value holding functions and symbols at every place a
// value can hold them.
const shownSrc = `
	function named() {}
	const s = Symbol("x");
	const shown = {
		keep: 1, f: named, s, arrow: () => 1,
		arr: [1, named, s, 2],
		map: new Map([["a", named], [named, "dropped"], ["b", 2], [s, 3]]),
		set: new Set([1, named, s, 2]),
	};
`

// wantShown checks what shownSrc's value became: object properties and Map
// entries keyed by a function or symbol are left out, Set members too;
// array elements and Map values become undefined.
func wantShown(t *testing.T, got any) {
	t.Helper()
	u := js.Undefined{}
	want := map[string]any{
		"keep": 1.0,
		"arr":  []any{1.0, u, u, 2.0},
		"map":  &js.Map{Entries: []js.MapEntry{{Key: "a", Value: u}, {Key: "b", Value: 2.0}}},
		"set":  &js.Set{Values: []any{1.0, 2.0}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %s, want %s", airlock.Inspect(got), airlock.Inspect(want))
	}
}

// What still cannot cross fails the run with a clear error, functions and
// symbols aside: a Proxy (a function Proxy too) is refused before any trap.
func TestShown_ProxiesStillRefused(t *testing.T) {
	for _, src := range []string{
		`export default { p: new Proxy(function () {}, {}) }`,
		`export default [new Proxy({}, {})]`,
		`export default new WeakMap()`,
	} {
		res := runOpts(t, src, airlock.Options{Language: airlock.JavaScript})
		wantStatus(t, res, airlock.StatusError)
		if res.Error.Name != "DataCloneError" {
			t.Errorf("%s: error %v", src, res.Error)
		}
	}
}

// A run whose tool calls happened and whose result holds a function fails
// (the result cannot cross) with the calls' effects kept: a host function's
// work is never undone, and the error says which field to leave out.
func TestShown_ToolCallsThenFunctionResultFails(t *testing.T) {
	for _, rt := range []*airlock.Runtime{testRuntime(), workerRuntime()} {
		var calls []string
		res := runOn(t, rt, `
			const a = await send("a");
			send("b");
			export default { sent: [a, 2], cb: () => send("c"), tag: Symbol("t") };
		`, airlock.Options{Globals: map[string]any{
			"send": func(s string) float64 { calls = append(calls, s); return 1 },
		}})
		wantStatus(t, res, airlock.StatusError)
		if res.Error.Message != "result.cb: a function cannot leave the sandbox" {
			t.Fatalf("error = %v", res.Error)
		}
		if !reflect.DeepEqual(calls, []string{"a", "b"}) {
			t.Fatalf("calls = %v", calls)
		}
	}
}

func TestShown_ConsoleShowsFunctionsAndSymbolsAsNode(t *testing.T) {
	for _, rt := range []*airlock.Runtime{testRuntime(), workerRuntime()} {
		res := runOn(t, rt, shownSrc+`
			console.log("v", named, s, () => 1, shown);
			console.log(Symbol(), function () {}, 1n);
			console.log(class A {}, class {}, async function af() {}, function* g() {}, async function* () {}, Math.max);
			export default 1;
		`, airlock.Options{Language: airlock.JavaScript})
		wantResult(t, res, 1.0)
		if len(res.Logs) != 3 {
			t.Fatalf("logs %v", res.Logs)
		}
		a := res.Logs[0].Args
		if len(a) != 5 || a[0] != "v" || a[1] != "[Function: named]" || a[2] != "Symbol(x)" || a[3] != "[Function (anonymous)]" {
			t.Fatalf("log args = %s", airlock.Inspect(a))
		}
		wantShown(t, a[4])
		if msg := res.Logs[1].Message(); msg != "Symbol() [Function (anonymous)] 1n" {
			t.Fatalf("message = %q", msg)
		}
		if msg := res.Logs[2].Message(); msg != "[class A] [class (anonymous)] [AsyncFunction: af] [GeneratorFunction: g] [AsyncGeneratorFunction (anonymous)] [Function: max]" {
			t.Fatalf("message = %q", msg)
		}
	}
}

// A log with an argument that cannot cross at all still logs the rest; a
// function's name getter is not run to show it.
func TestShown_ConsoleProxyArgument(t *testing.T) {
	var got []any
	res := runOpts(t, `
		console.log("p", new Proxy({}, {}), () => 1, new Proxy(() => 1, {}));
		console.log(class { static get name() { report("get"); return "x" } });
		export default 1;
	`, airlock.Options{Language: airlock.JavaScript, Report: func(v any) { got = append(got, v) }})
	wantResult(t, res, 1.0)
	if msg := res.Logs[0].Message(); msg != "p [Proxy] [Function (anonymous)] [Proxy]" {
		t.Fatalf("message = %q", msg)
	}
	if msg := res.Logs[1].Message(); msg != "[class (anonymous)]" || len(got) != 0 {
		t.Fatalf("message = %q, reports %v", msg, got)
	}
}

// Host function arguments still need values: a function or symbol there is
// a clear error in the sandbox.
func TestShown_HostArgumentsStillRefuseFunctions(t *testing.T) {
	res := runOpts(t, `
		const out = [];
		for (const v of [{ f() {} }, [Symbol()], Symbol("s")]) {
			try { take(v); out.push("taken") } catch (e) { out.push(e.name) }
		}
		export default out;
	`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"take": func(v any) {}}})
	wantResult(t, res, []any{"DataCloneError", "DataCloneError", "DataCloneError"})
	// structuredClone keeps its DataCloneError too.
	res = runOpts(t, `let n = ""; try { structuredClone({ f() {} }) } catch (e) { n = e.name } export default n`,
		airlock.Options{Language: airlock.JavaScript})
	wantResult(t, res, "DataCloneError")
}

// Getters are read once and toJSON is not called on the way out; a
// function a getter returns cannot cross.
func TestShown_GettersOnceNoToJSON(t *testing.T) {
	var got []any
	res := runOpts(t, `
		export default {
			get g() { report("get"); return () => 1 },
			toJSON() { report("toJSON"); return "x" },
			p: new Proxy(function () {}, { get() { report("trap") }, getPrototypeOf() { report("trap") } }),
		};
	`, airlock.Options{Language: airlock.JavaScript, Report: func(v any) { got = append(got, v) }})
	wantStatus(t, res, airlock.StatusError)
	if res.Error.Name != "DataCloneError" || !reflect.DeepEqual(got, []any{"get"}) {
		t.Fatalf("error %v, reports %v", res.Error, got)
	}
	got = nil
	res = runOpts(t, `export default { get g() { report("get"); return () => 1 }, toJSON() { return "x" }, v: 1 }`,
		airlock.Options{Language: airlock.JavaScript, Report: func(v any) { got = append(got, v) }})
	wantStatus(t, res, airlock.StatusError)
	if res.Error.Message != "result.g: a function cannot leave the sandbox" || !reflect.DeepEqual(got, []any{"get"}) {
		t.Fatalf("error %v, reports %v", res.Error, got)
	}

}

func runOn(t *testing.T, rt *airlock.Runtime, src string, opts airlock.Options) *airlock.Result {
	t.Helper()
	ex, err := rt.Run(context.Background(), src, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return ex.Wait()
}

// Dropping, in a value shown (a console argument), keeps the rest intact:
// cycles and shared objects stay as they were, sparse arrays keep their
// length.
func TestShown_CyclesSharedAndSparse(t *testing.T) {
	for _, rt := range []*airlock.Runtime{testRuntime(), workerRuntime()} {
		res := runOn(t, rt, `
			const f = () => 1, shared = { n: 1 };
			const o = { f, shared, m: new Map([[f, shared], ["k", shared]]) };
			o.self = o;
			const sparse = [];
			sparse[3] = f; sparse[5] = shared;
			console.log([f, o, sparse, shared, Symbol()]);
			export default 1;
		`, airlock.Options{Language: airlock.JavaScript})
		wantResult(t, res, 1.0)
		r := res.Logs[0].Args[0].([]any)
		o := r[1].(map[string]any)
		shared := r[3].(map[string]any)
		sparse := r[2].([]any)
		u := js.Undefined{}
		if r[0] != u || r[4] != u || len(sparse) != 6 || sparse[3] != u ||
			reflect.ValueOf(o["self"]).Pointer() != reflect.ValueOf(o).Pointer() ||
			reflect.ValueOf(o["shared"]).Pointer() != reflect.ValueOf(shared).Pointer() ||
			reflect.ValueOf(sparse[5]).Pointer() != reflect.ValueOf(shared).Pointer() {
			t.Fatalf("logged %s", airlock.Inspect(r))
		}
		m := o["m"].(*js.Map)
		if _, ok := o["f"]; ok || len(m.Entries) != 1 || m.Entries[0].Key != "k" ||
			reflect.ValueOf(m.Entries[0].Value).Pointer() != reflect.ValueOf(shared).Pointer() {
			t.Fatalf("logged %s", airlock.Inspect(r))
		}
	}
}
