package instrument

import (
	"strings"
	"testing"
)

// The parser goes on after a syntax error, and its recovery reads code
// where a scan of the grammar sees a literal: so Parse gives it at most
// 64 KiB of code, every literal's text blanked, and past 4 KiB only code
// that esbuild reads as JavaScript. What the readers find is unchanged:
// they use positions and names, which blanking keeps.
func TestParseReadsOnlyJavaScript(t *testing.T) {
	pad := "// " + strings.Repeat("-", 5000) + "\n"
	for _, code := range []string{
		"let x: number = 1; x",                                  // TypeScript: erased first, by the caller
		"@ `return " + strings.Repeat("(", 100) + "`",           // not JavaScript
		"x = {}\n/a/.test(y)",                                   // a slash read two ways
		"const n = 1;\n" + strings.Repeat("n + ", 20_000) + "n", // longer than 64 KiB
		pad + "x = {__proto__: 1, __proto__: 2}",                // past 4 KiB, not JavaScript to esbuild
	} {
		if Parse(code) != nil {
			t.Errorf("%.60q parsed", code)
		}
	}
	if Parse("x = {__proto__: 1, __proto__: 2}") == nil {
		t.Error("sobek did not read short code that esbuild refuses")
	}
	code := "const s = 'await f(); throw 1', t = `${await g()} throw`; /* h() */\nthrow s + t"
	p := Parse(code)
	if p == nil {
		t.Fatal("not parsed")
	}
	calls := p.AsyncCalls(func(string) bool { return true })
	if len(calls) != 1 || !strings.HasPrefix(code[calls[0]:], "g()") {
		t.Errorf("async calls at %v", calls)
	}
	if th := p.Throws(); len(th) != 1 || code[th[0][0]:th[0][1]] != "s + t" {
		t.Errorf("throws at %v", th)
	}
}
