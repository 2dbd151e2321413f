package wasmvm

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestGlobals: globalThis holds the ECMAScript intrinsics, structuredClone
// and queueMicrotask (seed 000 §6.1), and none of the host capabilities.
func TestGlobals(t *testing.T) {
	s := newSandbox(t, nil)
	got := evalJSON(t, s, "Object.getOwnPropertyNames(globalThis).sort()")
	allowed := map[string]bool{}
	for _, n := range strings.Fields(`Object Function Array Number parseFloat parseInt Infinity NaN
		undefined decodeURI decodeURIComponent encodeURI encodeURIComponent escape unescape isFinite
		isNaN globalThis Symbol Boolean String Math Reflect JSON Date RegExp Proxy Map Set WeakMap
		WeakSet Promise ArrayBuffer DataView Int8Array Uint8Array Uint8ClampedArray Int16Array
		Uint16Array Int32Array Uint32Array BigInt64Array BigUint64Array Float16Array Float32Array
		Float64Array BigInt WeakRef FinalizationRegistry Error EvalError RangeError ReferenceError
		SyntaxError TypeError URIError AggregateError InternalError Iterator structuredClone
		queueMicrotask`) {
		allowed[n] = true
	}
	for _, n := range strings.Split(strings.Trim(got, "[]"), ",") {
		n = strings.Trim(n, `"`)
		if !allowed[n] {
			t.Errorf("unexpected global %s", n)
		}
	}
	for _, n := range []string{"eval", "SharedArrayBuffer", "Atomics", "WebAssembly", "process", "require",
		"fetch", "setTimeout", "performance", "console", "print", "std", "os", "crypto", "atob"} {
		if v := evalJSON(t, s, "typeof globalThis."+n); v != `"undefined"` {
			t.Errorf("typeof %s = %s", n, v)
		}
	}
	for _, n := range []string{"structuredClone", "queueMicrotask"} {
		if v := evalJSON(t, s, "typeof "+n); v != `"function"` {
			t.Errorf("typeof %s = %s", n, v)
		}
	}
}

// TestNoCodeGeneration: every way from a string to code throws, and the
// constructors cannot be reinstated: the refusal is in the engine, not in
// a property a program could restore.
func TestNoCodeGeneration(t *testing.T) {
	s := newSandbox(t, nil)
	for _, src := range []string{
		"Function('return 1')",
		"new Function('a', 'return a')",
		"Function()",
		"(function(){}).constructor('return 1')",
		"(async function(){}).constructor('return 1')",
		"(function*(){}).constructor('yield 1')",
		"(async function*(){}).constructor('yield 1')",
		"Reflect.construct(Function, ['return 1'])",
		"Object.getPrototypeOf(async () => {}).constructor('return 1')",
		"(0, Function.prototype.constructor)('return this')()",
		"Function.prototype.constructor = null; Object.getPrototypeOf(function*(){}).constructor('1')",
		"import('data:text/javascript,1')",
	} {
		_, err := s.Eval(context.Background(), src, "x.js", Script)
		var ex *Exception
		if !errors.As(err, &ex) {
			t.Errorf("%s: %v, want an exception", src, err)
		} else if !strings.Contains(src, "import(") && (!strings.Contains(ex.Text, "EvalError: ") || !strings.Contains(ex.Text, "code generation from strings is not allowed")) {
			t.Errorf("%s: %s", src, ex.Text)
		}
	}
	// no name brings eval back
	for _, src := range []string{"typeof eval", "typeof globalThis['ev'+'al']"} {
		if got := evalJSON(t, s, src); got != `"undefined"` {
			t.Errorf("%s = %s", src, got)
		}
	}
}

func TestStructuredClone(t *testing.T) {
	s := newSandbox(t, nil)
	for _, c := range []struct{ src, want string }{
		{"const o = {a: 1, d: new Date(5), m: new Map([[1, {x: 2}]]), s: new Set([3]), r: /x/gi, u: new Uint8Array([1,2]), n: null, big: 10n}; o.self = o;" +
			"const c = structuredClone(o); [c !== o, c.self === c, c.d.getTime(), c.m.get(1).x, c.m.get(1) !== o.m.get(1), c.s.has(3), c.r.flags, c.u[1], c.big === 10n]",
			`[true,true,5,2,true,true,"gi",2,true]`},
		{"try { structuredClone(() => 1); 'no' } catch (e) { e.name }", `"DataCloneError"`},
		{"try { structuredClone({f: Symbol()}); 'no' } catch (e) { e.name }", `"DataCloneError"`},
		{"const e = structuredClone(new RangeError('x')); [e instanceof RangeError, e.message]", `[true,"x"]`},
		{"Map.prototype.get = () => 'polluted'; structuredClone(new Map([[1, 2]])).size", "1"},
	} {
		if got := evalJSON(t, s, "{"+c.src+"}"); got != c.want {
			t.Errorf("%s = %s, want %s", c.src, got, c.want)
		}
	}
}

// TestClockAndRandomness: Date.now is the host's time (the WASI clock is
// wired: it was 0 in the prototype), and every sandbox from one image has
// its own Math.random sequence.
func TestClockAndRandomness(t *testing.T) {
	a, b := newSandbox(t, nil), newSandbox(t, nil)
	if got := evalJSON(t, a, "Date.now() > Date.UTC(2024, 0, 1)"); got != "true" {
		t.Errorf("Date.now() is not the host's time: %s", evalJSON(t, a, "Date.now()"))
	}
	ra, rb := evalJSON(t, a, "Math.random()"), evalJSON(t, b, "Math.random()")
	if ra == rb {
		t.Errorf("two sandboxes from one image drew the same Math.random(): %s", ra)
	}
	a.Reset()
	if r := evalJSON(t, a, "Math.random()"); r == ra {
		t.Errorf("a rewound sandbox drew the same Math.random() again: %s", r)
	}
}

// TestJSONStringifyKeepsItsListsToItself: QuickJS's JSON.stringify kept the
// specification's internal Lists (the stack of the values being
// serialized, the replacer's property list) in ordinary arrays, whose
// growth past a fast array's reach (an accessor a program put on
// Array.prototype's indexes) called the program's accessors: JSON.stringify
// of nested values ran the program's setter, where V8 runs nothing, and so
// did a JSON host function's call, whose arguments the shim serializes with
// it. Patch 0018 gives the Lists no prototype.
func TestJSONStringifyKeepsItsListsToItself(t *testing.T) {
	s := newSandbox(t, nil)
	got := evalJSON(t, s, `(() => {
		let seen = 0;
		for (const k of ["0", "1", "2"]) Object.defineProperty(Array.prototype, k, {
			get() { seen++ }, set(v) { seen++ }, configurable: true });
		const text = JSON.stringify([[1, [2]], { a: [3] }]) + JSON.stringify({ a: { b: 1 }, c: 2 }, ["a", "b"]);
		for (const k of ["0", "1", "2"]) delete Array.prototype[k];
		return [text, seen];
	})()`)
	if got != `["[[1,[2]],{\"a\":[3]}]{\"a\":{\"b\":1}}",0]` {
		t.Fatalf("got %s: JSON.stringify reached Array.prototype's accessors", got)
	}
}
