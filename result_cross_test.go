package airlock_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/js"
)

// A result that cannot cross settled success with the value dropped: a
// function or a symbol in the run's result became undefined (or was left
// out of its object), so a caller got `{ items: [1, 2, undefined] }` for
// `{ items: [1, 2, () => 3] }` and never learnt that the program had
// returned something it could not have. Other values that cannot cross (a
// WeakMap) failed the run without saying where they were. Each now fails
// the run with a DataCloneError that names the kind and where in the
// result it was.
func TestResultCross_ErrorNamesKindAndPath(t *testing.T) {
	cases := []struct{ src, want string }{
		{`export default { items: [1, 2, () => 3] }`, `result.items[2]: a function cannot leave the sandbox`},
		{`export default Symbol("x")`, `result: a symbol cannot leave the sandbox`},
		{`export default { a: new WeakMap() }`, `result.a: a WeakMap cannot leave the sandbox`},
		{`export default [new WeakSet()]`, `result[0]: a WeakSet cannot leave the sandbox`},
		{`export default { r: new WeakRef({}) }`, `result.r: a WeakRef cannot leave the sandbox`},
		{`export default { f: new FinalizationRegistry(() => {}) }`, `result.f: a FinalizationRegistry cannot leave the sandbox`},
		{`export default { p: { then: 1, q: Promise.resolve(1) } }`, `result.p.q: a Promise cannot leave the sandbox`},
		{`export default { s: Object(Symbol()) }`, `result.s: a Symbol object cannot leave the sandbox`},
		{`export default { "odd key": { 'say "hi"\n': [Symbol.iterator] } }`,
			`result["odd key"]["say \"hi\"\n"][0]: a symbol cannot leave the sandbox`},
		{`export default { $ok_1: { "1x": 0, "2": () => 1 } }`, `result.$ok_1["2"]: a function cannot leave the sandbox`},
		// Maps and Sets: the entry or member, by its position.
		{`export default { m: new Map([["a", 1], ["b", { f() {} }]]) }`, `result.m<Map value 1>.f: a function cannot leave the sandbox`},
		{`export default new Map([[{ k: Symbol() }, 1]])`, `result<Map key 0>.k: a symbol cannot leave the sandbox`},
		{`export default { s: new Set([1, [2, new WeakMap()]]) }`, `result.s<Set member 1>[1]: a WeakMap cannot leave the sandbox`},
		// A class instance crosses as its own enumerable properties (as
		// structuredClone copies it); what it holds takes the same rule.
		{`class A { constructor() { this.cb = () => 1 } } export default { a: new A() }`, `result.a.cb: a function cannot leave the sandbox`},
		// A cycle is followed once: the path is the way the walk took.
		{`const o = { a: 1 }; o.self = o; o.deep = { back: o, f() {} }; export default o`, `result.deep.f: a function cannot leave the sandbox`},
		// Typed arrays cross; what sits beside them does not.
		{`export default { t: new Float64Array([1]), b: new ArrayBuffer(2), s: Symbol() }`, `result.s: a symbol cannot leave the sandbox`},
		// Sparse arrays and arrays with named properties.
		{`const a = []; a[5] = () => 1; export default a`, `result[5]: a function cannot leave the sandbox`},
		{`const a = [1]; a.extra = Symbol(); export default a`, `result.extra: a symbol cannot leave the sandbox`},
		// A Proxy is refused before any of its traps, a function Proxy too.
		{`export default { p: new Proxy({}, {}) }`, `result.p: a Proxy cannot leave the sandbox`},
		{`export default [new Proxy(function () {}, {})]`, `result[0]: a Proxy cannot leave the sandbox`},
		// A default export that is a function is called (seed 000); what it
		// returns is the result, and a function there is not called again.
		{`export default () => () => 1`, `result: a function cannot leave the sandbox`},
		{`export default async () => class A {}`, `result: a function cannot leave the sandbox`},
		{`export default Promise.resolve(() => 1)`, `result: a function cannot leave the sandbox`},
		{`export default () => Symbol("s")`, `result: a symbol cannot leave the sandbox`},
		{`export default () => new Promise(() => {}).then`, `result: a function cannot leave the sandbox`},
	}
	for _, rt := range []*airlock.Runtime{testRuntime(), workerRuntime()} {
		for _, c := range cases {
			res := runOn(t, rt, c.src, airlock.Options{Language: airlock.JavaScript})
			wantCrossError(t, c.src, res, c.want)
		}
	}
}

func wantCrossError(t *testing.T, src string, res *airlock.Result, want string) {
	t.Helper()
	if res.Status != airlock.StatusError || res.Error == nil {
		t.Errorf("%s: status %s, result %s, want an error", src, res.Status, airlock.Inspect(res.Result))
		return
	}
	if res.Error.Name != "DataCloneError" || res.Error.Message != want {
		t.Errorf("%s: error %s: %q, want DataCloneError: %q", src, res.Error.Name, res.Error.Message, want)
	}
	if res.Result != nil {
		t.Errorf("%s: a result with the error: %#v", src, res.Result)
	}
}

// Execute.Fn selects a named export: the result is still "result"; the
// package's Run and Eval take the same rule.
func TestResultCross_NamedExport(t *testing.T) {
	res := runOpts(t, `export function scan(n) { return { n, next: () => n + 1 } }`,
		airlock.Options{Language: airlock.JavaScript, Execute: airlock.Execute{Fn: "scan", Args: []any{1}}})
	wantCrossError(t, "scan", res, `result.next: a function cannot leave the sandbox`)
	ex, err := airlock.Run(context.Background(), `export default [Symbol()]`, airlock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantCrossError(t, "airlock.Run", ex.Wait(), `result[0]: a symbol cannot leave the sandbox`)
	res, err = airlock.Eval(context.Background(), `export default { w: new WeakRef({}) }`, airlock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantCrossError(t, "airlock.Eval", res, `result.w: a WeakRef cannot leave the sandbox`)
}

// What crosses keeps crossing: undefined kept where it was (an object's
// property, an array's element), cycles and shared objects, typed arrays,
// class instances as their own properties, Dates, Errors, boxed
// primitives.
func TestResultCross_WhatCrossesIsKept(t *testing.T) {
	for _, rt := range []*airlock.Runtime{testRuntime(), workerRuntime()} {
		res := runOn(t, rt, `
			class P { constructor() { this.x = 1 } get y() { return 2 } }
			const o = { u: undefined, arr: [1, undefined], t: new Uint8Array([1, 2]), p: new P(),
				d: new Date(0), e: new TypeError("x"), b: Object(1) };
			o.self = o;
			export default o;
		`, airlock.Options{Language: airlock.JavaScript})
		wantStatus(t, res, airlock.StatusSuccess)
		o := res.Result.(map[string]any)
		u := js.Undefined{}
		if v, ok := o["u"]; !ok || v != u {
			t.Errorf("u = %#v, %v", v, ok)
		}
		if !reflect.DeepEqual(o["arr"], []any{1.0, u}) || !reflect.DeepEqual(o["p"], map[string]any{"x": 1.0}) {
			t.Errorf("result = %s", airlock.Inspect(res.Result))
		}
		if reflect.ValueOf(o["self"]).Pointer() != reflect.ValueOf(o).Pointer() {
			t.Errorf("the cycle is lost: %s", airlock.Inspect(res.Result))
		}
		if !reflect.DeepEqual(o["t"], []byte{1, 2}) {
			t.Errorf("t = %#v", o["t"])
		}
		if d, ok := o["d"].(time.Time); !ok || d.UnixMilli() != 0 {
			t.Errorf("d = %#v", o["d"])
		}
		if !reflect.DeepEqual(o["e"], &js.ErrorValue{Name: "TypeError", Message: "x"}) || !reflect.DeepEqual(o["b"], &js.Boxed{Value: 1.0}) {
			t.Errorf("e = %#v, b = %#v", o["e"], o["b"])
		}
	}
}

// A getter in the result runs once; what it throws fails the run with the
// program's own error, and what it returns takes the rule.
func TestResultCross_Getters(t *testing.T) {
	res := runOpts(t, `export default { a: 1, get g() { throw new RangeError("no g") } }`,
		airlock.Options{Language: airlock.JavaScript})
	wantStatus(t, res, airlock.StatusError)
	if res.Error.Name != "RangeError" || res.Error.Message != "no g" {
		t.Errorf("error = %v", res.Error)
	}
	var got []any
	res = runOpts(t, `export default { get g() { report("get"); return [() => 1] } }`,
		airlock.Options{Language: airlock.JavaScript, Report: func(v any) { got = append(got, v) }})
	wantCrossError(t, "getter", res, `result.g[0]: a function cannot leave the sandbox`)
	if !reflect.DeepEqual(got, []any{"get"}) {
		t.Errorf("reports = %v", got)
	}
}

// The path is cut: a value nested thousands of levels deep, or under a
// key of a megabyte, fails with a message of bounded size that keeps the
// path's head and its tail.
func TestResultCross_PathIsBounded(t *testing.T) {
	res := runOpts(t, `
		let v = () => 1;
		for (let i = 0; i < 5000; i++) v = { child: v };
		export default { top: v };
	`, airlock.Options{Language: airlock.JavaScript})
	if res.Status != airlock.StatusError {
		t.Fatalf("status %s", res.Status)
	}
	m := res.Error.Message
	if len(m) > 600 || !strings.HasPrefix(m, "result.top.child.child") || !strings.Contains(m, "…") ||
		!strings.HasSuffix(m, ".child.child: a function cannot leave the sandbox") {
		t.Errorf("message (%d bytes) = %q", len(m), m)
	}
	res = runOpts(t, `export default { ["k".repeat(1 << 20)]: { ["k".repeat(1 << 20) + " "]: Symbol() } }`,
		airlock.Options{Language: airlock.JavaScript})
	if res.Status != airlock.StatusError {
		t.Fatalf("status %s", res.Status)
	}
	m = res.Error.Message
	if len(m) > 600 || !strings.HasPrefix(m, "result.kkk") || !strings.HasSuffix(m, ": a symbol cannot leave the sandbox") ||
		!strings.Contains(m, "…") {
		t.Errorf("message (%d bytes) = %q", len(m), m)
	}
}

// A host function's argument that cannot cross was already a catchable
// error; it now says where, in the same form, rooted at the argument.
func TestResultCross_HostArgumentPath(t *testing.T) {
	globals := map[string]any{"take": func(...any) {}, "atake": airlock.Async(func(...any) {})}
	for _, rt := range []*airlock.Runtime{testRuntime(), workerRuntime()} {
		res := runOn(t, rt, `
			const out = [];
			for (const args of [[{ items: [1, 2, () => 3] }], [1, Symbol("s")], [new Map([["k", new WeakMap()]])]]) {
				try { take(...args); out.push("taken") } catch (e) { out.push(e.name + ": " + e.message) }
			}
			try { await atake(0, { s: new Set([1, { g() {} }]) }) } catch (e) { out.push(e.name + ": " + e.message) }
			export default out;
		`, airlock.Options{Language: airlock.JavaScript, Globals: globals})
		wantResult(t, res, []any{
			"DataCloneError: argument 1.items[2]: a function cannot leave the sandbox",
			"DataCloneError: argument 2: a symbol cannot leave the sandbox",
			"DataCloneError: argument 1<Map value 0>: a WeakMap cannot leave the sandbox",
			"DataCloneError: argument 2.s<Set member 1>.g: a function cannot leave the sandbox",
		})
	}
	// structuredClone is the platform's, not a crossing: its own words.
	res := runOpts(t, `let n = ""; try { structuredClone({ f() {} }) } catch (e) { n = e.name + ": " + e.message } export default n`,
		airlock.Options{Language: airlock.JavaScript})
	wantResult(t, res, "DataCloneError: function f could not be cloned")
}

// The built-in report is a channel of the run's result (seed 000 §5): a
// value that cannot cross is a catchable error at the call, as for any
// host function, and the run goes on if the program catches it.
func TestResultCross_Reports(t *testing.T) {
	for _, rt := range []*airlock.Runtime{testRuntime(), workerRuntime()} {
		var got []any
		res := runOn(t, rt, `
			let msg = "";
			report({ ok: 1 });
			try { report({ rows: [1], fmt: (r) => r }) } catch (e) { msg = e.name + ": " + e.message }
			export default msg;
		`, airlock.Options{Language: airlock.JavaScript, Report: func(v any) { got = append(got, v) }})
		wantResult(t, res, "DataCloneError: argument 1.fmt: a function cannot leave the sandbox")
		if !reflect.DeepEqual(got, []any{map[string]any{"ok": 1.0}}) || len(res.Reports) != 1 {
			t.Errorf("reports = %v / %v", got, res.Reports)
		}
		res = runOn(t, rt, `report(Symbol("s")); export default 1`, airlock.Options{Language: airlock.JavaScript})
		wantCrossError(t, "report(Symbol)", res, "argument 1: a symbol cannot leave the sandbox")
	}
}

// The executor: final_answer carries the answer out of the sandbox, so it
// takes the result's rule; a step's value is shown (an observation, as a
// REPL echoes its last expression), so a function or symbol in it is left
// out, as console.log leaves it out of an object.
func TestResultCross_Executor(t *testing.T) {
	ctx := context.Background()
	ex, err := airlock.NewExecutor(airlock.ExecutorOptions{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Cleanup(ctx)
	if err := ex.Init(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ code, want string }{
		{`final_answer({ answer: 42, how: () => 1 })`, "argument 1.how: a function cannot leave the sandbox"},
		{`final_answer(() => 1)`, "argument 1: a function cannot leave the sandbox"},
		{`final_answer([new WeakMap()])`, "argument 1[0]: a WeakMap cannot leave the sandbox"},
	} {
		out, err := ex.Run(ctx, c.code)
		var xe *airlock.ExecutorError
		if !errors.As(err, &xe) || xe.Code != airlock.CodeRuntimeException || !strings.Contains(xe.Message, c.want) {
			t.Errorf("%s: output %v, error %v; want %q", c.code, out, err, c.want)
		}
	}
	// Caught, the step goes on and may answer again.
	out, err := ex.Run(ctx, `try { final_answer({ f() {} }) } catch (e) { final_answer(e.message) }`)
	if err != nil || !out.IsFinalAnswer || out.Output != "argument 1.f: a function cannot leave the sandbox" {
		t.Errorf("output %#v, error %v", out, err)
	}
	u := js.Undefined{}
	for _, c := range []struct {
		code string
		want any
	}{
		{`return { n: 1, f() {} }`, map[string]any{"n": 1.0}},
		{`return [Symbol("s")]`, []any{u}},
		{`return () => 1`, u},
	} {
		out, err := ex.Run(ctx, c.code)
		if err != nil || out.IsFinalAnswer || !reflect.DeepEqual(out.Output, c.want) {
			t.Errorf("%s: output %s, error %v", c.code, airlock.Inspect(out.Output), err)
		}
	}
}

// FuzzResultPath: whatever the keys on the way (any text, quotes, line
// breaks, lone surrogates, megabytes) and however deep, the error of a
// value that cannot cross is one line of valid UTF-8 of bounded size that
// starts at the root and ends with the kind.
func FuzzResultPath(f *testing.F) {
	f.Add("items", 1, uint8(0))
	f.Add(`say "hi"`+"\n", 3, uint8(1))
	f.Add("\xed\xa0\x80", 2, uint8(2))
	f.Add(strings.Repeat("é", 40)+"x", 300, uint8(3))
	f.Add("", 1, uint8(4))
	f.Fuzz(func(t *testing.T, key string, depth int, kind uint8) {
		depth = min(max(depth, 1), 2000) // at the top a function would be called, a promise awaited
		if len(key) > 1<<16 {
			key = key[:1<<16]
		}
		leaves := []string{"() => 1", "Symbol()", "new WeakMap()", "Promise.resolve()", "new Proxy({}, {})"}
		src := `let v = ` + leaves[int(kind)%len(leaves)] + `;
			for (let i = 0; i < depth; i++) {
				switch (i % 4) {
				case 0: v = { [key]: v }; break;
				case 1: v = [v]; break;
				case 2: v = new Map([[key, v]]); break;
				default: v = new Set([v]);
				}
			}
			export default v;`
		res := runOpts(t, src, airlock.Options{Language: airlock.JavaScript,
			Globals: map[string]any{"key": key, "depth": depth}})
		if res.Status != airlock.StatusError || res.Error.Name != "DataCloneError" {
			t.Fatalf("status %s, error %v", res.Status, res.Error)
		}
		m := res.Error.Message
		if len(m) > 600 || !strings.HasPrefix(m, "result") || !strings.HasSuffix(m, " cannot leave the sandbox") ||
			strings.ContainsAny(m, "\n\r") || !utf8.ValidString(m) {
			t.Fatalf("message (%d bytes) %q", len(m), m)
		}
	})
}
