package airlock_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/airlockrun/airlock"
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

// TestLocaleMethodsAreBuiltinLike is a regression test: test262 found that
// the Intl layer, which replaces the engine's toLocale* methods and
// localeCompare with its own JavaScript, defined them as plain functions:
// each could be called with new, and the typed arrays' toLocaleString was
// the arrays' one, so it accepted any this (a plain object, a detached
// buffer) and read a length property instead of the array's length;
// Array.prototype.toLocaleString.call(null) returned "" instead of
// throwing. They are methods now, with the specification's length and
// name, and the typed-array one validates its receiver.
func TestLocaleMethodsAreBuiltinLike(t *testing.T) {
	checkJS(t, checkPrelude+`
const TA = Object.getPrototypeOf(Int8Array.prototype);
for (const [what, o, k, len] of [
	["Array.prototype.toLocaleString", Array.prototype, "toLocaleString", 0],
	["%TypedArray%.prototype.toLocaleString", TA, "toLocaleString", 0],
	["Number.prototype.toLocaleString", Number.prototype, "toLocaleString", 0],
	["BigInt.prototype.toLocaleString", BigInt.prototype, "toLocaleString", 0],
	["Date.prototype.toLocaleString", Date.prototype, "toLocaleString", 0],
	["Date.prototype.toLocaleDateString", Date.prototype, "toLocaleDateString", 0],
	["Date.prototype.toLocaleTimeString", Date.prototype, "toLocaleTimeString", 0],
	["String.prototype.localeCompare", String.prototype, "localeCompare", 1],
	["Intl.NumberFormat.prototype.formatToParts", Intl.NumberFormat.prototype, "formatToParts", 1],
	["Intl.getCanonicalLocales", Intl, "getCanonicalLocales", 1],
]) {
	const f = o[k];
	eq(f.length, len, what + ".length");
	eq(f.name, k, what + ".name");
	desc(o, k, true, false, true, what);
	desc(f, "length", false, false, true, what + ".length");
	desc(f, "name", false, false, true, what + ".name");
	eq(Object.hasOwn(f, "prototype"), false, what + " has a prototype");
	throws(() => new f(), "TypeError", "new " + what);
	throws(() => Reflect.construct(function () {}, [], f), "TypeError", what + " as a newTarget");
}
throws(() => Array.prototype.toLocaleString.call(null), "TypeError", "Array.prototype.toLocaleString.call(null)");
throws(() => Array.prototype.toLocaleString.call(undefined), "TypeError", "Array.prototype.toLocaleString.call(undefined)");
eq(Array.prototype.toLocaleString.call({ length: 2, 0: 1234, 1: null }), "1,234,", "an array-like");
eq([1234.5, undefined, 2n ** 40n, new Date(0)].toLocaleString(), "1,234.5,,1,099,511,627,776,1/1/1970, 12:00:00 AM", "an array");
eq([1234.5].toLocaleString("en", { maximumFractionDigits: 0 }), "1,235", "locales and options pass to the elements");

// %TypedArray%.prototype.toLocaleString: ValidateTypedArray, then the array's own length.
const tl = TA.toLocaleString;
for (const v of [{}, [], { length: 1, 0: 1 }, new ArrayBuffer(8), new DataView(new ArrayBuffer(8))]) {
	throws(() => tl.call(v), "TypeError", "toLocaleString on " + Object.prototype.toString.call(v));
}
throws(() => tl.call(null), "TypeError", "toLocaleString on null");
throws(() => tl.call(1), "TypeError", "toLocaleString on 1");
const u = new Uint16Array([1000, 2000, 3000]);
Object.defineProperty(u, "length", { value: 1 });
eq(tl.call(u), "1,000,2,000,3,000", "the array's length, not its length property");
eq(new BigInt64Array([12345n, -1n]).toLocaleString(), "12,345,-1", "a BigInt64Array");
eq(new Float64Array([0.5, 1e21]).toLocaleString("en", { maximumFractionDigits: 0 }), "1,1,000,000,000,000,000,000,000", "options pass to the elements");
const detached = new Uint8Array(new ArrayBuffer(4));
detached.buffer.transfer();
throws(() => detached.toLocaleString(), "TypeError", "a detached buffer");
const rab = new ArrayBuffer(4, { maxByteLength: 8 });
const fixed = new Uint8Array(rab, 0, 4), tracking = new Uint8Array(rab);
rab.resize(2);
throws(() => fixed.toLocaleString(), "TypeError", "an out-of-bounds array");
eq(tracking.toLocaleString(), "0,0", "a length-tracking array after a shrink");
// The elements are read as the loop goes: past the end they are empty.
const rab2 = new ArrayBuffer(4, { maxByteLength: 8 });
const ta2 = new Uint8Array(rab2, 0, 4);
const saved = Number.prototype.toLocaleString;
let n = 0;
Number.prototype.toLocaleString = function () { if (++n === 2) rab2.resize(2); return saved.call(this); };
eq(ta2.toLocaleString(), "0,0,,", "an array shrunk by an element's toLocaleString");
Number.prototype.toLocaleString = saved;
export default bad;
`)
}

// TestLocaleOptionsRefuseMalformedTypes is a regression test: test262
// found that the Intl layer let option values through that ECMA-402 says
// are RangeErrors: a calendar, numbering system or collation must be a
// Unicode locale type (alphanumeric parts of 3 to 8 characters joined by
// "-"), so "gregory\0" or "latn-" is refused, through the constructors and
// through the toLocale* methods alike. Well-formed values that name
// something the sandbox has no data for are still accepted, and resolve
// to what it has (gregory, latn, default).
func TestLocaleOptionsRefuseMalformedTypes(t *testing.T) {
	checkJS(t, checkPrelude+`
for (const bad of ["gregory\0", "", "a", "toolongstring", "gregory-", "gregory-toolongstring", "gre gory"]) {
	const s = JSON.stringify(bad);
	throws(() => new Intl.DateTimeFormat("en", { calendar: bad }), "RangeError", "DateTimeFormat calendar " + s);
	throws(() => new Intl.DateTimeFormat("en", { numberingSystem: bad }), "RangeError", "DateTimeFormat numberingSystem " + s);
	throws(() => new Intl.NumberFormat("en", { numberingSystem: bad }), "RangeError", "NumberFormat numberingSystem " + s);
	throws(() => new Intl.Collator("en", { collation: bad }), "RangeError", "Collator collation " + s);
	throws(() => (1).toLocaleString("en", { numberingSystem: bad }), "RangeError", "toLocaleString numberingSystem " + s);
	throws(() => new Date(0).toLocaleDateString("en", { calendar: bad }), "RangeError", "toLocaleDateString calendar " + s);
	throws(() => "a".localeCompare("b", "en", { collation: bad }), "RangeError", "localeCompare collation " + s);
	throws(() => new Intl.Locale("en", { calendar: bad }), "RangeError", "Locale calendar " + s);
	throws(() => new Intl.Locale("en", { collation: bad }), "RangeError", "Locale collation " + s);
	throws(() => new Intl.Locale("en", { numberingSystem: bad }), "RangeError", "Locale numberingSystem " + s);
}
eq(new Intl.DateTimeFormat("en", { calendar: "islamic-civil" }).resolvedOptions().calendar, "gregory", "a calendar without data");
eq(new Intl.NumberFormat("en", { numberingSystem: "arab" }).resolvedOptions().numberingSystem, "latn", "a numbering system without data");
eq(new Intl.Collator("en", { collation: "phonebk" }).resolvedOptions().collation, "default", "a collation without data");
// The options are read in the specification's order.
const order = [];
const spy = new Proxy({}, { get(t, k) { if (typeof k === "string") order.push(k); return undefined; } });
new Intl.NumberFormat("en", spy);
eq(order.slice(0, 2).join(), "localeMatcher,numberingSystem", "NumberFormat's first reads");
order.length = 0;
new Intl.DateTimeFormat("en", spy);
eq(order.slice(0, 3).join(), "localeMatcher,calendar,numberingSystem", "DateTimeFormat's first reads");
order.length = 0;
new Intl.Collator("en", spy);
eq(order.slice(0, 3).join(), "usage,localeMatcher,collation", "Collator's first reads");
export default bad;
`)
}

// TestJSONModules is a regression test: test262 found that a JSON module,
// import data from "./a.json" with { type: "json" } with the file in
// Options.Modules, was compiled as JavaScript (so {"a": 1} was a
// SyntaxError, and [1, 2] a module with no default export), although the
// engine supports import attributes and JSON modules. A JSON module's one
// export is default, the value JSON.parse gives for its text, the same
// object for every import of it, static or dynamic; named imports are a
// link error, as is text that is not JSON. A module whose name ends in
// .json is JSON without the attribute too, as QuickJS's own loader has it
// (Node and browsers refuse that import); an attribute key other than type,
// or a type other than json, is refused.
func TestJSONModules(t *testing.T) {
	mods := map[string]string{
		"./data.json":   `{"name": "airlock", "list": [1, 2, {"deep": null}], "n": 1.5e3}`,
		"./array.json":  "[1, \"two\", true]\n",
		"./num.json":    ` 42 `,
		"./str.json":    `"text"`,
		"./null.json":   `null`,
		"./bad.json":    "{\n  notJson: 0\n}",
		"./config.txt":  `{"from": "txt"}`,
		"./other.js":    `import d from "./data.json" with { type: "json" }; export const same = d;`,
		"./notjson.js":  `export default 1;`,
		"./big.json":    `{"a": [` + strings.Repeat(`{"b": "c"},`, 1000) + `{}]}`,
		"lib/conf.json": `{"pkg": true}`,
		"./deep.json":   strings.Repeat("[", 200000) + strings.Repeat("]", 200000),
	}
	js := func(src string) airlock.Options {
		return airlock.Options{Language: airlock.JavaScript, Modules: mods}
	}
	cases := []struct {
		name, src string
		want      any
	}{
		{"object", `import d from "./data.json" with { type: "json" }; export default d`,
			map[string]any{"name": "airlock", "list": []any{1.0, 2.0, map[string]any{"deep": nil}}, "n": 1500.0}},
		{"array", `import d from "./array.json" with { type: "json" }; export default d`, []any{1.0, "two", true}},
		{"number", `import d from "./num.json" with { type: "json" }; export default d`, 42.0},
		{"string", `import d from "./str.json" with { type: "json" }; export default d`, "text"},
		{"null", `import d from "./null.json" with { type: "json" }; export default d === null`, true},
		{"namespace", `import * as ns from "./data.json" with { type: "json" };
			export default [Object.keys(ns).join(), Object.prototype.toString.call(ns), ns.default.name]`,
			[]any{"default", "[object Module]", "airlock"}},
		{"one object for every import", `import a from "./data.json" with { type: "json" };
			import { default as b } from "./data.json" with { type: "json" };
			import { same } from "./other.js";
			const c = (await import("./data.json", { with: { type: "json" } })).default;
			export default [a === b, a === same, a === c]`, []any{true, true, true}},
		{"extensible", `import d from "./data.json" with { type: "json" }; d.added = 1;
			import a from "./array.json" with { type: "json" }; a.push(4);
			export default [Object.isExtensible(d), d.added, a.length]`, []any{true, 1.0, 4.0}},
		{"the attribute decides", `import d from "./config.txt" with { type: "json" }; export default d.from`, "txt"},
		{"a .json name without the attribute", `import d from "./data.json"; export default d.name`, "airlock"},
		{"dynamic, without the attribute", `const m = await import("./array.json"); export default m.default[1]`, "two"},
		{"a package's JSON", `import d from "lib/conf.json" with { type: "json" }; export default d.pkg`, true},
		{"large", `import d from "./big.json" with { type: "json" }; export default d.a.length`, 1001.0},
		{"a JavaScript module, attributes empty", `import d from "./notjson.js" with {}; export default d`, 1.0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantResult(t, runOpts(t, c.src, js(c.src)), c.want)
		})
	}
	fails := []struct{ name, src, errName, msg string }{
		{"named import", `import { name } from "./data.json" with { type: "json" }; export default name`, "", "no export named 'name'"},
		{"not JSON", `import d from "./bad.json" with { type: "json" }; export default d`, "SyntaxError", ""},
		{"JavaScript as JSON", `import d from "./notjson.js" with { type: "json" }; export default d`, "SyntaxError", ""},
		{"an unknown key", `import d from "./data.json" with { type: "json", integrity: "x" }; export default d`, "SyntaxError", "integrity"},
		{"an unknown type", `import d from "./data.json" with { type: "css" }; export default d`, "TypeError", "css"},
		{"nested past the stack", `import d from "./deep.json" with { type: "json" }; export default d`, "", ""},
		{"a missing file", `import d from "./none.json" with { type: "json" }; export default d`, "", "none.json"},
	}
	for _, c := range fails {
		t.Run(c.name, func(t *testing.T) {
			res := runOpts(t, c.src, js(c.src))
			if res.Status == airlock.StatusSuccess || res.Error == nil {
				t.Fatalf("succeeded: %#v", res.Result)
			}
			if c.errName != "" && res.Error.Name != c.errName || !strings.Contains(res.Error.Message, c.msg) {
				t.Fatalf("error %s: %s, want %s containing %q", res.Error.Name, res.Error.Message, c.errName, c.msg)
			}
		})
	}
	// A dynamic import with an unknown key rejects, and the program can catch it.
	wantResult(t, runOpts(t, `let r; try { await import("./data.json", { with: { kind: "json" } }) } catch (e) { r = e.name }
		export default r`, js("")), "SyntaxError")
	// TypeScript keeps the attribute.
	wantResult(t, runOpts(t, `import d from "./data.json" with { type: "json" }; const n: string = d.name; export default n`,
		airlock.Options{Modules: mods}), "airlock")
}

// TestHashbangInModules is a regression test: test262 found that a #! line
// at the start of a module of Options.Modules was a SyntaxError, and of
// the entry too once Globals was set: the one-line prologue that binds the
// globals is put in front of each module's first line, so the #! was no
// longer at the start. The #! line is now a comment of the same length
// behind the prologue (positions on line 1 stay right).
func TestHashbangInModules(t *testing.T) {
	mods := map[string]string{
		"./lib.js":  "#!/usr/bin/env node\nexport const x = 1;",
		"./lib2.ts": "#!/usr/bin/env -S npx tsx\nexport const y: number = 2;",
	}
	for _, opts := range []airlock.Options{
		{Language: airlock.JavaScript, Modules: mods},
		{Language: airlock.JavaScript, Modules: mods, Globals: map[string]any{"g": 3}},
		{Language: airlock.TypeScript, Modules: mods, Globals: map[string]any{"g": 3}},
	} {
		src := "#!/usr/bin/env node\nimport { x } from './lib.js'; import { y } from './lib2.ts';\nexport default x + y + (typeof g === 'number' ? g : 0)"
		res := runOpts(t, src, opts)
		want := 3.0
		if opts.Globals != nil {
			want = 6.0
		}
		wantResult(t, res, want)
	}
	// Errors after a #! line are placed in the user's text: on line 1 as
	// without the line, on line 2 where they are.
	globals := airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"g": 3}}
	plain := runOpts(t, "throw new Error('here')", globals)
	wantStatus(t, plain, airlock.StatusError)
	res := runOpts(t, "#!x\nthrow new Error('here')", globals)
	wantStatus(t, res, airlock.StatusError)
	if res.Error.Line != 2 || res.Error.Column != plain.Error.Column || plain.Error.Line != 1 {
		t.Fatalf("error at %d:%d, want 2:%d", res.Error.Line, res.Error.Column, plain.Error.Column)
	}
	res = runOpts(t, "#!x y z\nexport default g +", globals)
	wantStatus(t, res, airlock.StatusLinkError)
	if res.Error.Name != "SyntaxError" || res.Error.Line != 2 {
		t.Fatalf("error %+v, want a SyntaxError on line 2", res.Error)
	}
	// #! is allowed at the start of a module only.
	res = runOpts(t, "const a = 1;\n#!x\nexport default a", globals)
	wantStatus(t, res, airlock.StatusLinkError)
	if res.Error.Name != "SyntaxError" || res.Error.Line != 2 {
		t.Fatalf("error %+v", res.Error)
	}
}

// TestAwaitKeepsItsOrder is a regression test for patch 0020, which awaits
// a primitive without making a promise for it and makes the intrinsic
// Promise's capabilities without an executor: the jobs still run in the
// specification's order, which Node prints for the same program
// (["a1","sync","a2","p1","a3","p2","a4","p3","then","p4","a5","p5","p6"]),
// a thenable's then is still called in a job of its own, and a subclass of
// Promise still has its constructor called with an executor: three times
// here (P.resolve, then's species, and the then that awaiting a P calls),
// as in Node.
func TestAwaitKeepsItsOrder(t *testing.T) {
	got := evalJS(t, `const log = [];
		(async () => {
			log.push('a1'); await 1; log.push('a2'); await undefined; log.push('a3');
			await Promise.resolve(3); log.push('a4');
			await { then(r) { log.push('then'); r(4); } }; log.push('a5');
		})();
		Promise.resolve().then(() => log.push('p1')).then(() => log.push('p2')).then(() => log.push('p3'))
			.then(() => log.push('p4')).then(() => log.push('p5')).then(() => log.push('p6'));
		log.push('sync');
		for (let i = 0; i < 10; i++) await null;
		let executors = 0;
		class P extends Promise { constructor(ex) { executors++; super(ex); } }
		await P.resolve(1).then((x) => x);
		const rejected = await (async () => { try { await Promise.reject(new Error('no')); } catch (e) { return e.message; } })();
		export default [log.join(), executors, rejected, await (async () => await 7)()]`)
	want := []any{"a1,sync,a2,p1,a3,p2,a4,p3,then,p4,a5,p5,p6", 3.0, "no", 7.0}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

// TestReservedExpressionNames is a regression test for patch 0021: an
// async function or generator expression named await, or a generator
// expression named yield, is a SyntaxError also inside a function that
// makes the name a keyword. A step is the body of an async function, so
// `(async function* await(){})` ran in a step (test262 found it) while a
// script refused it; a plain function expression may still be named await
// there, as in Node.
func TestReservedExpressionNames(t *testing.T) {
	for _, sloppy := range []bool{false, true} {
		ex := newExecutor(t, airlock.ExecutorOptions{Sloppy: sloppy})
		for _, code := range []string{
			"(async function* await() {}); 'accepted'",
			"(async function await() {}); 'accepted'",
			"async function f() { (async function await() {}) }; 'accepted'",
		} {
			_, err := ex.Run(context.Background(), code)
			wantCode(t, err, "ERR_VALIDATION_FAILED")
		}
		if out := mustRun(t, ex, "(function await() { return 1 })()"); out.Output != 1.0 {
			t.Errorf("a function expression named await: %v", out.Output)
		}
	}
	ex := newExecutor(t, airlock.ExecutorOptions{Sloppy: true})
	_, err := ex.Run(context.Background(), "function* g() { (function* yield() {}) }; 'accepted'")
	wantCode(t, err, "ERR_VALIDATION_FAILED")
	if out := mustRun(t, ex, "function* h() { return (function yield() { return 2 })() }; h().next().value"); out.Output != 2.0 {
		t.Errorf("a function expression named yield in a generator: %v", out.Output)
	}
}
