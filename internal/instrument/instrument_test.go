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
		{"const fetch = 1; var process", ""},
		{"}+{", "syntax_valid"},
		{"}); while(true); (function(){", "syntax_valid"},
		{"let[...A(", "syntax_valid"},
	} {
		p := Prepare(c.code, Options{AuthorizedImports: []string{"x-ok"}})
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

// FuzzPrepare: validation never panics or hangs.
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
		go func() { done <- Prepare(code, Options{AuthorizedImports: []string{"x"}}) }()
		var p *Program
		select {
		case p = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("Prepare hangs on %q", code)
		}
		for _, d := range p.Diagnostics {
			if d.Line < 0 || d.Column < 0 {
				t.Fatalf("%q: position %+v", code, d)
			}
		}
	})
}
