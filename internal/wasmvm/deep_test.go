package wasmvm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock/internal/childtest"
)

// deepCase is a program that drives one of QuickJS's recursive C paths
// deep: a source made on the Go side (the parser), or a structure built by
// a loop and then handed to the recursive code.
type deepCase struct {
	name string
	src  string
	kind SourceKind
	// modules, if not zero, is a chain of that many modules, each
	// importing the next (the module graph's linking and evaluation).
	modules int
}

// deepCases are the recursive C paths of the engine, each driven 10^5 to
// 10^6 levels deep: the parser, regexp compilation and execution, JSON
// both ways, structured clone, the value codec (a run's result), Proxy
// chains, toString/valueOf chains, bound functions, Error.cause chains,
// module graphs, and a few more found on the way (flat, join, ropes).
func deepCases() []deepCase {
	const n = 100000
	rep := strings.Repeat
	build := func(expr string) string { // o: a chain of n levels, built by a loop
		return "let o = {}; for (let i = 0; i < " + strconv.Itoa(n) + "; i++) o = " + expr + ";\n"
	}
	return []deepCase{
		{name: "parser/parens", src: rep("(", n) + "1" + rep(")", n)},
		{name: "parser/arrays", src: rep("[", n) + rep("]", n)},
		{name: "parser/objects", src: "(" + rep("{a:", n) + "1" + rep("}", n) + ")"},
		{name: "parser/blocks", src: rep("{", n) + rep("}", n)},
		{name: "parser/functions", src: rep("(function(){", n) + rep("})", n)},
		{name: "parser/arrows", src: rep("()=>", n) + "1"},
		{name: "parser/unary", src: rep("-", n) + "1"},
		{name: "parser/ternary", src: rep("1?", n) + "1" + rep(":1", n)},
		{name: "parser/templates", src: rep("`${", n) + "1" + rep("}`", n)},
		{name: "parser/destructuring", src: "let " + rep("[", n) + "a" + rep("]", n) + " = 0"},
		{name: "parser/module", src: rep("(", n) + "1" + rep(")", n), kind: Module},
		{name: "regexp/compile groups", src: "new RegExp('('.repeat(" + strconv.Itoa(n) + ") + ')'.repeat(" + strconv.Itoa(n) + "))"},
		{name: "regexp/compile lookahead", src: "new RegExp('(?='.repeat(" + strconv.Itoa(n) + ") + ')'.repeat(" + strconv.Itoa(n) + "))"},
		{name: "regexp/compile classes", src: "new RegExp('[' + '[a]'.repeat(" + strconv.Itoa(n) + ") + ']', 'v')"},
		{name: "regexp/exec nested", src: "new RegExp('(?:a'.repeat(1000) + ')'.repeat(1000)).exec('a'.repeat(1000))"},
		{name: "regexp/exec backtracking", src: "/(a|b)*c/.exec('ab'.repeat(20000))"},
		{name: "regexp/exec lookahead", src: "new RegExp('(?=a'.repeat(5000) + ')'.repeat(5000)).exec('a'.repeat(5000))"},
		{name: "json/parse", src: "JSON.parse('['.repeat(" + strconv.Itoa(n) + ") + ']'.repeat(" + strconv.Itoa(n) + "))"},
		{name: "json/parse objects", src: "JSON.parse('{\"a\":'.repeat(" + strconv.Itoa(n) + ") + '1' + '}'.repeat(" + strconv.Itoa(n) + "))"},
		{name: "json/stringify", src: build("{a: o}") + "JSON.stringify(o).length"},
		{name: "json/stringify arrays", src: build("[o]") + "JSON.stringify(o).length"},
		{name: "json/stringify toJSON", src: build("{toJSON() { return [this.i]; }, i: o}") + "JSON.stringify(o).length"},
		{name: "structuredClone", src: build("{a: o}") + "structuredClone(o); 1"},
		{name: "structuredClone maps", src: build("new Map([[1, o]])") + "structuredClone(o); 1"},
		{name: "codec/result", src: build("{a: o}") + "o"},
		{name: "codec/result arrays", src: build("[o]") + "o"},
		{name: "proxy/get", src: build("new Proxy(o, {})") + "o.x"},
		{name: "proxy/has", src: build("new Proxy(o, {})") + "'x' in o"},
		{name: "proxy/keys", src: build("new Proxy(o, {})") + "Object.keys(o)"},
		{name: "proxy/call", src: "let f = () => 1; for (let i = 0; i < " + strconv.Itoa(n) + "; i++) f = new Proxy(f, {}); f()"},
		{name: "proxy/prototype", src: build("new Proxy(o, {})") + "Object.getPrototypeOf(o)"},
		{name: "valueOf chain", src: "let o = {valueOf() { return 1; }}; for (let i = 0; i < " + strconv.Itoa(n) + "; i++) { const p = o; o = {valueOf() { return +p; }}; } +o"},
		{name: "toString chain", src: "let o = {toString() { return 'x'; }}; for (let i = 0; i < " + strconv.Itoa(n) + "; i++) { const p = o; o = {toString() { return String(p); }}; } String(o)"},
		{name: "toPrimitive chain", src: "let o = 1; for (let i = 0; i < " + strconv.Itoa(n) + "; i++) { const p = o; o = {[Symbol.toPrimitive]() { return p + 0; }}; } o + 1"},
		{name: "bound functions", src: "let f = function () { return 1; }; for (let i = 0; i < " + strconv.Itoa(n) + "; i++) f = f.bind(null); f()"},
		{name: "bound constructors", src: "let f = class {}; for (let i = 0; i < " + strconv.Itoa(n) + "; i++) f = f.bind(null); new f()"},
		{name: "error cause", src: "let e = new Error('x'); for (let i = 0; i < " + strconv.Itoa(n) + "; i++) e = new Error('y', {cause: e}); e"},
		{name: "error cause thrown", src: "let e = new Error('x'); for (let i = 0; i < " + strconv.Itoa(n) + "; i++) e = new Error('y', {cause: e}); throw e"},
		{name: "array flat", src: build("[o]") + "o.flat(Infinity).length"},
		{name: "array join", src: build("[o]") + "String(o).length"},
		{name: "array toLocaleString", src: build("[o]") + "o.toLocaleString().length"},
		{name: "rope", src: "let s = 'a'; for (let i = 0; i < " + strconv.Itoa(n) + "; i++) s = (i & 1 ? 'b' + s : s + 'c'); s.indexOf('x')"},
		{name: "js recursion", src: "function f(n) { return f(n + 1) + 1; } f(0)"},
		{name: "js recursion caught", src: "function f(n) { try { return f(n + 1); } catch { return n; } } f(0)"},
		{name: "getter chain", src: "let o = {get x() { return 1; }}; for (let i = 0; i < " + strconv.Itoa(n) + "; i++) { const p = o; o = {get x() { return p.x; }}; } o.x"},
		{name: "async recursion", src: "async function f(n) { return n > 0 ? await f(n - 1) : 0; } f(" + strconv.Itoa(n) + ")"},
		{name: "generator delegation", src: "function* g(n) { if (n > 0) yield* g(n - 1); else yield 1; } [...g(" + strconv.Itoa(n) + ")]"},
		{name: "class extends chain", src: "let C = class {}; for (let i = 0; i < " + strconv.Itoa(n) + "; i++) C = class extends C {}; new C()"},
		{name: "module graph", modules: 20000},
	}
}

// TestDeepRecursionEndsInTheSandbox drives every recursive C path of the
// engine far deeper than any stack allows (deepCases). On wazero a native
// stack overflow is a trap; on the module translated to Go (the default
// backend) it would be Go's fatal "stack overflow", which no
// recover catches and which ends the process: there, every cycle of the
// module's call graph is bounded by a depth check (internal/qjs/stopcheck
// -depth), so that each case ends as an error of its sandbox (QuickJS's
// own RangeError, or a trap of the depth check), never the process. It
// runs in a child process, whose Go stack is capped at 256 MiB (a quarter
// of Go's default): the bound holds with that margin. After a case that
// returns or throws, the depth counter is back at zero. The outcomes are
// logged (-v); a case that takes longer than 10 s is stopped, as a run's
// time limit would (two cases run that long on wazero: a backtracking
// regexp and this package's result conversion of a 100,000-level object,
// which is not the public path's). It is not run under the race detector:
// it runs guest code only, which the detector does not watch (wazero's
// machine code, or the translation's methods marked //go:norace).
func TestDeepRecursionEndsInTheSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: deep programs")
	}
	if raceEnabled {
		t.Skip("guest code only: not a test for the race detector")
	}
	if !childtest.InChild(t) {
		return
	}
	debug.SetMaxStack(256 << 20)
	bound := depthBound(t)
	sn := testSnapshot(t)
	counts := map[string]int{}
	for _, c := range deepCases() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := sn.NewSandbox(ctx, &SandboxOptions{MemoryLimit: 512 << 20})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		src := c.src
		kind := c.kind
		if c.modules > 0 {
			s.SetModuleLoader(func(_ context.Context, name string) (string, error) {
				i, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, "m"), ".js"))
				if i >= c.modules {
					return "export const v = 1;", nil
				}
				return fmt.Sprintf("export { v } from 'm%d.js';", i+1), nil
			})
			src, kind = "import { v } from 'm0.js'; globalThis.v = v;", Module
		}
		_, err = s.Eval(ctx, src, "deep.js", kind)
		depth := s.mod.callDepth()
		var outcome string
		var ex *Exception
		var tr *TrapError
		switch {
		case err == nil:
			outcome = "value"
		case errors.As(err, &ex):
			outcome = "exception"
			if m := regexp.MustCompile(`^\S*Error[^\n]{0,60}`).FindString(ex.Text); m != "" {
				outcome += " (" + m + ")"
			}
		case errors.As(err, &tr):
			outcome = "trap"
			if bound > 0 && depth == bound+1 {
				outcome = "trap (depth check)"
			}
		case errors.Is(err, ErrMemoryLimit):
			outcome = "out of memory"
		case errors.Is(err, context.DeadlineExceeded):
			outcome = "stopped at the time limit"
		default:
			outcome = "error: " + err.Error()
		}
		if (err == nil || ex != nil) && depth != 0 {
			t.Errorf("%s: %s, and the depth counter is %d, not 0", c.name, outcome, depth)
		}
		t.Logf("%-26s %s", c.name, outcome)
		counts[strings.SplitN(outcome, " (", 2)[0]]++
		s.Close(ctx)
		cancel()
	}
	t.Logf("outcomes: %v (depth bound %d)", counts, bound)
}

// depthBound is the bound of the depth checks of the module: build.sh's
// DEPTH.
func depthBound(t *testing.T) int {
	b, err := os.ReadFile("../qjs/build.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^DEPTH=(\d+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no DEPTH in build.sh")
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// TestDepthBoundAboveQuickJSStackCheck: the depth bound leaves QuickJS's
// own stack check (a catchable RangeError, as on wazero) to end ordinary
// recursion, JavaScript's and the recursive C paths that check the stack:
// the deepest call depth a JavaScript recursion reaches before its
// RangeError is below the bound.
func TestDepthBoundAboveQuickJSStackCheck(t *testing.T) {
	bound := depthBound(t)
	if bound == 0 {
		t.Skip("no depth checks on this backend")
	}
	s := newSandbox(t, nil)
	ctx := context.Background()
	deepest := 0
	if err := s.DefineFunc(ctx, "depth", func(context.Context, []Value) (Value, error) {
		d := s.mod.callDepth()
		deepest = max(deepest, d)
		return Value{Kind: Number, Number: float64(d)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{
		"function f(n) { depth(); return f(n + 1); } try { f(0) } catch (e) { String(e) }",
		"function f(n) { depth(); return [n].map(() => f(n + 1)); } try { f(0) } catch (e) { String(e) }",
		"let o = {get x() { depth(); return this.y.x; }}; o.y = o; try { o.x } catch (e) { String(e) }",
	} {
		r, err := s.Eval(ctx, src, "depth.js", Script)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if !strings.Contains(r.Value.Text, "RangeError") && !strings.Contains(r.Value.Text, "stack") {
			t.Errorf("%s: %s, want QuickJS's stack overflow", src, r.Value.Text)
		}
	}
	t.Logf("deepest call depth at QuickJS's stack check: %d (bound %d)", deepest, bound)
	if deepest == 0 || deepest >= bound {
		t.Errorf("deepest call depth %d, want between 0 and the bound %d", deepest, bound)
	}
}
