package airlock_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/js"
)

// A step is global code of the executor's one realm: the engine keeps
// what it declares, with the language's own rules.
func TestExecutor_EngineKeepsState(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	ctx := context.Background()
	mustRun(t, ex, `const c = 1; let l = 1; class K {}`)
	// const stays constant.
	_, err := ex.Run(ctx, `c = 2`)
	if e := wantCode(t, err, "ERR_RUNTIME_EXCEPTION"); e.Details["name"] != "TypeError" {
		t.Errorf("assignment to a constant: %v", e)
	}
	if out := mustRun(t, ex, `l = 5; return [c, l, typeof K]`); fmt.Sprint(out.Output) != "[1 5 function]" {
		t.Errorf("got %v", out.Output)
	}
	// Functions hoist within their step.
	if out := mustRun(t, ex, `return hoisted(); function hoisted() { return "up" }`); out.Output != "up" {
		t.Errorf("hoisting: %v", out.Output)
	}
	// The temporal dead zone holds, within a step and across steps: a
	// declaration whose step failed before it ran stays uninitialized, as
	// in Node's REPL.
	_, err = ex.Run(ctx, `early(); let late = 1; function early() { return late }`)
	if e := wantCode(t, err, "ERR_RUNTIME_EXCEPTION"); e.Details["name"] != "ReferenceError" {
		t.Errorf("TDZ in a step: %v", e)
	}
	_, err = ex.Run(ctx, `late`)
	if e := wantCode(t, err, "ERR_RUNTIME_EXCEPTION"); e.Details["name"] != "ReferenceError" {
		t.Errorf("TDZ across steps: %v", e)
	}
	// for await, top-level await and return.
	if out := mustRun(t, ex, `let sum = 0; for await (const x of [Promise.resolve(1), 2]) sum += x; return sum + (await readTool("")).length`); out.Output != 11.0 {
		t.Errorf("for await: %v", out.Output)
	}
	// Code of a step runs in strict mode.
	_, err = ex.Run(ctx, `undeclared = 1`)
	wantCode(t, err, "ERR_RUNTIME_EXCEPTION")
}

// Without a return, a step's value is its completion value: the last
// expression statement's, as a REPL shows it. A returned promise, or one
// that is the last expression, is awaited.
func TestExecutor_LastExpression(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	mustRun(t, ex, `let a = 1`)
	for code, want := range map[string]string{
		`a + 1`:                                "2",
		`(a)`:                                  "1",
		`({x: a})`:                             "map[x:1]",
		"a;\n// a comment\n":                   "1",
		`a; let b = 2`:                         "1",
		`1; return 2`:                          "2",
		`1; return`:                            "undefined",
		`for (const x of [1, 2]) { return x }`: "1",
		`try { return 3 } finally { console.log("f") }`: "3",
		`lbl: { return 5 }`:                             "5",
		`readTool("p")`:                                 "content:p",
		`await readTool("q")`:                           "content:q",
		`if (a) { "yes" } else { "no" }`:                "yes",
		`const k = 3`:                                   "undefined",
		`console.log("x")`:                              "undefined",
	} {
		out := mustRun(t, ex, code)
		if fmt.Sprint(out.Output) != want {
			t.Errorf("%q: %#v, want %s", code, out.Output, want)
		}
	}
}

// Every step may be TypeScript: its types are erased as airlock.Run erases
// a module's, and positions point into the code as written.
func TestExecutor_TypeScript(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{MaxOperations: 100})
	ctx := context.Background()
	if out := mustRun(t, ex, `const xs: string[] = ["a"]; return xs.length`); out.Output != 1.0 {
		t.Errorf("got %v", out.Output)
	}
	// Top-level await and return together (esbuild takes them only in a
	// function).
	if out := mustRun(t, ex, `const r: string = await readTool("p"); if (r) { return r.length as number }`); out.Output != 9.0 {
		t.Errorf("got %v", out.Output)
	}
	out := mustRun(t, ex, `interface Row { price: number; qty: number }
enum Color { Red, Green }
function total<T extends Row>(rows: T[]): number { let t = 0; for (const r of rows) t += r.price * r.qty; return t }
const rows = [{price: 2, qty: 3}] satisfies Row[];
[total(rows), Color.Green, (rows as any[]).length]`)
	if fmt.Sprint(out.Output) != "[6 1 1]" {
		t.Errorf("got %v", out.Output)
	}
	// What a TypeScript step declares stays, and its loops count.
	if out := mustRun(t, ex, `let n: number = total(rows); n + 1`); out.Output != 7.0 {
		t.Errorf("got %v", out.Output)
	}
	_, err := ex.Run(ctx, `for (let i: number = 0; i < 101; i++) {}`)
	wantCode(t, err, "ERR_MAX_OPS_EXCEEDED")
	// A runtime error's position is in the TypeScript.
	_, err = ex.Run(ctx, "const a: number = 1;\ntype T = { x: number };\n  const b: T = { x: a }; nope(b as T);\n")
	e := wantCode(t, err, "ERR_RUNTIME_EXCEPTION")
	if e.Details["line"] != 3 || e.Details["column"] != 26 {
		t.Errorf("position %v:%v, want 3:26; stack %v", e.Details["line"], e.Details["column"], e.Details["stack"])
	}
	// A syntax error too.
	_, err = ex.Run(ctx, "const ok: number = 1;\nconst x: = 1")
	e = wantCode(t, err, "ERR_VALIDATION_FAILED")
	ds, _ := e.Details["diagnostics"].([]airlock.Diagnostic)
	if len(ds) != 1 || ds[0].Rule != "syntax_valid" || ds[0].Location == nil || ds[0].Location.Line != 2 || ds[0].Location.Column != 10 {
		t.Errorf("diagnostics %+v", ds)
	}
	// The validation rules read the erased code.
	_, err = ex.Run(ctx, `const m: any = await import("nope")`)
	wantCode(t, err, "ERR_IMPORT_NOT_ALLOWED")
	ds = airlock.ValidateCode("let q: number = 1;\nprocess.exit()", airlock.ExecutorOptions{})
	if len(ds) != 1 || ds[0].Rule != "forbidden_global_access" || ds[0].Location == nil || ds[0].Location.Line != 2 {
		t.Errorf("diagnostics %+v", ds)
	}
	if p := airlock.PrepareProgram(`let v: number = 1`, airlock.ExecutorOptions{}); strings.Contains(p.TransformedCode, "number") {
		t.Errorf("prepared %q", p.TransformedCode)
	}
}

// A setter a step puts on Object.prototype.value never sees a step's value:
// the engine defines the value as an own property of its wrapper.
func TestExecutor_ValueSetterOnObjectPrototype(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	mustRun(t, ex, `Object.defineProperty(Object.prototype, "value", {set(v) { globalThis.stolen = v }, get() { return "wrong" }, configurable: true}); undefined`)
	if out := mustRun(t, ex, `42`); out.Output != 42.0 {
		t.Errorf("completion value %v", out.Output)
	}
	if out := mustRun(t, ex, `return 7`); out.Output != 7.0 {
		t.Errorf("returned value %v", out.Output)
	}
	if out := mustRun(t, ex, `return typeof globalThis.stolen`); out.Output != "undefined" {
		t.Errorf("the setter ran: %v", out.Output)
	}
}

// With Sloppy a step is sloppy global code, as Node's REPL runs it: an
// assignment to an undeclared name makes a global that later steps see.
// What the sandbox guards stays guarded: a tool cannot be replaced, a
// function's caller is not reachable, and the budget still counts.
func TestExecutor_Sloppy(t *testing.T) {
	ctx := context.Background()
	ex := newExecutor(t, airlock.ExecutorOptions{Sloppy: true, MaxOperations: 100})
	if out := mustRun(t, ex, `x = 5; x`); out.Output != 5.0 {
		t.Errorf("x = 5; x: %#v", out.Output)
	}
	if out := mustRun(t, ex, `x + 1`); out.Output != 6.0 {
		t.Errorf("the global stays: %#v", out.Output)
	}
	if out := mustRun(t, ex, `(function () { return this === globalThis })()`); out.Output != true {
		t.Errorf("sloppy this: %#v", out.Output)
	}
	// Top-level await, return and the last expression as in strict steps.
	if out := mustRun(t, ex, `y = await Promise.resolve(2); ({x, y})`); fmt.Sprint(out.Output) != "map[x:5 y:2]" {
		t.Errorf("object literal: %#v", out.Output)
	}
	if out := mustRun(t, ex, `(async () => 5)()`); out.Output != 5.0 {
		t.Errorf("async IIFE: %#v", out.Output)
	}
	if out := mustRun(t, ex, `if (x) return "r"; 1`); out.Output != "r" {
		t.Errorf("return: %#v", out.Output)
	}
	// A tool is not writable: sloppy code fails silently, and the tool stays.
	if out := mustRun(t, ex, `readTool = 1; typeof readTool`); out.Output != "function" {
		t.Errorf("a tool was replaced: %#v", out.Output)
	}
	// A sloppy function cannot reach the code that called it (the step's
	// glue): QuickJS has no caller property.
	out := mustRun(t, ex, `function f() { try { return typeof f.caller + ":" + typeof arguments.callee.caller } catch (e) { return e.name } } [1].map(f)[0]`)
	if out.Output != "undefined:undefined" {
		t.Errorf("caller: %#v", out.Output)
	}
	_, err := ex.Run(ctx, `for (;;) {}`)
	wantCode(t, err, "ERR_MAX_OPS_EXCEEDED")
	// The step is validated and compiled as sloppy code too: syntax only
	// sloppy code has compiles.
	if out := mustRun(t, ex, `with ({ w: 7 }) { w }`); out.Output != 7.0 {
		t.Errorf("with: %#v", out.Output)
	}
	// Strict steps are the default.
	strict := newExecutor(t, airlock.ExecutorOptions{})
	_, err = strict.Run(ctx, `z = 5; z`)
	wantCode(t, err, "ERR_RUNTIME_EXCEPTION")
	_, err = strict.Run(ctx, `with ({ w: 7 }) { w }`)
	wantCode(t, err, "ERR_VALIDATION_FAILED")
	if d := airlock.ValidateCode(`with ({ w: 7 }) { w }`, airlock.ExecutorOptions{Sloppy: true}); len(d) != 0 {
		t.Errorf("ValidateCode, sloppy: %v", d)
	}
}

// SourceModules are authorized imports of JavaScript source.
func TestExecutor_SourceModules(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{
		AuthorizedImports: []string{"text", "math"},
		Modules:           map[string]airlock.Module{"math": {"two": 2}},
		SourceModules:     map[string]string{"text": `import m from "math"; export const shout = (s) => s.toUpperCase() + m.two;`, "secret": `export default 1`},
	})
	out := mustRun(t, ex, `const { shout } = await import("text"); shout("hi")`)
	if out.Output != "HI2" {
		t.Errorf("got %#v", out.Output)
	}
	_, err := ex.Run(context.Background(), `await import("secret")`)
	wantCode(t, err, "ERR_IMPORT_NOT_ALLOWED")
}

// TestExecutor_StateNeverReachesTheNext: a closed executor's instance is
// rewound and used again, by the next executor or run; nothing of its
// steps (declarations, globals, prototype pollution, tools, variables)
// reaches them.
func TestExecutor_StateNeverReachesTheNext(t *testing.T) {
	ctx := context.Background()
	probe := `[typeof secret, typeof leak, [].polluted, ({}).evil, typeof myTool, typeof myVar]`
	for i := 0; i < 3; i++ {
		ex, err := airlock.NewExecutor(airlock.ExecutorOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := ex.Init(ctx); err != nil {
			t.Fatal(err)
		}
		if err := ex.SendTools(ctx, map[string]any{"myTool": func() int { return 1 }}); err != nil {
			t.Fatal(err)
		}
		if err := ex.SendVariables(ctx, map[string]any{"myVar": 1}); err != nil {
			t.Fatal(err)
		}
		out := mustRun(t, ex, "return "+probe)
		want := []any{"undefined", "undefined", js.Undefined{}, js.Undefined{}, "function", "number"}
		if !reflect.DeepEqual(out.Output, want) {
			t.Fatalf("executor %d saw %v", i, out.Output)
		}
		mustRun(t, ex, `let secret = 1; globalThis.leak = 2; Array.prototype.polluted = 3; Object.prototype.evil = 4`)
		if err := ex.Cleanup(ctx); err != nil {
			t.Fatal(err)
		}
		res := evalJS(t, "export default "+probe)
		if !reflect.DeepEqual(res, []any{"undefined", "undefined", js.Undefined{}, js.Undefined{}, "undefined", "undefined"}) {
			t.Fatalf("a run after executor %d saw %v", i, res)
		}
	}
}
