package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/airlockrun/airlock/internal/childtest"
)

// items lists an inspection's items of kind k as name@line:col.
func items(in *Inspection, k InspectKind) []string {
	var s []string
	for _, it := range in.Items {
		if it.Kind != k {
			continue
		}
		name := it.Name
		if !it.Literal {
			name = "<expr>"
		}
		s = append(s, fmt.Sprintf("%s@%d:%d", name, it.Line, it.Column))
	}
	slices.Sort(s)
	return s
}

func inspect(t *testing.T, code string) *Inspection {
	t.Helper()
	in, err := InspectStep(code, false)
	if err != nil {
		t.Fatalf("%q: %v", code, err)
	}
	return in
}

// The engine reports the globals a step names but does not declare, each
// at its first use, closures' free globals included, and not names that
// are locals, properties or the step's own declarations.
func TestInspectStep_Globals(t *testing.T) {
	in := inspect(t, "const xs = [1]; let obj = {process: 1};\nfunction f(process) { return process + fetch(x) }\nxs.forEach(v => console.log(v, obj.require, require))\nclass A { m() { return setTimeout } }")
	if in.Err != "" {
		t.Fatal(in.Err)
	}
	want := []string{"console@3:17", "fetch@2:40", "require@3:45", "setTimeout@4:24", "x@2:46"}
	if got := items(in, GlobalRef); !slices.Equal(got, want) {
		t.Errorf("globals %v, want %v", got, want)
	}
	var decls []string
	for _, it := range in.Items {
		if it.Kind == GlobalDecl {
			decls = append(decls, it.Name)
		}
	}
	if slices.Sort(decls); !slices.Equal(decls, []string{"A", "f", "obj", "xs"}) {
		t.Errorf("declarations %v", decls)
	}
	var locals []string
	for _, it := range in.Items {
		if it.Kind == Local {
			locals = append(locals, it.Name)
		}
	}
	for _, n := range []string{"process", "v"} {
		if !slices.Contains(locals, n) {
			t.Errorf("local %s missing from %v", n, locals)
		}
	}
	// Assignments, typeof and delete name globals too; a multi-byte
	// character counts one column.
	in = inspect(t, "名前 = 1; typeof fetch; delete window.x")
	if got := items(in, GlobalRef); !slices.Equal(got, []string{"fetch@1:16", "window@1:30", "名前@1:1"}) {
		t.Errorf("globals %v", got)
	}
}

// import() calls, with their specifier when it is a string literal.
func TestInspectStep_DynamicImports(t *testing.T) {
	in := inspect(t, "await import(\"x-ok\");\n  await import(name); import('a' + b); import('', {with: {}}); import('')")
	// With options, the specifier is not told apart from an expression.
	want := []string{"<expr>@2:23", "<expr>@2:40", "<expr>@2:9", "@2:64", "x-ok@1:7"}
	if got := items(in, ImportCall); !slices.Equal(got, want) {
		t.Errorf("imports %v, want %v", got, want)
	}
}

// A static import is a SyntaxError in a step, a script: the engine names
// its module, at the import keyword.
func TestInspectStep_StaticImport(t *testing.T) {
	for code, mod := range map[string]string{
		`import fs from "node:fs"`:             "node:fs",
		"let a = 1;\n  import 'x'; a":          "x",
		`import {a as b, c} from "x-y"; b`:     "x-y",
		`import * as ns from 'z'`:              "z",
		`import def, {from} from "m"; from()`:  "m",
		`import {"str" as s} from "q"`:         "q",
		"import x from y":                      "",
		"import.meta":                          "",
		`import("ok").then(m => m)`:            "-",
		`const f = () => { import("a") }; f()`: "-",
	} {
		in := inspect(t, code)
		switch mod {
		case "-":
			if in.Err != "" || in.Import {
				t.Errorf("%q: %+v", code, in)
			}
		case "":
			if in.Err == "" || in.ImportModule != "" {
				t.Errorf("%q: %+v", code, in)
			}
		default:
			if !in.Import || in.ImportModule != mod || in.Err != "Cannot use import statement outside a module" {
				t.Errorf("%q: %+v, want import of %q", code, in, mod)
			}
		}
	}
	if in := inspect(t, "let a = 1;\n  import 'x'; a"); in.Line != 2 || in.Column != 3 {
		t.Errorf("position %d:%d, want 2:3", in.Line, in.Column)
	}
}

// Syntax errors keep their positions; the end of input is told apart.
func TestInspectStep_SyntaxErrors(t *testing.T) {
	for code, want := range map[string]string{
		"q +":                   "Unexpected end of input@1:4",
		"const a = 1;\nlet = ;": "@2:",
		"function f() {":        "Unexpected end of input@1:15",
		"x })":                  "Unexpected token '}'@1:3",
		"/* c":                  "@1:1",
		"`abc":                  "@1:1",
	} {
		in := inspect(t, code)
		got := fmt.Sprintf("%s@%d:%d", in.Err, in.Line, in.Column)
		msg, pos, _ := strings.Cut(want, "@")
		if in.Err == "" || (msg != "" && in.Err != msg) || !strings.Contains(got, "@"+pos) {
			t.Errorf("%q: %s, want %s", code, got, want)
		}
	}
}

// A session's realm cannot change what the engine reports of the next
// step: the report is written in C, nothing of the realm is read or run.
func TestInspectStep_RealmCannotInterfere(t *testing.T) {
	v := newSession(t)
	out, _ := v.Step(&Job{Stop: make(chan struct{})}, `
		Array.prototype.toJSON = () => [];
		Object.defineProperty(Array.prototype, 0, {set() {}, get() { return 9 }});
		Error.prototype.toString = () => "fake";
		Object.defineProperty(SyntaxError.prototype, "lineNumber", {get() { return 99 }});
		Object.defineProperty(Object.prototype, "importModule", {get() { return "evil" }});
		JSON.stringify = () => "{}";
		globalThis.process = 1;
	`, 1000)
	if out.Kind != OK {
		t.Fatalf("setup: %+v", out)
	}
	in, err := v.InspectStep("process.exit(); await import('x')")
	if err != nil {
		t.Fatal(err)
	}
	if got := items(in, GlobalRef); !slices.Equal(got, []string{"process@1:1"}) {
		t.Errorf("globals %v", got)
	}
	if got := items(in, ImportCall); !slices.Equal(got, []string{"x@1:23"}) {
		t.Errorf("imports %v", got)
	}
	in, err = v.InspectStep("let = 1")
	if err != nil || in.Err == "" || in.Line != 1 || in.Import {
		t.Errorf("syntax error %+v %v", in, err)
	}
}

// Hostile steps: deep nesting of brackets, expressions, functions and
// blocks, huge flat code, and malformed input. The engine answers each
// (a syntax error such as a stack overflow, or a report); the host does
// not crash. Each step also runs through a session's VM afterwards, which
// must still answer.
func TestInspectStep_Hostile(t *testing.T) {
	if !childtest.InChild(t) {
		return
	}
	deep := func(open, mid, close string, n int) string {
		return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
	}
	steps := []string{
		strings.Repeat("[", 100000),
		deep("(", "1", ")", 50000),
		deep("(() => ", "x", ")", 5000),
		deep("function f() {", "return g", "}", 5000),
		deep("{", "y", "}", 50000),
		deep("a?", "b", ":c", 50000),
		"x = " + strings.Repeat("-", 100000) + "1",
		"x = " + strings.Repeat("1+", 100000) + "1",
		deep("`${", "1", "}`", 20000),
		strings.Repeat("import('a');", 20000),
		strings.Repeat("let v", 1) + strings.Repeat("v", 70000) + " = 1",
		"import " + strings.Repeat("{a} ", 20000) + "from 'x'",
		"import",
		"import {",
		"let[...A(",
		"\x00\xff\xfe",
		"'\\u{110000}'",
		"class A { #x; static { this.#x } }",
	}
	vm, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer vm.Close()
	for _, s := range steps {
		in, err := InspectStep(s, false)
		if err != nil {
			t.Errorf("%.20q: %v", s, err)
			continue
		}
		if in.Line < 0 || in.Column < 0 {
			t.Errorf("%.20q: position %d:%d", s, in.Line, in.Column)
		}
		if _, err := vm.InspectStep(s); err != nil {
			t.Fatalf("%.20q: the VM failed: %v", s, err)
		}
	}
	if in, err := vm.InspectStep("process"); err != nil || len(items(in, GlobalRef)) != 1 {
		t.Errorf("after the hostile steps: %+v %v", in, err)
	}
}

// FuzzInspectStep: the engine's inspection never fails the host, and its
// positions are within the code.
func FuzzInspectStep(f *testing.F) {
	for _, s := range []string{
		"const x = 1; while (x) x--", "for await (const x of xs) ;", "import a from 'b'", "await import(`x`)",
		"label: for (const x of y) for (;;) continue label", "class A { static { for (;;) break } m() { do ; while (0) } }",
		"let {a = 1, ...r} = o, [b, , ...c] = p", "return a?.b ?? c", "async function* g() { yield* g() }",
	} {
		f.Add(s)
	}
	vm, err := New()
	if err != nil {
		f.Fatal(err)
	}
	defer vm.Close()
	f.Fuzz(func(t *testing.T, code string) {
		in, err := vm.InspectStep(code)
		if err != nil {
			t.Fatalf("%q: %v", code, err)
		}
		lines := strings.Count(code, "\n") + 1
		if in.Line > lines {
			t.Fatalf("%q: error line %d of %d", code, in.Line, lines)
		}
		for _, it := range in.Items {
			if it.Line < 0 || it.Line > lines || it.Column < 0 {
				t.Fatalf("%q: %+v", code, it)
			}
		}
	})
}

// Surprise: QuickJS's parser checks its stack, but js_create_function,
// which turns the parsed functions into bytecode, recursed into nested
// functions unchecked: 5000 nested function declarations parse, and then
// overflowed the wasm stack, a fault that spent the sandbox (a session's
// state lost). Patch 0007 checks the stack there: a SyntaxError-like
// stack overflow, and the session goes on.
func TestStep_DeepFunctionsFailToCompile(t *testing.T) {
	v := newSession(t)
	job := func() *Job { return &Job{Stop: make(chan struct{})} }
	if out, _ := v.Step(job(), "globalThis.kept = 41", 1000); out.Kind != OK {
		t.Fatalf("%+v", out)
	}
	deep := strings.Repeat("function f() {", 5000) + "return g" + strings.Repeat("}", 5000)
	out, discarded := v.Step(job(), deep, 1000)
	if discarded || out.Kind == OK || !strings.Contains(out.Message, "stack") {
		t.Fatalf("deep step: %+v, discarded %v", out, discarded)
	}
	if out, _ := v.Step(job(), "kept + 1", 1000); out.Kind != OK || out.Value != 42.0 {
		t.Fatalf("after: %+v", out)
	}
}

// A step is compiled once: PrepareStep keeps what it compiled for the next
// Step of the same script and budget. Another script, another budget, or a
// second Step compiles afresh.
func TestPrepareStep_CompiledOnce(t *testing.T) {
	v := newSession(t)
	step := func(script string, ops int) Outcome {
		out, _ := v.Step(&Job{Stop: make(chan struct{}), OpsSpent: func() {}}, script, ops)
		return out
	}
	if in, err := v.PrepareStep(context.Background(), "let n = 1; n + 1", 10, false); err != nil || in.Err != "" {
		t.Fatal(in, err)
	}
	if out := step("let n = 1; n + 1", 10); out.Kind != OK || out.Value != 2.0 {
		t.Fatalf("kept step: %+v", out)
	}
	// Kept once: the same script again is compiled again (and n is taken).
	if out := step("let n = 1; n + 1", 10); out.Kind != LinkFailed {
		t.Fatalf("second run: %+v", out)
	}
	// Another script than the one kept.
	if _, err := v.PrepareStep(context.Background(), "n + 10", 10, false); err != nil {
		t.Fatal(err)
	}
	if out := step("n + 20", 10); out.Kind != OK || out.Value != 21.0 {
		t.Fatalf("other script: %+v", out)
	}
	// The budget it was compiled with is the one that counts.
	loop := "for (let i = 0; i < 100; i++) {}"
	if _, err := v.PrepareStep(context.Background(), loop, -1, false); err != nil {
		t.Fatal(err)
	}
	if out := step(loop, 10); out.Kind == OK {
		t.Fatalf("a step kept without a budget ran with one: %+v", out)
	}
	if _, err := v.PrepareStep(context.Background(), loop, 10, false); err != nil {
		t.Fatal(err)
	}
	if out := step(loop, 10); out.Kind == OK {
		t.Fatalf("the kept step spent no budget: %+v", out)
	}
}

// newSession is a VM with a session started, closed when the test ends.
func newSession(tb testing.TB) *VM {
	tb.Helper()
	v, err := New()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(v.Close)
	if err := v.StartSession(0); err != nil {
		tb.Fatal(err)
	}
	return v
}
