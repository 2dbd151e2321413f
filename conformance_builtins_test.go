package airlock_test

import (
	"testing"
)

// checkJS runs a JavaScript entry whose default export is a list of the
// checks that failed (each a short text), and fails the test with them.
func checkJS(t *testing.T, src string) {
	t.Helper()
	got := evalJS(t, src)
	list, ok := got.([]any)
	if !ok {
		t.Fatalf("result %#v, want a list of failures", got)
	}
	for _, f := range list {
		t.Error(f)
	}
}

// checkPrelude defines eq(actual, expected, what) and throws(fn, name,
// what), which record a failure in the list bad, which the entry exports.
const checkPrelude = `
const bad = [];
const show = (v) => typeof v === "string" ? JSON.stringify(v) : String(v);
function eq(a, b, what) { if (!Object.is(a, b)) bad.push(what + ": " + show(a) + ", want " + show(b)); }
function throws(fn, name, what) {
	try { fn(); bad.push(what + ": no error, want " + name); }
	catch (e) { if (!e || e.name !== name) bad.push(what + ": " + (e && e.name) + " (" + (e && e.message) + "), want " + name); }
}
function desc(o, k, w, e, c, what) {
	const d = Object.getOwnPropertyDescriptor(o, k);
	if (!d) { bad.push(what + ": no property " + String(k)); return; }
	eq(d.writable, w, what + " writable"); eq(d.enumerable, e, what + " enumerable"); eq(d.configurable, c, what + " configurable");
}
`

// TestFunctionConstructorsKeepTheirShape is a regression test: test262
// found that disabling code generation reshaped the Function constructors.
// The kernel once replaced them with stand-ins of length 0 (so
// Error.constructor.length was 0 too), with a writable prototype, and
// AsyncFunction's prototype was no longer Function; when the engine's own
// constructors came back (refusing at their entry), the shim still made
// each prototype's constructor property read-only and not configurable,
// which the specification does not (Function.prototype.constructor is
// writable and configurable, the other three configurable). The shapes are
// the specification's; calling any of them still throws an EvalError.
func TestFunctionConstructorsKeepTheirShape(t *testing.T) {
	checkJS(t, checkPrelude+`
const AF = Object.getPrototypeOf(async function () {}).constructor;
const GF = Object.getPrototypeOf(function* () {}).constructor;
const AGF = Object.getPrototypeOf(async function* () {}).constructor;
for (const [n, C, protoWritable] of [["Function", Function, true], ["AsyncFunction", AF, false],
	["GeneratorFunction", GF, false], ["AsyncGeneratorFunction", AGF, false]]) {
	eq(C.length, 1, n + ".length");
	eq(C.name, n, n + ".name");
	desc(C, "length", false, false, true, n + ".length");
	desc(C, "name", false, false, true, n + ".name");
	desc(C, "prototype", false, false, false, n + ".prototype");
	desc(C.prototype, "constructor", protoWritable, false, true, n + ".prototype.constructor");
	eq(C.prototype.constructor, C, n + ".prototype.constructor");
	if (C !== Function) eq(Object.getPrototypeOf(C), Function, "Object.getPrototypeOf(" + n + ")");
	throws(() => C("return 1"), "EvalError", n + "()");
	throws(() => new C("return 1"), "EvalError", "new " + n + "()");
	throws(() => Reflect.construct(C, [], Object), "EvalError", "Reflect.construct(" + n + ")");
}
eq(Error.constructor.length, 1, "Error.constructor.length");
eq(Error.constructor, Function, "Error.constructor");
// What the specification lets a program do with the property, it may; the
// constructor it named still refuses, and no other is reachable.
const saved = Function.prototype.constructor;
Function.prototype.constructor = 1;
eq((function () {}).constructor, 1, "an assigned Function.prototype.constructor");
delete Object.getPrototypeOf(async function () {}).constructor;
eq((async function () {}).constructor, 1, "a deleted AsyncFunction.prototype.constructor inherits");
throws(() => saved("return 1"), "EvalError", "the saved Function");
export default bad;
`)
}

// TestProxyHasNoPrototype is a regression test from the same test262 run:
// Proxy and Proxy.revocable have no prototype property, and Proxy.revocable
// is not a constructor (a kernel wrapper of Proxy once had both). Proxy is
// the engine's own now; this keeps it so.
func TestProxyHasNoPrototype(t *testing.T) {
	checkJS(t, checkPrelude+`
eq(Object.hasOwn(Proxy, "prototype"), false, "Proxy has prototype");
eq(Object.hasOwn(Proxy.revocable, "prototype"), false, "Proxy.revocable has prototype");
throws(() => new Proxy.revocable({}, {}), "TypeError", "new Proxy.revocable");
throws(() => Proxy({}, {}), "TypeError", "Proxy()");
eq(Proxy.length, 2, "Proxy.length");
eq(Proxy.revocable.length, 2, "Proxy.revocable.length");
export default bad;
`)
}
