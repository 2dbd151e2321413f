package integration_test

// One test per rule and example of the runCode contract (seed 000); each
// test names its section.

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/js"
)

// §1, §2.3: the caller-facing example, with imports, globals and a report.
func TestSeed_2_3_Example(t *testing.T) {
	var reported []any
	var mu sync.Mutex
	res := runOpts(t, `
    import { readFile } from 'fs';
    import { report } from 'supervisor';

    const message = await getMessage();
    if (/username/.test(message)) {
      report({ topic: 'username', message });
    }

    export async function scan() {
      return { scanned: true };
    }
  `, airlock.Options{
		Execute: airlock.Execute{Fn: "scan", Args: []any{}},
		Imports: map[string]airlock.Module{
			"fs": {"readFile": airlock.Async(func(path string) (string, error) { return "", nil })},
			"supervisor": {"report": func(payload any) {
				mu.Lock()
				reported = append(reported, payload)
				mu.Unlock()
			}},
		},
		Globals: map[string]any{
			"console":    map[string]any{"log": func(args ...any) {}},
			"getMessage": airlock.Async(func() string { return "latest username message" }),
		},
	})
	wantResult(t, res, map[string]any{"scanned": true})
	want := []any{map[string]any{"topic": "username", "message": "latest username message"}}
	if !reflect.DeepEqual(reported, want) {
		t.Fatalf("supervisor.report got %v, want %v", reported, want)
	}
	if len(res.Logs) != 0 {
		t.Fatalf("logs = %v; the caller supplied its own console", res.Logs)
	}
}

// §2.2: terminate is idempotent, its reason surfaces, running flips.
func TestSeed_2_2_Handle(t *testing.T) {
	ex, err := testRuntime.Run(context.Background(), `while (true) {}`, airlock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !ex.Running() {
		t.Fatal("Running() = false before settlement")
	}
	ex.Terminate("30s budget")
	ex.Terminate("second reason")
	res := ex.Wait()
	wantStatus(t, res, airlock.StatusTerminated)
	if !strings.Contains(res.Error.Message, "30s budget") || strings.Contains(res.Error.Message, "second") {
		t.Fatalf("message = %q", res.Error.Message)
	}
	if ex.Running() {
		t.Fatal("Running() = true after settlement")
	}
	ex.Terminate("after") // a no-op once settled
	if ex.Wait() != res {
		t.Fatal("Wait returned a different result")
	}
}

// §2.2: reports is a live, append-only view.
func TestSeed_2_2_LiveReports(t *testing.T) {
	gate := make(chan struct{})
	seen := make(chan struct{})
	ex, err := testRuntime.Run(context.Background(), `
		report(1); report({two: 2});
		await wait();
		report(3);
		export default 0;
	`, airlock.Options{
		Report:  func(any) {},
		Globals: map[string]any{"wait": airlock.Async(func() { close(seen); <-gate })},
	})
	if err != nil {
		t.Fatal(err)
	}
	<-seen
	if got := ex.Reports(); !reflect.DeepEqual(got, []any{1.0, map[string]any{"two": 2.0}}) {
		t.Fatalf("live reports = %v", got)
	}
	close(gate)
	res := ex.Wait()
	wantStatus(t, res, airlock.StatusSuccess)
	if !reflect.DeepEqual(res.Reports, []any{1.0, map[string]any{"two": 2.0}, 3.0}) {
		t.Fatalf("Result.Reports = %v", res.Reports)
	}
	if !reflect.DeepEqual(ex.Reports(), res.Reports) {
		t.Fatal("the handle's reports differ from the result's")
	}
}

// §2.2: a budget layered on by the caller.
func TestSeed_2_2_CallerBudget(t *testing.T) {
	ex, _ := testRuntime.Run(context.Background(), `for (;;) {}`, airlock.Options{})
	budget := time.AfterFunc(50*time.Millisecond, func() { ex.Terminate("30s budget") })
	res := ex.Wait()
	budget.Stop()
	wantStatus(t, res, airlock.StatusTerminated)
}

// §3, §3.1: execute selects a named export and passes args.
func TestSeed_3_1_Increment(t *testing.T) {
	res := runOpts(t, `
    export function increment(n: number): number {
      return n + 1;
    }

    export default function fallback() {
      return 123;
    }
  `, airlock.Options{Execute: airlock.Execute{Fn: "increment", Args: []any{100}}})
	wantResult(t, res, 101.0)
}

// §3.1: omitted execute behaves as {fn: 'default', args: []}.
func TestSeed_3_1_DefaultExecute(t *testing.T) {
	wantResult(t, run(t, `export function increment(n) { return n + 1 }
export default function fallback() { return 123 }`), 123.0)
}

// §3.1: a missing selected export is a link error.
func TestSeed_3_1_MissingExport(t *testing.T) {
	res := runOpts(t, `export const a = 1`, airlock.Options{Execute: airlock.Execute{Fn: "scan"}})
	wantStatus(t, res, airlock.StatusLinkError)
	if !strings.Contains(res.Error.Message, "scan") {
		t.Fatalf("message = %q", res.Error.Message)
	}
	res = runOpts(t, `export const notDefault = 1`, airlock.Options{Execute: airlock.Execute{Fn: "default"}})
	wantStatus(t, res, airlock.StatusLinkError)
	if res.Error.Specifier != "<runCode>" {
		t.Fatalf("specifier = %q", res.Error.Specifier)
	}
}

// §3.1, §10.2: with execute omitted, a module without a default export (one
// that only reports) succeeds with an undefined result.
func TestSeed_3_1_OmittedExecuteNoDefault(t *testing.T) {
	wantResult(t, run(t, `export const notDefault = 1`), js.Undefined{})
}

// §3.1, §5.1: a non-function export with arguments is an error; without
// arguments it is the result.
func TestSeed_3_1_NonFunctionExport(t *testing.T) {
	res := runOpts(t, `export const value = 7`, airlock.Options{Execute: airlock.Execute{Fn: "value", Args: []any{1}}})
	wantStatus(t, res, airlock.StatusError)
	wantResult(t, runOpts(t, `export const value = 7`, airlock.Options{Execute: airlock.Execute{Fn: "value"}}), 7.0)
	wantResult(t, runOpts(t, `export const value = 7`, airlock.Options{Execute: airlock.Execute{Fn: "value", Args: []any{}}}), 7.0)
}

// §3.1: args use the marshaling rules.
func TestSeed_3_1_ArgsMarshaled(t *testing.T) {
	when := time.UnixMilli(1700000000000).UTC()
	res := runOpts(t, `export function f(a, b, c, d) {
		return [typeof a, a.x.length, b instanceof Date, b.getTime(), typeof c, d instanceof Uint8Array, d[1]] }`,
		airlock.Options{Execute: airlock.Execute{Fn: "f", Args: []any{
			map[string]any{"x": []int{1, 2, 3}}, when, big.NewInt(5), []byte{7, 8}}}})
	wantResult(t, res, []any{"object", 3.0, true, 1700000000000.0, "bigint", true, 8.0})
}

// §3.1: a throwing export, and a rejected promise, are errors with the message.
func TestSeed_3_1_Throws(t *testing.T) {
	res := run(t, `export default function () { throw new RangeError("out of range") }`)
	wantStatus(t, res, airlock.StatusError)
	if res.Error.Name != "RangeError" || res.Error.Message != "out of range" {
		t.Fatalf("error = %+v", res.Error)
	}
	res = run(t, `export default async () => { throw "plain string" }`)
	wantStatus(t, res, airlock.StatusError)
	if res.Error.Message != "plain string" {
		t.Fatalf("error = %+v", res.Error)
	}
}

// §3.2: named, namespace and default imports of a bridged module.
func TestSeed_3_2_Imports(t *testing.T) {
	files := map[string]string{"a.txt": "A"}
	res := runOpts(t, `
		import { readFile, writeFile } from 'fs';
		import * as fs from 'fs';
		import greet from 'greeter';
		await writeFile("b.txt", "B");
		import { cfg } from 'settings';
		let assign = "allowed";
		try { fs.readFile = null } catch (e) { assign = e.name }
		export default [await readFile("a.txt"), await fs.readFile("b.txt"), greet("ada"), assign,
			Object.isFrozen(cfg), Object.isFrozen(cfg.list)];
	`, airlock.Options{Imports: map[string]airlock.Module{
		"settings": {"cfg": map[string]any{"list": []int{1}}},
		"fs": {
			"readFile":  airlock.Async(func(p string) string { return files[p] }),
			"writeFile": airlock.Async(func(p, data string) { files[p] = data }),
		},
		"greeter": {"default": func(name string) string { return "hi, " + name }},
	}})
	wantResult(t, res, []any{"A", "B", "hi, ada", "TypeError", true, true})
}

// §3.2: scoped packages are bare specifiers too.
func TestSeed_3_2_ScopedSpecifier(t *testing.T) {
	res := runOpts(t, `import { v } from '@scope/pkg'; export default v`,
		airlock.Options{Imports: map[string]airlock.Module{"@scope/pkg": {"v": 3}}})
	wantResult(t, res, 3.0)
}

// §3.2: unknown specifiers, URLs and missing named exports fail linkage.
func TestSeed_3_2_LinkFailures(t *testing.T) {
	imports := map[string]airlock.Module{"fs": {"readFile": func() {}}}
	for _, c := range []struct{ src, spec string }{
		{`import x from 'lodash'; export default x`, "lodash"},
		{`import x from 'https://cdn.example.com/x.js'; export default x`, "https://cdn.example.com/x.js"},
		{`import fs from 'node:fs'; export default fs`, "node:fs"},
		{`import { writeFile } from 'fs'; export default writeFile`, "fs"},
		{`import { x } from './missing.js'; export default x`, "./missing.js"},
		{`import x from 'lodash'; export default 1`, "lodash"}, // plain JavaScript keeps unused imports
	} {
		res := runOpts(t, c.src, airlock.Options{Imports: imports})
		wantStatus(t, res, airlock.StatusLinkError)
		if res.Error.Specifier != c.spec {
			t.Errorf("%s: specifier = %q, want %q (%s)", c.src, res.Error.Specifier, c.spec, res.Error.Message)
		}
	}
}

// §3.3: the modules example.
func TestSeed_3_3_Modules(t *testing.T) {
	res := runOpts(t, `
    import { add } from './math.js';
    export const result = add(1, 2);
  `, airlock.Options{
		Execute: airlock.Execute{Fn: "result"},
		Modules: map[string]string{"./math.js": "export const add = (a, b) => a + b;"},
	})
	wantResult(t, res, 3.0)
}

// §3.3: entry imports resolve from filename; modules import siblings and
// parents within the graph; leaving the graph fails.
func TestSeed_3_3_RelativeResolution(t *testing.T) {
	mods := map[string]string{
		"./src/util.ts":      `import { base } from '../lib/base.js'; export const twice = (n: number) => base(n) * 2;`,
		"./lib/base.js":      `export const base = (n) => n + 1;`,
		"./src/deep/leaf.ts": `export { twice } from '../util.ts';`,
	}
	res := runOpts(t, `import { twice } from './deep/leaf.ts'; export default twice(1)`,
		airlock.Options{Filename: "src/agent.ts", Modules: mods})
	wantResult(t, res, 4.0)
	res = runOpts(t, `import { x } from '../../outside.js'; export default x`,
		airlock.Options{Filename: "src/agent.ts", Modules: mods})
	wantStatus(t, res, airlock.StatusLinkError)
}

// §3.3: module sources may be TypeScript and share the sandbox.
func TestSeed_3_3_TypeScriptModule(t *testing.T) {
	res := runOpts(t, `import { area } from './shapes.ts'; export default area({ w: 2, h: 3 })`,
		airlock.Options{Modules: map[string]string{"./shapes.ts": `interface R { w: number; h: number }
export function area(r: R): number { return r.w * r.h }`}})
	wantResult(t, res, 6.0)
}

// §3.4: globals are at module scope, not on globalThis.
func TestSeed_3_4_Globals(t *testing.T) {
	var logged []any
	res := runOpts(t, `
		console.log('hi');
		const m = await getMessage();
		export default [m, typeof globalThis.console, typeof globalThis.getMessage,
			Object.keys(globalThis).includes('getMessage'), 'getMessage' in globalThis];
	`, airlock.Options{Globals: map[string]any{
		"console":    map[string]any{"log": func(args ...any) { logged = append(logged, args...) }},
		"getMessage": airlock.Async(func() string { return "..." }),
	}})
	wantResult(t, res, []any{"...", "undefined", "undefined", false, false})
	if !reflect.DeepEqual(logged, []any{"hi"}) {
		t.Fatalf("console.log got %v", logged)
	}
}

// §3.4: globals are visible in supplied modules too.
func TestSeed_3_4_GlobalsInModules(t *testing.T) {
	res := runOpts(t, `import { f } from './m.js'; export default f()`, airlock.Options{
		Globals: map[string]any{"factor": 5},
		Modules: map[string]string{"./m.js": `export const f = () => factor * 2`},
	})
	wantResult(t, res, 10.0)
}

// §3.5: every row of the marshaling table, sandbox to host.
func TestSeed_3_5_SandboxToHost(t *testing.T) {
	res := run(t, `export default {
		s: "str", n: 1.5, i: 3, t: true, z: null, u: undefined, b: 12345678901234567890n,
		nan: NaN, negz: -0, inf: -Infinity,
		arr: [1, "two"], m: new Map([["k", 1], [2, "v"]]), set: new Set([1, 2]),
		d: new Date(86400000), u8: new Uint8Array([1, 2, 3]), f64: new Float64Array([0.5]),
		i32: new Int32Array([-1]), ab: new Uint8Array([9, 8]).buffer, err: new TypeError("e"),
	}`)
	wantStatus(t, res, airlock.StatusSuccess)
	got := res.Result.(map[string]any)
	bi, _ := new(big.Int).SetString("12345678901234567890", 10)
	checks := map[string]any{
		"s": "str", "n": 1.5, "i": 3.0, "t": true, "z": nil, "u": js.Undefined{}, "b": bi,
		"arr": []any{1.0, "two"},
		"m":   &js.Map{Entries: []js.MapEntry{{Key: "k", Value: 1.0}, {Key: 2.0, Value: "v"}}},
		"set": &js.Set{Values: []any{1.0, 2.0}},
		"d":   time.UnixMilli(86400000).UTC(), "u8": []byte{1, 2, 3}, "f64": js.Float64Array{0.5},
		"i32": js.Int32Array{-1}, "ab": js.ArrayBuffer{9, 8},
		"err": &js.ErrorValue{Name: "TypeError", Message: "e"},
	}
	for k, want := range checks {
		if !reflect.DeepEqual(got[k], want) {
			t.Errorf("%s = %#v, want %#v", k, got[k], want)
		}
	}
	if f := got["nan"].(float64); !math.IsNaN(f) {
		t.Errorf("nan = %v", f)
	}
	if f := got["negz"].(float64); f != 0 || !math.Signbit(f) {
		t.Errorf("negz = %v", f)
	}
	if f := got["inf"].(float64); !math.IsInf(f, -1) {
		t.Errorf("inf = %v", f)
	}
}

// §3.5: every row of the marshaling table, host to sandbox.
func TestSeed_3_5_HostToSandbox(t *testing.T) {
	type point struct {
		X, Y int
		Tag  string `json:"tag,omitempty"`
	}
	res := runOpts(t, `export default [
		typeof s, typeof n, typeof b, z === null, u === undefined, typeof big, big === 99n,
		Number.isNaN(nan), Object.is(negz, -0), Array.isArray(arr), m instanceof Map && m.get("a") === 1,
		set instanceof Set && set.has(2), d instanceof Date && d.getTime(), bytes instanceof Uint8Array && bytes.length,
		buf instanceof ArrayBuffer && buf.byteLength, pt.X + pt.Y, "tag" in pt, err instanceof Error && err.message,
		typeof fn, fn(2),
	]`, airlock.Options{Globals: map[string]any{
		"s": "x", "n": 1, "b": true, "z": nil, "u": js.Undefined{}, "big": big.NewInt(99),
		"nan": math.NaN(), "negz": math.Copysign(0, -1), "arr": []string{"a"},
		"m":   &js.Map{Entries: []js.MapEntry{{Key: "a", Value: 1}}},
		"set": &js.Set{Values: []any{1, 2}},
		"d":   time.UnixMilli(5000), "bytes": []byte{1, 2}, "buf": js.ArrayBuffer{1, 2, 3},
		"pt": point{X: 1, Y: 2}, "err": errors.New("boom"),
		"fn": func(n int) int { return n * 10 },
	}})
	wantResult(t, res, []any{"string", "number", "boolean", true, true, "bigint", true, true, true, true,
		true, true, 5000.0, 2.0, 3.0, 3.0, false, "boom", "function", 20.0})
}

// §3.5, §6.3: values cross by deep copy; a sandbox mutation never reaches
// the host object, and the host's later changes never reach the sandbox.
func TestSeed_3_5_DeepCopy(t *testing.T) {
	input := map[string]any{"list": []any{1, 2}, "inner": map[string]any{"k": "v"}}
	var received map[string]any
	res := runOpts(t, `
		input.list.push(3); input.inner.k = "changed"; input.added = true;
		keep(input);
		export default input.list.length;
	`, airlock.Options{Globals: map[string]any{
		"input": input,
		"keep":  func(m map[string]any) { received = m; m["host"] = true },
	}})
	wantResult(t, res, 3.0)
	if len(input["list"].([]any)) != 2 || input["inner"].(map[string]any)["k"] != "v" || input["added"] != nil {
		t.Fatalf("the host object changed: %v", input)
	}
	if received["added"] != true {
		t.Fatalf("the host function got %v", received)
	}
}

// §3.5: cycles and shared references keep their identity both ways.
func TestSeed_3_5_Cycles(t *testing.T) {
	res := run(t, `const a = {name: "a"}; a.self = a; const shared = [1];
		export default {a, x: shared, y: shared}`)
	wantStatus(t, res, airlock.StatusSuccess)
	m := res.Result.(map[string]any)
	a := m["a"].(map[string]any)
	if reflect.ValueOf(a["self"]).Pointer() != reflect.ValueOf(a).Pointer() {
		t.Fatal("the cycle was not kept")
	}
	if reflect.ValueOf(m["x"]).Pointer() != reflect.ValueOf(m["y"]).Pointer() {
		t.Fatal("the shared array was not kept shared")
	}
	self := map[string]any{"n": 1}
	self["self"] = self
	res = runOpts(t, `export default v.self.self === v && v.self.n === 1`, airlock.Options{Globals: map[string]any{"v": self}})
	wantResult(t, res, true)
}

// §3.5: functions are callable proxies; a returned error is thrown as an
// Error with its message only; a context parameter gets the run's context.
func TestSeed_3_5_FunctionProxy(t *testing.T) {
	var gotCtx context.Context
	res := runOpts(t, `
		let caught;
		try { fail("bad input") } catch (e) { caught = [e instanceof Error, e.name, e.message, String(e.stack).includes(".go")] }
		export default [add(2, 3), withCtx(), caught, this === undefined];
	`, airlock.Options{Globals: map[string]any{
		"add":     func(a, b float64) float64 { return a + b },
		"fail":    func(msg string) (string, error) { return "", errors.New(msg) },
		"withCtx": func(ctx context.Context) bool { gotCtx = ctx; return ctx != nil },
	}})
	wantResult(t, res, []any{5.0, true, []any{true, "Error", "bad input", false}, true})
	if gotCtx.Err() == nil {
		t.Fatal("the run's context was not cancelled after the run")
	}
}

// §3.5: asynchronous bridges return promises and run concurrently.
func TestSeed_3_5_AsyncConcurrent(t *testing.T) {
	var mu sync.Mutex
	inFlight, maxInFlight := 0, 0
	slow := airlock.Async(func(n int) int {
		mu.Lock()
		inFlight++
		maxInFlight = max(maxInFlight, inFlight)
		mu.Unlock()
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
		return n * 2
	})
	res := runOpts(t, `export default await Promise.all([1, 2, 3, 4].map(n => slow(n)))`,
		airlock.Options{Globals: map[string]any{"slow": slow}})
	wantResult(t, res, []any{2.0, 4.0, 6.0, 8.0})
	if maxInFlight != 4 {
		t.Fatalf("at most %d calls ran at once, want 4", maxInFlight)
	}
}

// §3.5: what cannot cross gives a clear serialization error, functions and
// symbols included: see result_cross_test.go.
func TestSeed_3_5_NotTransferable(t *testing.T) {
	for _, src := range []string{
		`export default new WeakMap()`,
		`export default new Proxy({}, {})`,
		`export default { p: new Proxy(() => 1, {}) }`,
		`export default Promise.resolve([new WeakSet()])`,
		`export default { f: () => 1 }`,
		`export default Symbol()`,
	} {
		res := run(t, src)
		wantStatus(t, res, airlock.StatusError)
		if !strings.Contains(res.Error.Message, "cannot leave the sandbox") {
			t.Errorf("%s: message = %q", src, res.Error.Message)
		}
	}
	_, err := testRuntime.Run(context.Background(), `export default 1`, airlock.Options{
		Globals: map[string]any{"ch": make(chan int)}})
	var ce *js.CloneError
	if !errors.As(err, &ce) {
		t.Fatalf("a channel global: err = %v, want a CloneError", err)
	}
}

// §3.5: host functions receive sandbox values converted to their types.
func TestSeed_3_5_ArgumentConversion(t *testing.T) {
	type req struct {
		Name  string   `json:"name"`
		Tags  []string `json:"tags"`
		Count int      `json:"count"`
	}
	var got req
	res := runOpts(t, `let e; try { typed(1.5) } catch (x) { e = x.message }
		export default [take({name: "n", tags: ["a"], count: 2}), e, sum(1, 2, 3)]`, airlock.Options{Globals: map[string]any{
		"take":  func(r req) string { got = r; return r.Name },
		"typed": func(n int) int { return n },
		"sum": func(ns ...int) int {
			s := 0
			for _, n := range ns {
				s += n
			}
			return s
		},
	}})
	wantStatus(t, res, airlock.StatusSuccess)
	r := res.Result.([]any)
	if r[0] != "n" || !reflect.DeepEqual(got, req{Name: "n", Tags: []string{"a"}, Count: 2}) {
		t.Fatalf("struct argument: %v %+v", r[0], got)
	}
	if !strings.Contains(r[1].(string), "integer") || r[2] != 6.0 {
		t.Fatalf("conversion results: %v", r)
	}
}

// §4, §12: the result JSON has exactly the seed's shape.
func TestSeed_4_ResultJSON(t *testing.T) {
	res := runOpts(t, `console.info("x", 1); report({r: 1}); export default {ok: true}`,
		airlock.Options{Report: func(any) {}})
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"status", "result", "reports", "logs", "durationMs", "memoryUsedBytes"} {
		if _, ok := m[k]; !ok {
			t.Errorf("missing %q in %s", k, b)
		}
	}
	if _, ok := m["error"]; ok {
		t.Errorf("error present on success: %s", b)
	}
	if len(m) != 6 {
		t.Errorf("unexpected keys in %s", b)
	}
	log := m["logs"].([]any)[0].(map[string]any)
	if log["level"] != "info" || !reflect.DeepEqual(log["args"], []any{"x", 1.0}) || log["timestamp"].(float64) < 1e12 {
		t.Errorf("log = %v", log)
	}
	res = run(t, `throw new Error("e")`)
	b, _ = json.Marshal(res)
	m = nil
	json.Unmarshal(b, &m)
	if _, ok := m["result"]; ok {
		t.Errorf("result present on error: %s", b)
	}
	e := m["error"].(map[string]any)
	for _, k := range []string{"name", "message", "stack", "filename", "line", "column"} {
		if _, ok := e[k]; !ok {
			t.Errorf("error lacks %q: %s", k, b)
		}
	}
}

// §4: durationMs is wall time and memoryUsedBytes the measured heap.
func TestSeed_4_DurationAndMemory(t *testing.T) {
	res := runOpts(t, `export default await nap()`, airlock.Options{Globals: map[string]any{
		"nap": airlock.Async(func() int { time.Sleep(30 * time.Millisecond); return 1 })}})
	wantStatus(t, res, airlock.StatusSuccess)
	if res.Duration < 30*time.Millisecond {
		t.Fatalf("duration %v < 30ms", res.Duration)
	}
	small := run(t, `export default 1`).MemoryUsedBytes
	big := run(t, `const a = new Array(200000).fill(0).map((_, i) => ({i})); export default a.length`).MemoryUsedBytes
	if small <= 0 || big < small+1<<20 {
		t.Fatalf("memoryUsedBytes: small %d, big %d", small, big)
	}
}

// §4.1: every status.
func TestSeed_4_1_Statuses(t *testing.T) {
	wantStatus(t, run(t, `export default 1`), airlock.StatusSuccess)
	wantStatus(t, run(t, `null.x`), airlock.StatusError)
	wantStatus(t, runOpts(t, `const a = []; for (;;) a.push(new Array(1e5).fill(1));`,
		airlock.Options{MemoryLimitBytes: 8 << 20}), airlock.StatusMemory)
	wantStatus(t, run(t, `import x from 'nope'; export default x`), airlock.StatusLinkError)
	ctx, cancel := context.WithCancel(context.Background())
	ex, _ := testRuntime.Run(ctx, `for (;;) {}`, airlock.Options{})
	cancel()
	res := ex.Wait()
	wantStatus(t, res, airlock.StatusTerminated)
	if !strings.Contains(res.Error.Message, "context canceled") {
		t.Fatalf("message = %q", res.Error.Message)
	}
}

// §4.1: the runtime's safety cap terminates with a message that says so.
func TestSeed_4_1_SafetyCap(t *testing.T) {
	rt := airlock.NewRuntime(airlock.RuntimeConfig{MaxDuration: 100 * time.Millisecond})
	defer rt.Close()
	ex, _ := rt.Run(context.Background(), `for (;;) {}`, airlock.Options{})
	res := ex.Wait()
	wantStatus(t, res, airlock.StatusTerminated)
	if !strings.Contains(res.Error.Message, "safety cap") {
		t.Fatalf("message = %q", res.Error.Message)
	}
}

// §4.2: error positions are in the user's original source, for TypeScript
// and for modules, and the stack has sandbox frames only.
func TestSeed_4_2_ErrorPositions(t *testing.T) {
	res := runOpts(t, `interface User { name: string }
type Id = number;

function check(u: User): never {
  throw new TypeError("no " + u.name);
}
export default () => check({ name: "ada" });
`, airlock.Options{Filename: "agent.ts"})
	wantStatus(t, res, airlock.StatusError)
	e := res.Error
	if e.Filename != "agent.ts" || e.Line != 5 {
		t.Fatalf("position %s:%d:%d, want agent.ts:5; stack:\n%s", e.Filename, e.Line, e.Column, e.Stack)
	}
	if strings.Contains(e.Stack, "airlock:") || strings.Contains(e.Stack, ".go") || strings.Contains(e.Stack, "<eval>") {
		t.Fatalf("stack leaks internals:\n%s", e.Stack)
	}
	res = runOpts(t, `import { f } from './lib.js';
export default f();`, airlock.Options{Language: airlock.JavaScript, Modules: map[string]string{"./lib.js": "\n\nexport function f() {\n  return missing + 1;\n}"}})
	wantStatus(t, res, airlock.StatusError)
	if res.Error.Filename != "lib.js" || res.Error.Line != 4 || res.Error.Name != "ReferenceError" {
		t.Fatalf("error = %+v", res.Error)
	}
	res = runOpts(t, "const a = 1;\nconst b = ;\n", airlock.Options{Language: airlock.JavaScript, Filename: "x.js"})
	wantStatus(t, res, airlock.StatusLinkError)
	if res.Error.Filename != "x.js" || res.Error.Line != 2 || res.Error.Name != "SyntaxError" {
		t.Fatalf("syntax error = %+v", res.Error)
	}
	res = runOpts(t, "let n: number = 1;\nlet m: = 2;\n", airlock.Options{Filename: "y.ts"})
	wantStatus(t, res, airlock.StatusLinkError)
	if res.Error.Filename != "y.ts" || res.Error.Line != 2 {
		t.Fatalf("TS syntax error = %+v", res.Error)
	}
	// Line 1 columns are not shifted by the sandbox's prologue.
	res = runOpts(t, `nope()`, airlock.Options{Language: airlock.JavaScript})
	if res.Error.Line != 1 || res.Error.Column != 1 {
		t.Fatalf("line 1 position = %d:%d", res.Error.Line, res.Error.Column)
	}
}

// §4.3, §5.2: the capturing console, and options.report.
func TestSeed_4_3_Logs(t *testing.T) {
	var sink []any
	res := runOpts(t, `console.log("a", 1); console.info({b: 2}); console.warn("w"); console.error(new Error("e"));
		console.debug(); report("r1"); report([1]); export default 0`, airlock.Options{Report: func(v any) { sink = append(sink, v) }})
	wantStatus(t, res, airlock.StatusSuccess)
	levels := []airlock.LogLevel{}
	for _, l := range res.Logs {
		levels = append(levels, l.Level)
		if l.Time.IsZero() {
			t.Error("log without a time")
		}
	}
	if !reflect.DeepEqual(levels, []airlock.LogLevel{"log", "info", "warn", "error", "debug"}) {
		t.Fatalf("levels = %v", levels)
	}
	if !reflect.DeepEqual(res.Logs[1].Args, []any{map[string]any{"b": 2.0}}) || len(res.Logs[4].Args) != 0 {
		t.Fatalf("args = %v", res.Logs)
	}
	if !reflect.DeepEqual(sink, []any{"r1", []any{1.0}}) || !reflect.DeepEqual(res.Reports, sink) {
		t.Fatalf("reports %v, sink %v", res.Reports, sink)
	}
}

// §5.1: all four forms give 42.
func TestSeed_5_1_FourForms(t *testing.T) {
	for _, src := range []string{
		`export default 42;`,
		`export default async () => 42;`,
		`export default () => Promise.resolve(42);`,
		`export default Promise.resolve(42);`,
		`export default { then(r) { r({ then(r2) { r2(42) } }) } };`,
	} {
		wantResult(t, run(t, src), 42.0)
	}
}

// §5.2: reports through a bridged supervisor module.
func TestSeed_5_2_BridgeReports(t *testing.T) {
	var telemetry []any
	res := runOpts(t, `import { report } from 'supervisor'; report(1); report("two"); export default null`,
		airlock.Options{Imports: map[string]airlock.Module{"supervisor": {"report": func(p any) { telemetry = append(telemetry, p) }}}})
	wantStatus(t, res, airlock.StatusSuccess)
	if !reflect.DeepEqual(telemetry, []any{1.0, "two"}) || len(res.Reports) != 0 {
		t.Fatalf("telemetry %v, reports %v", telemetry, res.Reports)
	}
}

// §6.1: globalThis holds only intrinsics, and the web platform's pure APIs
// (internal/web: TextEncoder, TextDecoder, atob, btoa, DOMException, Event,
// EventTarget, AbortController, AbortSignal, Headers, Blob, URLSearchParams,
// URL, Request, Response, Performance, performance, Crypto, SubtleCrypto,
// crypto),
// which compute and reach
// nothing of the host, as structuredClone does; four of them were on
// §6.1's list of absent names, the one deliberate change to it (README,
// "The web platform in the sandbox"). Every host capability of the list
// stays absent.
func TestSeed_6_1_GlobalThis(t *testing.T) {
	got := evalJS(t, `export default Object.getOwnPropertyNames(globalThis).sort()`).([]any)
	allowed := map[string]bool{}
	for _, n := range strings.Fields(`Object Function Array Number parseFloat parseInt Infinity NaN undefined Boolean String Symbol Date
		Promise RegExp Error AggregateError EvalError RangeError ReferenceError SyntaxError TypeError URIError InternalError
		globalThis JSON Math Reflect Proxy Map Set WeakMap WeakSet WeakRef FinalizationRegistry ArrayBuffer DataView
		Int8Array Uint8Array Uint8ClampedArray Int16Array Uint16Array Int32Array Uint32Array Float16Array Float32Array
		Float64Array BigInt64Array BigUint64Array BigInt Iterator isNaN isFinite decodeURI decodeURIComponent encodeURI
		encodeURIComponent escape unescape structuredClone queueMicrotask Intl
		TextEncoder TextDecoder atob btoa DOMException Event EventTarget AbortController AbortSignal
		Headers Blob URLSearchParams URL Request Response Performance performance Crypto SubtleCrypto crypto`) {
		allowed[n] = true
	}
	for _, n := range got {
		if !allowed[n.(string)] {
			t.Errorf("globalThis has %q", n)
		}
	}
	absent := `process global window self document require Deno Bun fetch
		WebSocket WebAssembly setTimeout setInterval setImmediate
		eval SharedArrayBuffer Atomics print std os globalThis.console`
	res := evalJS(t, `export default [`+strings.Join(func() []string {
		var out []string
		for _, n := range strings.Fields(absent) {
			out = append(out, "typeof "+n)
		}
		return out
	}(), ",")+`]`).([]any)
	for i, n := range strings.Fields(absent) {
		if res[i] != "undefined" {
			t.Errorf("%s is %v", n, res[i])
		}
	}
}

// §6.1: a global the caller bridges in is there.
func TestSeed_6_1_BridgedTimer(t *testing.T) {
	res := runOpts(t, `export default typeof setTimeout`, airlock.Options{Globals: map[string]any{"setTimeout": func() {}}})
	wantResult(t, res, "function")
}

// §6.2: no dynamic code loading.
func TestSeed_6_2_NoDynamicCode(t *testing.T) {
	got := evalJS(t, `
		const attempt = (f) => { try { f(); return "ran" } catch (e) { return e.name } };
		export default [
			typeof eval,
			attempt(() => Function("return 1")),
			attempt(() => new Function("return 1")),
			attempt(() => (async function(){}).constructor("return 1")),
			attempt(() => (function*(){}).constructor("yield 1")),
			attempt(() => (async function*(){}).constructor("yield 1")),
			attempt(() => Object.getPrototypeOf(() => {}).constructor("return 1")),
			(() => {}) instanceof Function,
		]`)
	want := []any{"undefined", "EvalError", "EvalError", "EvalError", "EvalError", "EvalError", "EvalError", true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// §6.2, §3.2: dynamic import resolves only imports and modules; URLs reject.
func TestSeed_6_2_DynamicImport(t *testing.T) {
	res := runOpts(t, `
		const ok = (await import('fs')).v + (await import('./m.js')).w;
		const fails = [];
		for (const s of ['https://example.com/x.js', 'node:fs', 'lodash', './nope.js']) {
			try { await import(s); fails.push("loaded " + s) } catch (e) { fails.push(e instanceof Error) }
		}
		export default [ok, fails];
	`, airlock.Options{Imports: map[string]airlock.Module{"fs": {"v": 1}}, Modules: map[string]string{"./m.js": "export const w = 2"}})
	wantResult(t, res, []any{3.0, []any{true, true, true, true}})
}

// §6.3: no shared memory.
func TestSeed_6_3_NoSharedMemory(t *testing.T) {
	if got := evalJS(t, `export default [typeof SharedArrayBuffer, typeof Atomics]`); !reflect.DeepEqual(got, []any{"undefined", "undefined"}) {
		t.Fatal(got)
	}
}

// §6.4: terminate stops a pure synchronous loop promptly.
func TestSeed_6_4_TerminateTightLoop(t *testing.T) {
	ex, _ := testRuntime.Run(context.Background(), `let i = 0; while (true) { i++ }`, airlock.Options{})
	time.Sleep(20 * time.Millisecond)
	ex.Terminate("")
	select {
	case <-ex.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the run did not stop")
	}
	wantStatus(t, ex.Wait(), airlock.StatusTerminated)
}

// §6.5: exceeding memoryLimitBytes settles with status memory.
func TestSeed_6_5_MemoryCap(t *testing.T) {
	res := runOpts(t, `const a = []; for (;;) a.push("x".repeat(1e4) + a.length);`, airlock.Options{MemoryLimitBytes: 4 << 20})
	wantStatus(t, res, airlock.StatusMemory)
}

// §6.6: microtasks work; timers are absent.
func TestSeed_6_6_Microtasks(t *testing.T) {
	got := evalJS(t, `const order = [];
		queueMicrotask(() => order.push("micro"));
		await Promise.resolve().then(() => order.push("then"));
		order.push("after");
		export default [order, typeof setTimeout, typeof setInterval];`)
	if !reflect.DeepEqual(got, []any{[]any{"micro", "then", "after"}, "undefined", "undefined"}) {
		t.Fatal(got)
	}
}

// §6.7: Date.now and Math.random work.
func TestSeed_6_7_Nondeterminism(t *testing.T) {
	got := evalJS(t, `const r = Math.random(); export default [Date.now() > 1.6e12, r >= 0 && r < 1]`)
	if !reflect.DeepEqual(got, []any{true, true}) {
		t.Fatal(got)
	}
}

// §6.8: each run is fresh.
func TestSeed_6_8_Fresh(t *testing.T) {
	evalJS(t, `Array.prototype.polluted = 1; Object.prototype.evil = 2; globalThis.leak = 3; export default 0`)
	got := evalJS(t, `export default [[].polluted, ({}).evil, typeof leak]`)
	if !reflect.DeepEqual(got, []any{js.Undefined{}, js.Undefined{}, "undefined"}) {
		t.Fatal(got)
	}
}

// §7: TypeScript is erased, type errors are ignored.
func TestSeed_7_TypeScript(t *testing.T) {
	res := runOpts(t, `
		import type { Thing } from './types.ts';
		export type Pair<T> = [T, T];
		enum Color { Red, Green = "g" }
		namespace Geo { export const origin = { x: 0 }; }
		interface Shape { area(): number }
		const cfg = { retries: 3 } satisfies Record<string, number>;
		function first<T>(xs: T[]): T { return xs[0]; }
		const n = ("5" as unknown) as number;
		const wrong: string = 42; // a type error, ignored
		class Box<T> { constructor(private value: T) {} get(): T { return this.value } }
		export default [Color.Red, Color.Green, Geo.origin.x, cfg.retries, first<number>([7, 8]), n, wrong, new Box("b").get()];
	`, airlock.Options{Modules: map[string]string{"./types.ts": "export interface Thing { a: number }"}})
	wantResult(t, res, []any{0.0, "g", 0.0, 3.0, 7.0, "5", 42.0, "b"})
}

// §7: JavaScript is not transformed: TypeScript syntax is a syntax error.
func TestSeed_7_JavaScriptLanguage(t *testing.T) {
	res := runOpts(t, `const x: number = 1; export default x`, airlock.Options{Language: airlock.JavaScript})
	wantStatus(t, res, airlock.StatusLinkError)
}

// §7: TypeScript's reading of ambiguous syntax wins: f<T>(x) is a call.
func TestSeed_7_GenericCall(t *testing.T) {
	res := run(t, `const id = <T,>(x: T) => x; const a = 1, b = 2;
		export default [id<number>(5), a < b]`)
	wantResult(t, res, []any{5.0, true})
}

// §8: module semantics: top-level await and import.meta.
func TestSeed_8_ModuleSemantics(t *testing.T) {
	res := runOpts(t, `const v = await Promise.resolve(1);
		export default [v, import.meta.url, Object.keys(import.meta)];`, airlock.Options{Filename: "agent.ts"})
	wantResult(t, res, []any{1.0, "sandbox:agent.ts", []any{"url"}})
	wantResult(t, run(t, `export default import.meta.url`), "sandbox:<runCode>")
	// Each source module has its own, as the caller named it, and it stays
	// an ordinary writable property.
	res = runOpts(t, `import { u } from "./lib/util.js"; import.meta.url = "x";
		export default [u, import.meta.url]`, airlock.Options{Language: airlock.JavaScript,
		Modules: map[string]string{"./lib/util.js": `export const u = import.meta.url;`}})
	wantResult(t, res, []any{"sandbox:lib/util.js", "x"})
}

// §9: bridged thread capabilities.
func TestSeed_9_ThreadBridge(t *testing.T) {
	var events []string
	res := runOpts(t, `import { readFile, getMessages, emit } from 'thread';
		emit("start", {n: 1});
		export default [await readFile("/notes.txt"), (await getMessages({limit: 2})).length];`,
		airlock.Options{Imports: map[string]airlock.Module{"thread": {
			"readFile":    airlock.Async(func(p string) string { return "notes" }),
			"getMessages": airlock.Async(func(opts map[string]any) []string { return []string{"a", "b"}[:int(opts["limit"].(float64))] }),
			"emit":        func(event string, data any) { events = append(events, event) },
		}}})
	wantResult(t, res, []any{"notes", 2.0})
	if !reflect.DeepEqual(events, []string{"start"}) {
		t.Fatal(events)
	}
}

// §10.1: single-value computation.
func TestSeed_10_1_SingleValue(t *testing.T) {
	res := runOpts(t, `
    const n = input.reduce((a, b) => a + b, 0);
    export default n;
  `, airlock.Options{Globals: map[string]any{"input": []any{1, 2, 3}}})
	wantResult(t, res, 6.0)
}

// §10.2: flagging multiple items.
func TestSeed_10_2_Flagging(t *testing.T) {
	flagged := map[float64]bool{}
	rows := []map[string]any{{"id": 1, "flagged": true}, {"id": 2, "flagged": false}, {"id": 3, "flagged": true}}
	res := runOpts(t, `
    import { report } from 'supervisor';
    for (const row of rows) {
      if (row.flagged) report(row.id);
    }
  `, airlock.Options{
		Globals: map[string]any{"rows": rows},
		Imports: map[string]airlock.Module{"supervisor": {"report": func(id float64) { flagged[id] = true }}},
	})
	wantResult(t, res, js.Undefined{})
	if !reflect.DeepEqual(flagged, map[float64]bool{1: true, 3: true}) {
		t.Fatal(flagged)
	}
}

// §10.3: model-authored code with a deadline and a memory cap.
func TestSeed_10_3_Deadline(t *testing.T) {
	ex, err := testRuntime.Run(context.Background(), `while (input.length) {}`, airlock.Options{
		MemoryLimitBytes: 64 * 1024 * 1024,
		Globals:          map[string]any{"input": `{"from": "/data/input.json"}`},
	})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.AfterFunc(100*time.Millisecond, func() { ex.Terminate("2s budget") })
	res := ex.Wait()
	deadline.Stop()
	wantStatus(t, res, airlock.StatusTerminated)
	if res.Error.Message != "terminated: 2s budget" {
		t.Fatalf("message = %q", res.Error.Message)
	}
}

// §10.4: composing with tools: a thin wrapper around Run.
func TestSeed_10_4_Composing(t *testing.T) {
	tool := func(code string) map[string]any {
		ex, err := testRuntime.Run(context.Background(), code, airlock.Options{Imports: map[string]airlock.Module{
			"thread": {"readFile": airlock.Async(func(p string) string { return "data:" + p })},
		}})
		if err != nil {
			return map[string]any{"status": "error", "error": err.Error()}
		}
		deadline := time.AfterFunc(2*time.Second, func() { ex.Terminate("2s budget") })
		res := ex.Wait()
		deadline.Stop()
		if res.Status == airlock.StatusSuccess {
			b, _ := json.Marshal(res.Result)
			return map[string]any{"status": "success", "result": string(b)}
		}
		return map[string]any{"status": "error", "error": res.Error.Message}
	}
	got := tool(`import { readFile } from 'thread'; export default { text: await readFile("a") }`)
	if !reflect.DeepEqual(got, map[string]any{"status": "success", "result": `{"text":"data:a"}`}) {
		t.Fatal(got)
	}
	if got := tool(`throw new Error("nope")`); got["error"] != "nope" {
		t.Fatal(got)
	}
}

// §3.5: plain data gives the same values alone and beside a value that
// JSON cannot carry (a Set), and no setter on a prototype sees the data: a
// "__proto__" key is an own property.
func TestSeed_3_5_PlainAndRichAgree(t *testing.T) {
	data := map[string]any{
		"__proto__": map[string]any{"polluted": true}, "constructor": "c", "ünï": "ß\u2028\x00",
		"n": []any{0, -1, 1.5, 1e21, 9007199254740993, uint64(18446744073709551615)}, "deep": []any{[]any{[]any{map[string]any{}}}},
		"empty": []any{}, "nil": nil, "t": true,
	}
	res := runOpts(t, `export default [JSON.stringify(plain), JSON.stringify(tagged[0]),
		Object.getPrototypeOf(plain) === Object.prototype, ({}).polluted, plain.__proto__.polluted, typeof fn]`,
		airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{
			"plain":  data,
			"tagged": []any{data, &js.Set{Values: []any{1}}}, // beside a Set, which JSON cannot carry
			"fn":     func() {},
		}})
	wantStatus(t, res, airlock.StatusSuccess)
	r := res.Result.([]any)
	if r[0] != r[1] {
		t.Fatalf("plain and tagged differ:\n%s\n%s", r[0], r[1])
	}
	if r[2] != true || r[3] != (js.Undefined{}) || r[4] != true || r[5] != "function" {
		t.Fatalf("got %v", r)
	}
}
