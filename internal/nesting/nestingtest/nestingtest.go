// Package nestingtest holds the deeply nested programs that the tests of
// every entry point feed to it, and the honest programs that must still
// run. The tests run the deep ones in a child process of the test binary
// (childtest.InChild), so that a stack overflow is a failed test and
// not a dead test run.
package nestingtest

import "strings"

// Case is a program in two forms: an ES module (Module) and the body of an
// executor step (Step). Want, for an honest case, is its value as JSON.
type Case struct {
	Name, Module, Step string
	Want               string
}

func expr(name, e string) Case {
	return Case{Name: name, Module: "export default " + e, Step: "return " + e}
}

func stmt(name, s string) Case {
	return Case{Name: name, Module: s + "\nexport default 1", Step: s + "\nreturn 1"}
}

// Deep returns programs that nest n levels deep, balanced and unbalanced,
// in every bracket and in the operators that nest without one.
func Deep(n int) []Case {
	r := strings.Repeat
	third := n / 3
	return []Case{
		expr("paren", r("(", n)+"1"+r(")", n)),
		expr("paren-open", r("(", n)),
		expr("paren-close", "1"+r(")", n)),
		expr("array", r("[", n)+r("]", n)),
		expr("array-open", r("[", n)),
		expr("array-close", "[]"+r("]", n)),
		expr("object", r("{a:", n)+"1"+r("}", n)),
		expr("object-open", r("{a:", n)),
		stmt("block", r("{", n)+r("}", n)),
		stmt("block-open", r("{", n)),
		stmt("block-close", r("}", n)),
		expr("template", r("`${", n)+"1"+r("}`", n)),
		expr("template-open", r("`${", n)),
		expr("template-close", "`x`"+r("}`", n)),
		expr("mixed-open", r("([{a:", third)),
		expr("mixed", r("([{a:", third)+"1"+r("}])", third)),
		expr("mismatched", r("(", n)+r("]", n)),
		expr("mixed-close", "1"+r(")]}", third)),
		expr("not", r("!", n)+"1"),
		expr("minus", r("- ", n)+"1"),
		expr("typeof", r("typeof ", n)+"1"),
		expr("new", r("new ", n)+"Object"),
		expr("await", r("await ", n)+"1"),
		expr("assign", "globalThis.a="+r("a=", n)+"1"),
		expr("conditional", r("1?1:", n)+"1"),
		expr("arrow", r("a=>", n)+"1"),
		expr("member", "Math"+r(".a", n)),
		expr("call", "Math.max"+r("()", n)),
		expr("index", "[]"+r("[0]", n)),
		expr("tagged", "String.raw"+r("``", n)),
		expr("assertion", r("<any>", n)+"1"),
		expr("non-null", "1"+r("!", n)),
		expr("as", "1"+r(" as any", n)),
		expr("generic", "1 as "+r("Array<", n)+"number"+r(">", n)),
		expr("generic-list", "1 as "+r("Map<1,", n)),
		stmt("if", r("if(1)", n)+";"),
		stmt("else-if", "if(0);"+r("else if(0);", n)),
		stmt("else-if-block", "if(0){}"+r("else if(0){}", n)),
		stmt("while", r("while(0)", n)+";"),
		stmt("label", r("a:", n)+";"),
		stmt("do", r("do ", n)+";"+r("while(0);", n)),
		expr("class-extends", r("class extends ", n)+"Object"+r("{}", n)),
		expr("regexp-then-paren", "/x/"+r("(", n)),
		expr("comment-then-paren", "/* ) ] } */ // ))\n"+r("(", n)),
	}
}

// Honest returns real-looking programs that nest as deeply as real ones
// do (50 to 300 levels of each shape) and must run. Each module's default
// export (each step's return value) is Want.
func Honest() []Case {
	r := strings.Repeat
	var chain strings.Builder
	chain.WriteString("[1, 2, 3]")
	for i := 0; i < 100; i++ {
		chain.WriteString(".map((x) => x + 1)")
	}
	chain.WriteString(".reduce((a, b) => a + b, 0)")
	var noSemi strings.Builder
	for i := 0; i < 2000; i++ {
		noSemi.WriteString("t = t + 1\n")
	}
	var elseIf strings.Builder
	elseIf.WriteString("let k = 0\nconst v = 299\n")
	for i := 0; i < 300; i++ {
		if i > 0 {
			elseIf.WriteString(" else ")
		}
		elseIf.WriteString("if (v === " + itoa(i) + ") { k = " + itoa(i) + " }")
	}
	cases := []Case{
		expr("paren-100", r("(", 100)+"1"+r(")", 100)),
		expr("array-100", r("[", 100)+"7"+r("]", 100)+r("[0]", 100)),
		expr("object-100", "("+r("{a:", 100)+"2"+r("}", 100)+")"+r(".a", 100)),
		expr("template-50", r("`${", 50)+"3"+r("}`", 50)),
		expr("template-text", "`a${`b${`c${1 + 1}`}`}` + `)]}${'('}`"),
		expr("not-3", "!!!0"),
		expr("ternary-50", r("0 ? 0 : ", 50)+"4"),
		expr("sum-10000", "0"+r(" + 1", 10000)),
		expr("method-chain-100", chain.String()),
		expr("regexps", `[/[(\[{]+/.test("((("), /\(\(\(/.test("((("), /[/(]/.test("/"), "a(b".split(/\(/).length, /[\]({]/.source.length, 4 / 2 / 1 > 1 ? "(" : ")"].join()`),
		expr("strings", `'(((((' + "[[[[[" + `+"`{{{{{`"+` + '\'(' + "\"[" + /* (((( */ '' // ((((`+"\n"),
	}
	cases[0].Want, cases[1].Want, cases[2].Want, cases[3].Want = "1", "7", "2", `"3"`
	cases[4].Want, cases[5].Want, cases[6].Want, cases[7].Want = `"abc2)]}("`, "true", "4", "10000"
	cases[8].Want = "306"
	cases[9].Want = `"true,true,true,2,6,("`
	cases[10].Want = `"(((((` + `[[[[[{{{{{'(\"["` // JSON of the string
	cases = append(cases,
		Case{Name: "blocks-100", Module: "let x = 0;" + r("{", 100) + "x = 5;" + r("}", 100) + "\nexport default x",
			Step: "let x = 0;" + r("{", 100) + "x = 5;" + r("}", 100) + "\nreturn x", Want: "5"},
		Case{Name: "no-semicolons-2000", Module: "let t = 0\n" + noSemi.String() + "export default t",
			Step: "let t = 0\n" + noSemi.String() + "return t", Want: "2000"},
		Case{Name: "else-if-300", Module: elseIf.String() + "\nexport default k", Step: elseIf.String() + "\nreturn k", Want: "299"},
		withWant(expr("closures-50", r("(() => ", 50)+"6"+r(")()", 50)), "6"),
	)
	return cases
}

// HonestTS returns honest TypeScript: deep generic types, assertions and
// annotations.
func HonestTS() []Case {
	r := strings.Repeat
	src := "type Box<T> = { v: T };\n" +
		"const b: " + r("Box<", 50) + "number" + r(">", 50) + " = " + r("{ v: ", 50) + "8" + r(" }", 50) + ";\n" +
		"function id<T extends Record<string, Array<Map<string, Set<number>>>>>(x: T): T { return x }\n" +
		"const n = <number>(b as any)" + r(".v", 50) + " satisfies number;\n" +
		"const m = new Map<string, Array<number>>([[\"a\", [n]]]);\n" +
		"const ok = n < 10 && n > 2 ? (m.get(\"a\")!)[0] : 0;\n" +
		"export default id({ k: [] }) && ok"
	return []Case{{Name: "ts-generics", Module: src, Want: "8"}}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func withWant(c Case, want string) Case {
	c.Want = want
	return c
}

// Hidden returns programs that open n parentheses behind a slash, a
// comment or an operator that a scanner without a parser may read the
// wrong way: where a parser divides and a scanner would read a regular
// expression (`{} / '/ ; ' (((`: the parser divides by a string and calls
// it), and where a parser reads a regular expression and a scanner would
// divide (`let x` at the end of a line, then `/'/ (((`: a scanner that
// divides reads a string to the end of the line). Each is in the two
// languages' shapes that reach the parsers: a module and a step (the same
// text; neither closes its parentheses, which the parsers see only after
// recursing through them all).
func Hidden(n int) []Case {
	nest := strings.Repeat("(", n)
	var cs []Case
	add := func(name, pre string) {
		cs = append(cs, Case{Name: name, Module: pre + nest, Step: pre + nest})
	}
	// The parser divides.
	add("object-divided", "const x = {} / '/ ; ' ")
	add("function-divided", "const x = function () {} / '/ ; ' ")
	add("class-divided", "const x = class {} / '/ ; ' ")
	add("arrow-body-divided", "const x = () => ({}) / '/ ; ' ")
	for _, w := range []string{"async", "of", "as", "is", "satisfies", "keyof", "readonly", "infer", "unique", "asserts", "type", "from", "get", "set", "static", "declare"} {
		add(w+"-divided", "let "+w+" = 1; const x = "+w+" / '/ ; ' ")
	}
	add("yield-divided", "var yield = 1; x = yield / '/ ; ' ")
	add("let-divided", "var let = 1; x = let / '/ ; ' ")
	// The parser reads a regular expression.
	add("let-line", "let x\n/'/ ")
	add("type-line", "let x: string[]\n/'/ ")
	add("type-paren-line", "let x: (string)\n/'/ ")
	add("generic-line", "let x: Array<string>\n/'/ ")
	add("overload-line", "declare function f(a: string)\n/'/ ")
	add("break-line", "for (;;) { break\n/'/ ")
	add("continue-line", "for (;;) { continue\n/'/ ")
	add("debugger-line", "debugger\n/'/ ")
	add("import-line", "import 'x'\n/'/ ")
	add("angle-compared", "let a = 1, b = 2; const x = a < b > /'/ ")
	add("not-line", "let a = 1\n!/'/ ")
	add("increment-line", "let a = 1\n++/'/.x ")
	add("arrow-block-line", "const f = () => {}\n/'/ ")
	// The parser reads a comment.
	add("html-open-comment", "const x = 1 <!-- `\n")
	add("html-close-comment", "const x = 1\n--> `\n")
	return cs
}

// Recovering returns programs with a syntax error after which a parser
// that recovers (sobek, which the agent's instrumentation reads code with,
// goes on after an error) reads as code, n levels deep, what the bound
// counts as a literal or as closed: a template's text after a token skipped
// past the error, a regular expression's body, and closers that the
// recovery reads inside a regular expression. Nested labels ({a:{a:…) make
// it report an error per pair of them: n²/2. The decorator forms are
// JavaScript to esbuild; sobek has no decorators.
func Recovering(n int) []Case {
	nest, labels := strings.Repeat("(", n), strings.Repeat("{a:", n)
	var cs []Case
	add := func(name, src string) {
		cs = append(cs, Case{Name: name, Module: src, Step: src})
	}
	add("template-skipped", "@ `return "+nest+"`")
	add("template-field", "@d class A { x = `return "+nest+"` }")
	add("template-resumed", "`${ a b ` return "+nest+" `")
	add("regex-skipped", "@ /x return "+nest+"/")
	add("closers-hidden", strings.Repeat("[ a b / ] /;\n", n*3/4))
	add("labels-skipped", "@ `return "+labels+"`")
	add("labels-field", "@d class A { x = `return "+labels+"` }")
	return cs
}
