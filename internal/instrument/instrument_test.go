package instrument

import (
	"strings"
	"testing"
	"time"
)

func rules(p *Program) []string {
	var rs []string
	for _, d := range p.Diagnostics {
		rs = append(rs, d.Rule)
	}
	return rs
}

func TestRewrite(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"const x = 1;", "      x = 1;"},
		{"let y;", "    y=void 0;"},
		{"var z = 2, q;", "    z = 2, q;"},
		{"const {a, b: [c]} = o;", "      void 0,({a, b: [c]} = o);"},
		{"let b = 2, [c, d] = [3, 4];", "    b = 2, ([c, d] = [3, 4]);"},
		{"class C extends D {}", "C=class C extends D {};"},
		{"while (i < 3) i++", "while (i < 3) {" + guard + "i++}"},
		{"do x++; while (x < 5)", "do {" + guard + "x++;} while (x < 5)"},
		{"for (var k in o) { k }", "for (    k in o) {" + guard + " k }"},
		{"for (var i = 0; i < 3; i++) {}", "for (    i = 0; i < 3; i++) {" + guard + "}"},
		{"for (const [a, b] of m) if (a) b; else c;", "for (const [a, b] of m) {" + guard + "if (a) b; else c;}"},
		{"if (c) { var deep = 1 }", "if (c) {     deep = 1 }"},
		{"function f() { var inner = 1; let j = 2 }", "function f() { var inner = 1; let j = 2 }"},
		{"for await (const x of xs) {}", "for await (const x of xs) {" + guard + "}"},
		{"l: for (;;) continue l", "l: for (;;) {" + guard + "continue l}"},
		{"while (a) /* c */ b() // d\n;", "while (a) /* c */ {" + guard + "b() // d\n;}"},
	} {
		p := Prepare(c.in, Options{Guards: true})
		if p.HasErrors() {
			t.Errorf("%q: %v", c.in, p.Diagnostics)
			continue
		}
		if p.Body != c.out {
			t.Errorf("%q:\n got %q\nwant %q", c.in, p.Body, c.out)
		}
	}
	p := Prepare("const x = 1; function f() {} class C {} var v; let [a, {b}] = z", Options{})
	if got := strings.Join(p.Globals, ","); got != "C,a,b,f,v,x" {
		t.Errorf("globals %s", got)
	}
	if len(p.Functions) != 1 || p.Functions[0] != "f" {
		t.Errorf("functions %v", p.Functions)
	}
}

func TestRules(t *testing.T) {
	for _, c := range []struct {
		code  string
		rules string
	}{
		{"  \n\t", "code_non_empty"},
		{"let x = ;", "syntax_valid"},
		{"import fs from 'node:fs'", "static_import_in_script_mode"},
		{"import {a} from 'x-ok'\na()", "static_import_in_script_mode"},
		{"await import('x-denied')", "import_allowed"},
		{"await import(name)", "import_allowed"},
		{"await import('x-ok')", ""},
		{"process.exit(1)", "forbidden_global_access"},
		{"const x = obj.process; const y = {process: 1}", ""},
		{"setTimeout(() => {}, 10)", "forbidden_global_access"},
		{"let __smol_ops = 1e9", "reserved_identifier"},
		{"__smol_fail = () => {}", "reserved_identifier"},
		{"return 1", ""},
		{"}+{", "syntax_valid"},
		{"}); while(true); (function(){", "syntax_valid"},
		{"let[...A(", "syntax_valid"},
	} {
		p := Prepare(c.code, Options{Guards: true, AuthorizedImports: []string{"x-ok"}})
		if got := strings.Join(rules(p), ","); got != c.rules {
			t.Errorf("%q: rules %q, want %q (%v)", c.code, got, c.rules, p.Diagnostics)
		}
	}
	p := Prepare("const a = 1;\n  let x = ;", Options{})
	if d := p.Diagnostics[0]; d.Line != 2 || d.Column != 11 {
		t.Errorf("syntax error at %d:%d, want 2:11", d.Line, d.Column)
	}
	p = Prepare("let a = 1; process.exit()", Options{})
	if d := p.Diagnostics[0]; d.Line != 1 || d.Column != 12 || d.Severity != Warning {
		t.Errorf("warning %+v", d)
	}
}

// Positions in the rewritten code map back to the user's code.
func TestPosition(t *testing.T) {
	code := "let n = 0;\nwhile (n < 3) n++\nfunction f() {\n  for (;;) { throw new TypeError('deep') }\n}"
	p := Prepare(code, Options{Guards: true})
	lines := strings.Split(p.Body, "\n")
	col := strings.Index(lines[3], "throw") + 1
	if l, c := p.Position(4, col, 0); l != 4 || c != 14 {
		t.Errorf("throw at %d:%d, want 4:14", l, c)
	}
	// Inside an inserted guard: the position of the statement it guards.
	if l, c := p.Position(4, 14, 0); l != 4 || c != 13 {
		t.Errorf("guard at %d:%d, want 4:13", l, c)
	}
	if l, c := p.Position(1, 5+10, 10); l != 1 || c != 5 {
		t.Errorf("line one at %d:%d, want 1:5", l, c)
	}
}

// FuzzPrepare: preparing never panics, keeps every line where it was, and
// what it writes parses whenever the code did.
func FuzzPrepare(f *testing.F) {
	for _, s := range []string{
		"const x = 1; while (x) x--", "do a(); while (b)", "for (var i in o) if (i) continue; else break",
		"class A { static { for (;;) break } m() { do ; while (0) } }", "let {a = 1, ...r} = o, [b, , ...c] = p",
		"label: for (const x of y) for (;;) continue label", "var a; var a = 1", "if (a) var b = 1; else var c",
		"for await (const x of xs) ;", "async function* g() { for await (const y of g()) yield y }",
		"switch (x) { case 1: var s = 1; while (1) break }", "try { var t = 1 } catch ({message}) { var u }",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		done := make(chan *Program, 1)
		go func() { done <- Prepare(code, Options{Guards: true, AuthorizedImports: []string{"x"}}) }()
		var p *Program
		select {
		case p = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("Prepare hangs on %q", code)
		}
		if p.HasErrors() {
			return
		}
		if strings.Count(p.Body, "\n") != strings.Count(code, "\n") {
			t.Fatalf("lines moved:\n%s\n---\n%s", code, p.Body)
		}
		if _, err := parse(p.Body); err != nil {
			t.Fatalf("rewrite does not parse: %v\n%s\n---\n%s", err, code, p.Body)
		}
	})
}
