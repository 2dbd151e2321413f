package airlock_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
)

// diagnosticsText lists diagnostics as rule@line:column.
func diagnosticsText(ds []airlock.Diagnostic) string {
	var s []string
	for _, d := range ds {
		loc := "-"
		if d.Location != nil {
			loc = fmt.Sprintf("%d:%d", d.Location.Line, d.Location.Column)
		}
		s = append(s, d.Rule+"@"+loc)
	}
	return strings.Join(s, " ")
}

// The validation rules are answered by the engine that runs the step: it
// compiles the step without running it and reports the globals it names,
// the names it binds and its import() calls (issue 17, item 4). Scope is
// the engine's: a parameter, a local or the step's own declaration named
// like a host capability is no finding; a free global is, once, where it
// is first used.
func TestExecutor_ValidationByEngine(t *testing.T) {
	opts := airlock.ExecutorOptions{AuthorizedImports: []string{"x-ok"}}
	for code, want := range map[string]string{
		"function f(process) { return process.x }; f(1)":          "",
		"const fetch = 1; fetch + 1":                              "",
		"const o = {require: 1}; o.require":                       "",
		"process.a;\n  process.b; fetch()":                        "forbidden_global_access@1:1 forbidden_global_access@2:14",
		"const g = () => () => setTimeout;":                       "forbidden_global_access@1:23",
		"for await (const x of [1]) {}":                           "",
		"let a = 1;\n  import 'x-ok'":                             "static_import_in_script_mode@2:3",
		"await import('x-ok'); await import(\n 'nope')":           "import_allowed@1:29",
		"const m = 'x-ok'; await import(m)":                       "import_allowed@1:25",
		"function f(__smol_x) {}":                                 "reserved_identifier@1:12",
		"let a = 1;\n__smol_y = 2":                                "reserved_identifier@2:1",
		"class __smol_C {}; new __smol_C()":                       "reserved_identifier@1:7",
		"const a = 1;\n  let x = ;":                               "syntax_valid@2:11",
		"const t = `${1}`; label: for (;;) { break label }; a?.b": "",
		"return 1": "",
	} {
		if got := diagnosticsText(airlock.ValidateCode(code, opts)); got != want {
			t.Errorf("%q: %s, want %s", code, got, want)
		}
	}
	// TypeScript: the rules read the erased code, positions in the step.
	if got := diagnosticsText(airlock.ValidateCode("type T = number;\nconst n: T = 1; process.exit(n)", opts)); got != "forbidden_global_access@2:17" {
		t.Errorf("TypeScript: %s", got)
	}
	// The executor refuses before anything runs: no side effect.
	ex := newExecutor(t, opts)
	_, err := ex.Run(context.Background(), "globalThis.ran = true;\nimport fs from 'node:fs'")
	e := wantCode(t, err, "ERR_IMPORT_NOT_ALLOWED")
	if e.Details["module"] != "node:fs" {
		t.Errorf("details %v", e.Details)
	}
	if out := mustRun(t, ex, "typeof ran"); out.Output != "undefined" {
		t.Errorf("the refused step ran: %v", out.Output)
	}
}

// A session's own state cannot blind the validation of its next steps:
// what a step changes in the realm (prototypes, JSON, Error) is not read
// by the engine's report.
func TestExecutor_ValidationNotBlindedByRealm(t *testing.T) {
	ex := newExecutor(t, airlock.ExecutorOptions{})
	mustRun(t, ex, `Array.prototype.toJSON = () => []; JSON.stringify = () => "{}";
		Error.prototype.toString = () => "ok"; Object.prototype.importModule = "z"`)
	_, err := ex.Run(context.Background(), `await import("nope")`)
	wantCode(t, err, "ERR_IMPORT_NOT_ALLOWED")
	_, err = ex.Run(context.Background(), `let __smol_ops = 1`)
	wantCode(t, err, "ERR_VALIDATION_FAILED")
}

// The compile of the validation has the step's time: a step that takes
// the engine's compiler quadratic time (200,000 distinct globals named in
// a closure: each is looked up among those before it) is stopped by the
// timeout, ERR_EXEC_TIMEOUT and DIRTY as a step's run would be, and the
// executor recovers after cleanup and init. Before, the validation had no
// time limit and such a step held Run for minutes.
func TestExecutor_ValidationHasTheStepsTime(t *testing.T) {
	var b strings.Builder
	b.WriteString("(() => {")
	for i := 0; i < 200000; i++ {
		fmt.Fprintf(&b, "g%d;", i)
	}
	b.WriteString("})")
	ex := newExecutor(t, airlock.ExecutorOptions{Timeout: 50 * time.Millisecond})
	ctx := context.Background()
	_, err := ex.Run(ctx, b.String())
	wantCode(t, err, "ERR_EXEC_TIMEOUT")
	if ex.State() != airlock.StateDirty {
		t.Fatalf("state %v", ex.State())
	}
	if err := ex.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ex.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, ex, "1 + 1"); out.Output != 2.0 {
		t.Fatalf("after recovery: %v", out.Output)
	}
}

// A strict step that the engine refuses for an error of strict mode was
// read as TypeScript, and esbuild's printer made it run: `var implements
// = 1` became `var implements2 = 1`, a legacy octal `00` became `0`
// (test262, 76 files). The engine's SyntaxError stands now, at its place
// in the step, whether the step is run or only validated; a sloppy
// executor runs the same code, and TypeScript is still read as such.
func TestExecutor_StrictErrorsAreNotTypeScript(t *testing.T) {
	strictOnly := []string{
		"var implements = 1",
		"var x = 1;\nlet interface = 2",
		"var yield = 1",
		"var l\\u0065t = 1",
		"var n = 00",
		"var s = '\\1'",
		"if (true) function f() {}",
		"for (var x = 0 in {}) ;",
		"with ({}) {}",
		"var o = {}; delete o.x; var u = 010",
	}
	strict := newExecutor(t, airlock.ExecutorOptions{})
	sloppy := newExecutor(t, airlock.ExecutorOptions{Sloppy: true})
	for _, code := range strictOnly {
		ds := airlock.ValidateCode(code, airlock.ExecutorOptions{})
		if got := diagnosticsText(ds); !strings.HasPrefix(got, "syntax_valid@") {
			t.Errorf("%q validated: %s, want syntax_valid", code, got)
		}
		_, err := strict.Run(context.Background(), "globalThis.ran = true;\n"+code)
		e := wantCode(t, err, "ERR_VALIDATION_FAILED")
		if d, ok := e.Details["diagnostics"].([]airlock.Diagnostic); !ok || len(d) != 1 || d[0].Location == nil || d[0].Location.Line < 2 {
			t.Errorf("%q: diagnostics %+v, want one on the step's code", code, e.Details["diagnostics"])
		}
		if out := mustRun(t, strict, "typeof ran"); out.Output != "undefined" {
			t.Errorf("%q: the refused step ran", code)
		}
		if _, err := sloppy.Run(context.Background(), code); err != nil {
			t.Errorf("%q in a sloppy executor: %v", code, err)
		}
	}
	// A legacy octal escape in a template is an error in sloppy code too;
	// TypeScript's reading refused it as well, and still does.
	_, err := strict.Run(context.Background(), "var t = `\\08`")
	wantCode(t, err, "ERR_VALIDATION_FAILED")
	// TypeScript in a strict step is still erased and run.
	if out := mustRun(t, strict, "interface P { x: number }\nconst p: P = { x: 2 };\nlet q = <number>p.x; q + 1"); out.Output != 3.0 {
		t.Errorf("TypeScript step: %v", out.Output)
	}
	// TypeScript with an error of strict mode in it is refused too, at its
	// place in the step: esbuild renamed `implements` to `implements2`
	// and printed 010 as 8, and the step ran.
	for code, at := range map[string]int{
		"const a: number = 1;\nvar implements: number = 1":       2,
		"const n: number = 010; n":                               1,
		"let s: string = 'x';\n\nwith ({}) { s }":                3,
		"function f(a: number, a: number) { return a }\nf(1, 2)": 1,
	} {
		_, err := strict.Run(context.Background(), code)
		e := wantCode(t, err, "ERR_VALIDATION_FAILED")
		if d, ok := e.Details["diagnostics"].([]airlock.Diagnostic); !ok || len(d) != 1 || d[0].Location == nil || d[0].Location.Line != at {
			t.Errorf("%q: diagnostics %+v, want one on line %d", code, e.Details["diagnostics"], at)
		}
		if strings.Contains(code, "a: number, a") {
			continue // duplicate parameters with types: an error in sloppy TypeScript too
		}
		if _, err := newExecutor(t, airlock.ExecutorOptions{Sloppy: true}).Run(context.Background(), code); err != nil {
			t.Errorf("%q in a sloppy executor: %v", code, err)
		}
	}
	if out := mustRun(t, strict, "typeof implements2"); out.Output != "undefined" {
		t.Errorf("a refused TypeScript step ran: implements2 is %v", out.Output)
	}
}
