package instrument

import "testing"

func TestCompletion(t *testing.T) {
	for _, c := range []struct {
		code, want string
	}{
		{"1 + 2", "1 + 2"},
		{"const a = 1;\na * 2;", "a * 2"},
		{"import x from 'y';\nx.map(v => v)\n// done\n", "x.map(v => v)"},
		{"const r = await f();\nr.join('\\n');", "r.join('\\n')"},
		{"for await (const x of xs) {}\nxs.length", "xs.length"},
		{"let a = 1;", ""},
		{"export default 1;\n2", ""},
		{"const d = 1; export { d as default };\n2", ""},
		{"if (x) { 1 }", ""},
		{"1 +", ""},
		{"", ""},
		{"const a = 1, b = 2;\n({a, b})", "({a, b})"},
		{"(async () => 5)()", "(async () => 5)()"},
		{"x = 5; x", "x"},
		{"f(); /* c */ ( (a) ).b", "( (a) ).b"},
		{"((1 + 2))", "((1 + 2))"},
		{"(\")(\")", "(\")(\")"},
		{"const r = 1;\n(await f(r)).join(',')", "(await f(r)).join(',')"},
	} {
		s, e, ok := Parse(c.code).Completion()
		got := ""
		if ok {
			got = c.code[s:e]
		}
		if got != c.want {
			t.Errorf("Completion(%q) = %q, want %q", c.code, got, c.want)
		}
	}
}

func TestModuleSyntax(t *testing.T) {
	for code, want := range map[string]bool{
		`x = 5; x`:                         false,
		`const m = await import("a"); m`:   false,
		`import a from "a"; a`:             true,
		`import "a"`:                       true,
		`export default 1`:                 true,
		"const a = 1;\nexport { a }":       true,
		`if (x) { import("a") }`:           false,
		`const s = "import a from 'b'"; s`: false,
		`not code (`:                       false,
	} {
		if got := Parse(code).ModuleSyntax(); got != want {
			t.Errorf("%q: %v, want %v", code, got, want)
		}
	}
}
