package airlock_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/airlockrun/airlock"
)

// TestBareEntryAsAnyOther: a program whose text names no global and
// imports nothing runs without the globals module (source.Graph.Bare),
// and every outcome is the one the same program gets with the module,
// which a global named t (a letter in every program here) keeps.
// Failures while evaluating stay the program's errors, compile failures
// stay link errors, with the same names, messages and positions.
func TestBareEntryAsAnyOther(t *testing.T) {
	for _, c := range []struct {
		src  string
		lang airlock.Language
		fn   string // Execute.Fn
	}{
		{`export default "hello, world"`, airlock.JavaScript, ""},
		{`export default JSON.parse("{")`, airlock.JavaScript, ""},
		{"const x = 1;\nthrow new TypeError('x is ' + x);", airlock.JavaScript, ""},
		{"export default (", airlock.JavaScript, ""},
		{"export { nope };", airlock.JavaScript, ""},
		{"export const f = 1;", airlock.JavaScript, ""},
		{"let a = 1;\nlet a = 2;", airlock.JavaScript, ""},
		{"throw 42", airlock.JavaScript, ""},
		{`export default typeof \u0063onsole`, airlock.JavaScript, ""},
		{"export default await Promise.reject(new RangeError('r'))", airlock.JavaScript, ""},
		{"export default async () => { await null; throw new Error('later') }", airlock.JavaScript, ""},
		{"export default function (a, b) { return a + b }", airlock.JavaScript, ""},
		{"const n: number = 2;\nexport default n * 21;", airlock.TypeScript, ""},
		{"const n: number = ;", airlock.TypeScript, ""},
		{"function id<T>(x: T): T { return x }\nexport default id<string>('t');", airlock.TypeScript, ""},
		{"const n: number = 1;\nthrow new Error('ts ' + n);", airlock.TypeScript, ""},
		// The value kinds a bare run's export may have: a primitive
		// finishes the run in the shim (select_at_once), any other is
		// encoded by the codec.
		{"export default null", airlock.JavaScript, ""},
		{"export default undefined", airlock.JavaScript, ""},
		{"export default -0", airlock.JavaScript, ""},
		{"export default true", airlock.JavaScript, ""},
		{"export default 'a'.repeat(3) + 'b'", airlock.JavaScript, ""},
		{"export default 10n ** 20n", airlock.JavaScript, ""},
		{"export default Symbol('s')", airlock.JavaScript, ""},
		{"export default { a: [1, 'two'] }", airlock.JavaScript, ""},
		{"export const v = 'named'", airlock.JavaScript, "v"},
		{"export const v = 'named'", airlock.JavaScript, "w"},
		{"export default 1", airlock.JavaScript, "default"},
		{"export const f = () => 'called'", airlock.JavaScript, "f"},
		// A live binding a job changes before the export is selected.
		{"let x = 0; Promise.resolve().then(() => { x = 1 }); export { x as default }", airlock.JavaScript, ""},
		{"let x = 0; queueMicrotask(() => { x = 2 }); export { x as default }", airlock.JavaScript, ""},
		{"export let later = 0; await null; later = 3", airlock.JavaScript, "later"},
	} {
		opts := airlock.Options{Language: c.lang}
		opts.Execute.Fn = c.fn
		if c.src == "export default function (a, b) { return a + b }" {
			opts.Execute.Args = []any{1, 2}
		}
		bare := runOpts(t, c.src, opts)
		if !strings.Contains(c.src, "t") {
			t.Fatalf("%q: no t in it", c.src)
		}
		opts.Globals = map[string]any{"t": 0}
		kept := runOpts(t, c.src, opts)
		if bare.Status != kept.Status || !reflect.DeepEqual(bare.Result, kept.Result) || !reflect.DeepEqual(bare.Error, kept.Error) {
			t.Errorf("%q:\nbare: %s %#v %#v\nkept: %s %#v %#v", c.src, bare.Status, bare.Result, bare.Error,
				kept.Status, kept.Result, kept.Error)
		}
	}
	// A bare program cannot reach the globals: they are module bindings,
	// never properties of the global object.
	res := runOpts(t, `export default [typeof globalThis["con" + "sole"], typeof globalThis["rep" + "ort"]].join()`,
		airlock.Options{Language: airlock.JavaScript})
	wantResult(t, res, "undefined,undefined")
}

// TestBuiltinReportOnlyInItsRun: the built-in report, host function 0 of
// a run, is made with the image and marked shown (the host keeps its value
// as decoded) by the run that takes it; in the next run on the same
// prepared instance, whose host function 0 is its own, the call goes to
// that function, not to the run's reports. A function in the argument
// cannot cross either way.
func TestBuiltinReportOnlyInItsRun(t *testing.T) {
	rt := airlock.NewRuntime(airlock.RuntimeConfig{Prepared: 1})
	defer rt.Close()
	const src = `report({ v: 1 }); let m = ""; try { report({ f: () => 1 }) } catch (e) { m = e.message } export default m`
	const refused = "argument 1.f: a function cannot leave the sandbox"
	for i := 0; i < 3; i++ {
		res := runOn(t, rt, src, airlock.Options{Language: airlock.JavaScript})
		wantResult(t, res, refused)
		if len(res.Reports) != 1 || !reflect.DeepEqual(res.Reports[0], map[string]any{"v": 1.0}) {
			t.Fatalf("builtin report got %s", airlock.Inspect(res.Reports))
		}
		var got []any
		res = runOn(t, rt, src, airlock.Options{Language: airlock.JavaScript,
			Globals: map[string]any{"report": func(v any) { got = append(got, v) }}})
		wantResult(t, res, refused)
		if len(res.Reports) != 0 || !reflect.DeepEqual(got, []any{map[string]any{"v": 1.0}}) {
			t.Fatalf("the run's own report: got %s, reports %s", airlock.Inspect(got), airlock.Inspect(res.Reports))
		}
	}
}
