package airlock_test

import (
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/airlockrun/airlock"
)

// Error.captureStackTrace(obj[, fn]) gives obj a stack as Node does: the
// caller's frames, less those up to fn's topmost call; none when fn is not
// on the stack. The frames are in the engine's format ("    at f (file:l:c)"
// lines under the engine's module names, no header line).
func TestErrorCaptureStackTrace(t *testing.T) {
	res := run(t, `
function inner(o) { Error.captureStackTrace(o); }
function outer(o) { inner(o); }
const o = {};
outer(o);
class MyError extends Error {
  constructor(m) { super(m); this.name = 'MyError'; Error.captureStackTrace(this, MyError); }
}
function make() { return new MyError('x'); }
const p = {};
Error.captureStackTrace(p, function notOnStack() {});
let bad = '';
try { Error.captureStackTrace(1); } catch (e) { bad = e.name + ': ' + e.message; }
const d = Object.getOwnPropertyDescriptor(o, 'stack');
export default { o: o.stack, my: make().stack, p: p.stack, bad,
  writable: d.writable, enumerable: d.enumerable, type: typeof Error.captureStackTrace };`)
	wantStatus(t, res, airlock.StatusSuccess)
	m := res.Result.(map[string]any)
	if s := m["o"].(string); !strings.HasPrefix(s, "    at inner (/<runCode>:2:") || !strings.Contains(s, "\n    at outer (/<runCode>:3:") {
		t.Errorf("o.stack = %q", s)
	}
	if s := m["my"].(string); !strings.HasPrefix(s, "    at make (/<runCode>:9:") || strings.Contains(s, "MyError") {
		t.Errorf("MyError's stack = %q, want it to start at make", s)
	}
	if m["p"] != "" {
		t.Errorf("stack with a function not on the stack = %q, want none", m["p"])
	}
	if m["bad"] != "TypeError: invalid_argument" {
		t.Errorf("captureStackTrace(1) threw %q", m["bad"])
	}
	if m["writable"] != true || m["enumerable"] != false || m["type"] != "function" {
		t.Errorf("result = %v", m)
	}
}

// Error.stackTraceLimit bounds the frames of every stack as in Node: 10 by
// default, a number to change it, no stack at all when it is not a number.
// A run's ScriptError.Stack follows it.
func TestErrorStackTraceLimit(t *testing.T) {
	res := run(t, `
function a(n) { return n === 0 ? new Error('deep') : a(n - 1); }
const frames = (e) => e.stack.split('\n').filter(Boolean).length;
const d = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit');
const r = { d, def: frames(a(20)) };
Error.stackTraceLimit = 3; r.three = frames(a(20));
Error.stackTraceLimit = 0; r.zero = a(20).stack;
Error.stackTraceLimit = Infinity; r.all = frames(a(20));
Error.stackTraceLimit = 'x'; r.none = typeof a(2).stack;
const o = {}; Error.captureStackTrace(o); r.captured = 'stack' in o;
delete Error.stackTraceLimit; r.deleted = typeof a(2).stack;
Error.stackTraceLimit = 2;
export default r;`)
	wantStatus(t, res, airlock.StatusSuccess)
	want := map[string]any{
		"d":   map[string]any{"value": 10.0, "writable": true, "enumerable": true, "configurable": true},
		"def": 10.0, "three": 3.0, "zero": "", "all": 22.0, "none": "undefined", "captured": false, "deleted": "undefined",
	}
	if !reflect.DeepEqual(res.Result, want) {
		t.Errorf("result = %v\nwant     %v", res.Result, want)
	}

	// An uncaught error's stack as the host sees it.
	res = run(t, `
Error.stackTraceLimit = 2;
function f(n) { if (n === 0) throw new Error('deep'); f(n - 1); }
f(5);`)
	wantStatus(t, res, airlock.StatusError)
	if n := strings.Count(res.Error.Stack, "    at "); n != 2 {
		t.Errorf("ScriptError.Stack has %d frames, want 2:\n%s", n, res.Error.Stack)
	}
	if res.Error.Line != 3 {
		t.Errorf("line = %d, want 3", res.Error.Line)
	}
}

// userFrame is a frame of the program's own source: a name and a position
// in <runCode>, as the engine writes it inside the sandbox (under its
// module name, "/<runCode>") and as a Result's stack gives it.
var userFrame = regexp.MustCompile(`^    at [^()]+ \(/?<runCode>:\d+:\d+\)$`)

// wantUserFrames fails unless every line of stack is a frame of the
// program's own source.
func wantUserFrames(t *testing.T, what, stack string) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimRight(stack, "\n"), "\n") {
		if l != "" && !userFrame.MatchString(l) {
			t.Errorf("%s: a frame that is not the program's, %q, in the stack:\n%s", what, l, stack)
		}
	}
}

// A stack a program can read shows its own frames, never the sandbox's.
// An error thrown by a crossing showed the frames of the kernel's
// JavaScript that made it: "at callHost" for an argument that cannot be
// cloned, "at reply" for a host function that failed, "at settle" for a
// rejected asynchronous call; and so did an error the program made under
// the kernel's code: "at apply (native)", "at select", "at run" under the
// selected export, "at encode (native)", "at log" under a getter console.log
// read, "at structuredClone" under one structuredClone read, Intl's own
// functions under an Intl constructor's RangeError. The engine now leaves
// out of every backtrace the frames of the code the sandbox compiled for
// itself (without debug information) and of the natives that code called.
func TestStack_NoFrameOfTheSandbox(t *testing.T) {
	globals := map[string]any{
		"take":  func(v any) any { return v },
		"fail":  func(int) error { return errors.New("boom") },
		"bad":   func() any { return make(chan int) },
		"afail": airlock.Async(func(int) (int, error) { return 0, errors.New("async boom") }),
		"atake": airlock.Async(func(v any) any { return v }),
	}
	cases := []struct{ name, src string }{
		{"unclonable argument", `function f() { return take(() => 1) } try { f() } catch (e) { st = e.stack }`},
		{"unclonable in an argument", `function f() { return take({ a: [Symbol()] }) } try { f() } catch (e) { st = e.stack }`},
		{"unclonable argument of an async call", `async function f() { return await atake(() => 1) } try { await f() } catch (e) { st = e.stack }`},
		{"failing host function", `function f() { return fail(1) } try { f() } catch (e) { st = e.stack }`},
		{"answer that cannot cross", `function f() { return bad() } try { f() } catch (e) { st = e.stack }`},
		{"rejected async call", `async function f() { return await afail(1) } try { await f() } catch (e) { st = e.stack }`},
		{"selected export", `export default function main() { return new Error("x").stack }`},
		{"getter read by console.log", `console.log({ get y() { st = new Error("g").stack; return 1 } })`},
		{"getter read by structuredClone", `structuredClone({ get a() { st = new Error("g").stack; return 1 } })`},
		{"Intl constructor", `function f() { new Intl.NumberFormat("en", { style: "currency" }) } try { f() } catch (e) { st = e.stack }`},
		{"queueMicrotask callback", `queueMicrotask(function cb() { st = new Error("q").stack }); await 0`},
		{"Function constructor", `function f() { return Function("return 1") } try { f() } catch (e) { st = e.stack }`},
		{"unclonable deep in an argument", `function f() { return take(1, { m: new Map([["k", [new WeakMap()]]]) }) } try { f() } catch (e) { st = e.stack }`},
		{"unclonable report", `function f() { report({ f() {} }) } try { f() } catch (e) { st = e.stack }`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.src
			if !strings.Contains(src, "export default") {
				src = "let st;\n" + src + "\nexport default st"
			}
			res := runOpts(t, src, airlock.Options{Language: airlock.JavaScript, Globals: globals})
			wantStatus(t, res, airlock.StatusSuccess)
			st, _ := res.Result.(string)
			if st == "" && tc.name != "rejected async call" {
				t.Fatalf("no stack read: %#v", res.Result)
			}
			wantUserFrames(t, "err.stack", st)
		})
	}
	// The same failures uncaught: the Result's stack.
	for _, src := range []string{
		`function f() { return take(() => 1) } f()`,
		`function f() { return fail(1) } f()`,
		`async function f() { return await afail(1) } await f()`,
		`export default function main() { throw new Error("x") }`,
		`export default function main() { return { items: [1, () => 2] } }`,
		`export default async function main() { await 0; return [new WeakMap()] }`,
	} {
		res := runOpts(t, src, airlock.Options{Language: airlock.JavaScript, Globals: globals})
		wantStatus(t, res, airlock.StatusError)
		wantUserFrames(t, "Result: "+src, res.Error.Stack)
	}
}
