package airlock_test

import (
	"reflect"
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
