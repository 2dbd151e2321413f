package nesting_test

import (
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/evanw/esbuild/pkg/api"
	"github.com/grafana/sobek/parser"

	"github.com/airlockrun/airlock/internal/instrument"
	"github.com/airlockrun/airlock/internal/nesting"
)

// The recursive parsers the bound protects, as the host calls them: esbuild
// erasing a TypeScript module, esbuild reading a module as JavaScript (to
// tell a TypeScript error from a JavaScript one), esbuild erasing an
// executor step inside its function, and sobek reading a module for the
// agent's instrumentation.
var esbuildUses = []struct {
	name   string
	loader api.Loader
	format api.Format
	step   bool
}{
	{"esbuild TS", api.LoaderTS, api.FormatESModule, false},
	{"esbuild JS", api.LoaderJS, api.FormatESModule, false},
	{"esbuild TS step", api.LoaderTS, api.FormatDefault, true},
}

func esbuild(src string, loader api.Loader, format api.Format, step bool) int {
	if step {
		src = "async function step() {\n" + src + "\n}"
	}
	r := api.Transform(strings.ToValidUTF8(src, "\uFFFD"), api.TransformOptions{
		Loader: loader, Format: format, Target: api.ESNext, LogLevel: api.LogLevelSilent})
	return len(r.Errors)
}

// sobekStack parses src with sobek, as the agent's instrumentation does, on
// a goroutine of its own, and measures the Go stack it grew to: with the
// collector off, a stack that grew stays allocated until its goroutine
// ends (Go allocates stacks in powers of two, so this is within a factor
// of two of what the parser used).
func sobekStack(src string) (uint64, error) {
	runtime.GC()
	old := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(old)
	var before, after runtime.MemStats
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.ReadMemStats(&before)
		_, err = parser.ParseFile(nil, "", src, parser.IgnoreRegExpErrors, parser.WithDisableSourceMaps, parser.IsModule)
		runtime.ReadMemStats(&after)
	}()
	<-done
	if after.StackInuse < before.StackInuse {
		return 0, err
	}
	return after.StackInuse - before.StackInuse, err
}

// Where a slash may divide or start a regular expression (or a comment
// starts where a scanner sees code), the reading a parser takes, and the
// text after it that hides what follows in the other reading: a string, a
// template, a comment or a regular expression. Each context and hider
// joins a nest into a program the parser accepts.
var (
	// The parser divides: the scanner must not take the slash for a
	// regular expression alone.
	dividedAfter = []string{
		"x = {} ", "x = function () {} ", "x = class {} ", "x = async function () {} ", "x = (() => {}) ",
		"let async = 1; x = async ", "let of = 1; x = of ", "let as = 1; x = as ", "let is = 1; x = is ",
		"let satisfies = 1; x = satisfies ", "let keyof = 1; x = keyof ", "let readonly = 1; x = readonly ",
		"let infer = 1; x = infer ", "let unique = 1; x = unique ", "let asserts = 1; x = asserts ",
		"let from = 1; x = from ", "let type = 1; x = type ", "let get = 1; x = get ", "let implements = 1; x = implements ",
		"var yield = 1; x = yield ", "var let = 1; x = let ", "var await = 1; x = await ",
		"x = a\n", "x = a < b > ", "x = a++\n", "x = a!\n", "x = {}\n", "x = `${a}`\n", "x = /a/\n", "x = a?.b\n",
	}
	dividedHiders = [][2]string{
		{"/ '/ ; ' + ", ""}, {"/ \"/ ; \" + ", ""}, {"/ `/ ; ` + ", ""}, {"/ '/*' + ", " + '*/'"}, {"/ ", " / 1"},
	}
	// The parser reads a regular expression: the scanner must not take the
	// slash for a division alone.
	regexAfter = []string{
		"let x\n", "let x: string[]\n", "let x: (string)\n", "let x: Array<string>\n", "let x: 'a'\n",
		"declare function f(a: string)\n", "for (;;) { break\n", "l: for (;;) { continue l\n", "debugger\n",
		"const f = () => {}\n", "{}\n", "function f() {}\n", "class A {}\n", "x = a < b > ", "if (a) ",
		"while (a) ", "do ; while (a) ", "let a = 1\n!", "let a = 1\n++", "import 'x'\n", "export {}\n",
		"x = 1;\n", "return ", "typeof ", "case 1: ", "x = a ? ", "{ a: ",
	}
	regexHiders = [][2]string{
		{"/'/ + ", ""}, {"/\"/ + ", ""}, {"/`/ + ", ""}, {"/[//]/ + ", ""}, {"/[/*]/ + ", " + /[*/]/"},
		{"/'/.test(", ")"}, {"/[']/ + ", ""},
	}
	// The parser reads a comment where a scanner may read code.
	commentHiders = [][2]string{
		{"x = 1 <!-- `\n", "\n`"}, {"x = 1\n--> `\n", "\n`"}, {"x = 1 <!-- /*\n", "\n*/"}, {"<!-- '\n", ""},
	}
)

// nest is a nest n levels deep of one kind, an expression.
func nest(kind uint8, n int) string {
	r := strings.Repeat
	switch kind % 6 {
	case 0:
		return r("(", n) + "1" + r(")", n)
	case 1:
		return r("[", n) + "1" + r("]", n)
	case 2:
		return r("f(", n) + "1" + r(")", n)
	case 3:
		return r("{a:", n) + "1" + r("}", n)
	case 4:
		return r("!", n) + "1"
	default:
		return r("`${", n) + "1" + r("}`", n)
	}
}

// hidden lists the programs of the contexts and hiders above, as a
// prefix and a suffix around a nest.
func hidden() (cs [][2]string) {
	for _, c := range dividedAfter {
		for _, h := range dividedHiders {
			cs = append(cs, [2]string{c + h[0], h[1]})
		}
	}
	for _, c := range regexAfter {
		for _, h := range regexHiders {
			post := h[1]
			if strings.Contains(c, "{ break") || strings.Contains(c, "{ continue") {
				post += "\n}"
			}
			if c == "{ a: " {
				post += " }"
			}
			cs = append(cs, [2]string{c + h[0], post})
		}
	}
	return append(cs, commentHiders...)
}

// checkMax is the bound the differential check applies: 500 levels, which
// esbuild and sobek parse in at most 2 MB of Go stack, so that under the
// 16 MB the fuzz test allows, a nest the scan missed (8,000 levels or more
// deep) overflows it and crashes the fuzzer.
const checkMax = 500

// FuzzParsers checks the scan against the parsers it protects, on a nest
// hidden behind every construct where a slash may divide or start a
// regular expression, in JavaScript and TypeScript (hidden), and on any
// prefix and suffix the fuzzer makes of them:
//
//   - what the scan lets through (nests no deeper than checkMax) every
//     parser reads under a 16 MB Go stack: a deeper recursion than the
//     scan counted kills the process, and the fuzzer reports it; so does
//     the agent's instrumentation (instrument.Parse and its readers),
//     whatever the program;
//   - where sobek reads a program without an error, it recurses no
//     deeper than the scan counts: the Go stack it grows to is at most
//     8 KB per level of Depth (it needs about 2.2-2.8);
//   - where sobek finds an error, after which its recovery may read any of
//     the text as code, its stack stays within 4 KB per byte, the
//     assumption behind nesting.MaxRecovering (programs of at most 4 KB,
//     which fit the 16 MB).
//
// Half the seeds nest 8,000 to 16,000 levels (the scan must refuse
// them), half at most 300 (the parsers read them). The seed corpus runs
// in the ordinary test run;
//
//	go test -run '^$' -fuzz FuzzParsers -fuzztime 10m ./internal/nesting
//
// searches further.
func FuzzParsers(f *testing.F) {
	for i, c := range hidden() {
		f.Add(c[0], c[1], uint8(i), uint16(i*7919))
	}
	old := debug.SetMaxStack(16 << 20)
	f.Cleanup(func() { debug.SetMaxStack(old) })
	f.Fuzz(func(t *testing.T, pre, post string, kind uint8, n uint16) {
		if len(pre) > 256 || len(post) > 256 {
			return
		}
		depth := int(n) % 300
		if n%2 == 0 {
			depth = 8000 + int(n)%8000
		}
		src := pre + nest(kind, depth) + post
		if p := instrument.Parse(src); p != nil {
			p.AsyncCalls(func(string) bool { return true })
			p.Throws()
			p.Completion()
		}
		if e := nesting.CheckMax(src, checkMax); e != nil {
			return // refused: no parser sees it
		}
		for _, u := range esbuildUses {
			esbuild(src, u.loader, u.format, u.step)
		}
		if len(src) > 4096 {
			return
		}
		d := nesting.Depth(src)
		stack, err := sobekStack(src)
		switch {
		case err == nil && stack > 8<<10*uint64(d+1)+64<<10:
			t.Errorf("sobek grew a %d KB stack on a program the scan counts %d deep: %.300q", stack>>10, d, src)
		case err != nil && stack > 4<<10*uint64(len(src))+64<<10:
			t.Errorf("sobek grew a %d KB stack on %d bytes it found an error in: %.300q", stack>>10, len(src), src)
		}
	})
}

// Every hidden nest is refused, and the same programs nesting a few
// levels are read by the parsers they were written for: the contexts
// are real programs, not ones every parser refuses anyway.
func TestHiddenPrograms(t *testing.T) {
	valid := 0
	for _, c := range hidden() {
		if e := nesting.Check(c[0] + nest(0, 5000) + c[1]); e == nil || e.Ambiguous {
			t.Errorf("%q: %v", c[0]+"(((…"+c[1], e)
		}
		src := c[0] + nest(0, 3) + c[1]
		for _, u := range esbuildUses {
			if esbuild(src, u.loader, u.format, u.step) == 0 {
				valid++
				break
			}
		}
	}
	if all := len(hidden()); valid < all*9/10 {
		t.Errorf("only %d of %d hidden programs parse", valid, all)
	}
}

// TestSobekStackPerByte measures what nesting.MaxRecovering assumes:
// whatever sobek reads after an error, it needs at most 3 KB of Go stack
// per byte of source (a parenthesis, its worst, about 2.2). Go allocates
// stacks in powers of two, so the need is the least stack per byte over
// sizes a quarter of a power of two apart (within 19% of it).
func TestSobekStackPerByte(t *testing.T) {
	if testing.Short() {
		t.Skip("a measurement: a few seconds")
	}
	if raceEnabled {
		t.Skip("a measurement of the build without the race detector, whose frames are larger (3.9 KB a byte)")
	}
	r := strings.Repeat
	for name, unit := range map[string][3]string{
		"parens":           {"", "(", ""},
		"arrays":           {"", "[", ""},
		"objects":          {"x = ", "{a:", ""},
		"template skipped": {"@ `return ", "(", "`"},
		"regex skipped":    {"@ /x return ", "(", "/"},
		"closers hidden":   {"", "[ a b / ] /;\n", ""},
		"prefix":           {"", "!", ""},
		"arrows":           {"", "a=>", ""},
	} {
		least := math.Inf(1)
		for k := range 8 {
			n := int(3000*math.Pow(2, float64(k)/4)) / len(unit[1])
			src := unit[0] + r(unit[1], n) + unit[2]
			stack, _ := sobekStack(src)
			least = min(least, float64(stack)/float64(len(src)))
		}
		if least > 3<<10 {
			t.Errorf("%s: %.0f B of stack per byte", name, least)
		}
		t.Logf("%s: %.0f B of stack per byte", name, least)
	}
}
