package integration_test

// Hostile inputs at every boundary: the host must never crash, every run
// must settle, and nothing of the host may leak.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/js"
)

// settle runs src with a deadline and fails the test if the run does not
// settle in time.
func settle(t *testing.T, src string, opts airlock.Options, budget time.Duration) *airlock.Result {
	t.Helper()
	ex, err := testRuntime.Run(context.Background(), src, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	timer := time.AfterFunc(budget, func() { ex.Terminate("test budget") })
	defer timer.Stop()
	select {
	case <-ex.Done():
	case <-time.After(budget + 10*time.Second):
		t.Fatalf("the run did not settle within %v of being terminated", 10*time.Second)
	}
	return ex.Wait()
}

// Constructor chains that reach for Function or eval must all be refused.
func TestHostile_ConstructorChains(t *testing.T) {
	for _, src := range []string{
		`export default (function(){}).constructor("return globalThis")()`,
		`export default [].map.constructor("return 1")()`,
		`export default Object.getPrototypeOf(async () => {}).constructor("return 1")`,
		`export default (0, Object.getPrototypeOf(function*(){}).constructor)("yield 1")`,
		`export default Reflect.construct(Function, ["return 1"])`,
		`export default Function.prototype.constructor("return 1")()`,
		`export default Object.getOwnPropertyDescriptor(Function.prototype, "constructor").value("return 1")()`,
		`export default globalThis["ev" + "al"]("1")`,
		`export default new (Object.getPrototypeOf(async function*(){}).constructor)("yield 1")`,
		`class X extends Function {}; export default new X("return 1")()`,
	} {
		res := runOpts(t, src, airlock.Options{Language: airlock.JavaScript})
		if res.Status == airlock.StatusSuccess {
			t.Errorf("%s: succeeded with %v", src, res.Result)
		}
	}
}

// The Function prototypes' constructor property is the specification's
// (configurable; Function.prototype's writable too), so a program may
// redefine or delete it: the constructors it named still refuse, and no
// other way to one is left. (It was locked when the constructors were
// stand-ins that the engine's own could replace.)
func TestHostile_ConstructorRedefined(t *testing.T) {
	got := evalJS(t, `const protos = [Function.prototype, Object.getPrototypeOf(async function(){}),
			Object.getPrototypeOf(function*(){}), Object.getPrototypeOf(async function*(){})];
		const ctors = protos.map((p) => p.constructor);
		for (const p of protos) Object.defineProperty(p, "constructor", {value: undefined, configurable: true});
		protos.forEach((p, i) => delete p.constructor);
		const r = [];
		for (const C of ctors) { try { new C("return 1"); r.push("compiled") } catch (e) { r.push(e.name) } }
		r.push((function(){}).constructor === Object, (async () => 1).constructor === Object);
		export default r.join()`)
	if got != "EvalError,EvalError,EvalError,EvalError,true,true" {
		t.Fatal(got)
	}
}

// Prototype tampering in one run is not visible in the next, and cannot
// redirect the sandbox's own machinery in the same run.
func TestHostile_PrototypeTampering(t *testing.T) {
	res := runOpts(t, `
		const m = new Map([[1, 2]]);
		Object.defineProperty(Object.prototype, "x", { set() { throw new Error("setter ran") }, configurable: true });
		Array.prototype.push = () => { throw new Error("push ran") };
		JSON.stringify = () => "{}"; JSON.parse = () => ({});
		Map.prototype.get = () => 0; Map.prototype.set = () => { throw new Error("set ran") };
		Object.keys = () => [];
		Function.prototype.call = () => { throw new Error("call ran") };
		Promise.prototype.then = function () { throw new Error("then ran") };
		const v = take({ x: 1, list: [1, 2], m });
		export default v;
	`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{
		"take": func(v map[string]any) map[string]any { v["back"] = []any{"b"}; return v },
	}})
	wantStatus(t, res, airlock.StatusSuccess)
	b, _ := json.Marshal(res.Result)
	if string(b) != `{"back":["b"],"list":[1,2],"m":[[1,2]],"x":1}` {
		t.Fatalf("result %s", b)
	}
	if got := evalJS(t, `export default [({}).x, [][0], typeof [].push]`); got.([]any)[2] != "function" {
		t.Fatalf("tampering survived: %v", got)
	}
}

// A setter on Array.prototype indices runs inside the engine's own
// JSON.stringify, which the codec uses: the program can break its own result,
// but the run still settles and nothing escapes.
func TestHostile_ArrayIndexSetter(t *testing.T) {
	res := runOpts(t, `Object.defineProperty(Array.prototype, "0", { set() { throw new Error("index setter ran") }, configurable: true });
		export default { list: [1, 2] }`, airlock.Options{Language: airlock.JavaScript})
	if res.Status != airlock.StatusSuccess && res.Status != airlock.StatusError {
		t.Fatalf("status %s", res.Status)
	}
}

// Proxies, getters and toJSON on values passed to host functions: a Proxy is
// refused before any trap runs; a getter is read once; toJSON is not called.
func TestHostile_TrapsOnArguments(t *testing.T) {
	var got []any
	res := runOpts(t, `
		let traps = 0;
		const p = new Proxy({}, { ownKeys() { traps++; return [] }, get() { traps++ } });
		let refused = "no";
		try { take(p) } catch (e) { refused = e.name }
		let reads = 0;
		const g = { get v() { reads++; return reads } };
		take(g);
		let toJSONCalls = 0;
		try { take({ toJSON() { toJSONCalls++; return "hijacked" }, real: 1 }) } catch (e) { refused += "," + e.name }
		const { proxy } = Proxy.revocable({}, {});
		try { take([proxy]) } catch (e) { refused += "," + e.name }
		export default [traps, refused, reads, toJSONCalls];
	`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"take": func(v any) { got = append(got, v) }}})
	wantStatus(t, res, airlock.StatusSuccess)
	r := res.Result.([]any)
	if r[0] != 0.0 || r[1] != "DataCloneError,DataCloneError,DataCloneError" || r[2] != 1.0 || r[3] != 0.0 {
		t.Fatalf("traps, refusals, getter reads, toJSON calls = %v", r)
	}
	if len(got) != 1 || got[0].(map[string]any)["v"] != 1.0 {
		t.Fatalf("host got %v", got)
	}
}

// Errors thrown from host functions carry only their message: no Go frames,
// no host paths, no host state.
func TestHostile_HostErrorsRevealNothing(t *testing.T) {
	wd, _ := os.Getwd()
	res := runOpts(t, `
		let info;
		try { openFile("x") } catch (e) {
			info = { own: Object.getOwnPropertyNames(e).sort(), stack: String(e.stack), proto: Object.getPrototypeOf(e) === Error.prototype };
		}
		export default info;
	`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{
		"openFile": func(name string) error { _, err := os.Open("/definitely/not/" + name); return errWithout(err) },
	}})
	wantStatus(t, res, airlock.StatusSuccess)
	b, _ := json.Marshal(res.Result)
	s := string(b)
	if strings.Contains(s, ".go") || strings.Contains(s, wd) || strings.Contains(s, "goroutine") {
		t.Fatalf("host details leaked: %s", s)
	}
}

type plainError string

func (e plainError) Error() string { return string(e) }

func errWithout(error) error { return plainError("cannot open the file") }

// A panic in a host function ends the run with an error that reveals
// nothing of the panic, cannot be caught by the sandbox, and does not crash
// the host.
func TestHostile_HostPanic(t *testing.T) {
	for _, async := range []bool{false, true} {
		var fn any = func() { panic("secret panic text /home/user/key") }
		if async {
			fn = airlock.Async(fn)
		}
		res := runOpts(t, `try { await boom() } catch (e) {} ; for (let i = 0; i < 1e6; i++) {}; export default "swallowed"`,
			airlock.Options{Globals: map[string]any{"boom": fn}})
		wantStatus(t, res, airlock.StatusError)
		b, _ := json.Marshal(res)
		if strings.Contains(string(b), "secret") || strings.Contains(string(b), "/home") {
			t.Fatalf("panic text leaked: %s", b)
		}
	}
}

// import() of URLs and host builtins fails; no host file is ever read.
func TestHostile_ImportProbing(t *testing.T) {
	got := evalJS(t, `const out = [];
		for (const s of ["/etc/passwd", "file:///etc/passwd", "../../../../etc/passwd", "std", "os", "bjson",
			"node:child_process", "https://example.com/x.js", "data:text/javascript,export default 1", "./", "", "."]) {
			try { await import(s); out.push("loaded " + s) } catch (e) { out.push(e instanceof Error) }
		}
		export default out.every(x => x === true) ? "all refused" : out;`)
	if got != "all refused" {
		t.Fatal(got)
	}
}

// Tight loops, loops that catch the termination, and microtask loops all end.
func TestHostile_Loops(t *testing.T) {
	for _, src := range []string{
		`for (;;) {}`,
		`while (true) { try { for (;;) {} } catch (e) {} finally { continue } }`,
		`for (;;) { try { while (true) {} } finally { } }`,
		`for (;;) await null;`,
		`const f = () => Promise.resolve().then(f); f(); await new Promise(() => {});`,
		`async function spin() { for (;;) { try { await null } catch {} } } await spin();`,
		`await new Promise(() => { for (;;) {} }).catch(() => {}); for (;;) {}`,
		`const g = function* () { for (;;) yield 1 }; for (const x of g()) {}`,
		`/(a+)+$/.test("a".repeat(40) + "!")`,
	} {
		start := time.Now()
		res := settle(t, src, airlock.Options{Language: airlock.JavaScript}, 100*time.Millisecond)
		if res.Status != airlock.StatusTerminated {
			t.Errorf("%s: status %s (%v)", src, res.Status, res.Error)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v to stop", src, d)
		}
	}
}

// Native loops: these builtins walk in native code, and on an engine that
// polls only between bytecodes each outlasted a terminate by minutes
// (includes over {length: 2**32}: six minutes; a loop of Float64Array sorts:
// 3m22s; a loop of indexOf over a 64 MiB string: past 20 s). Every loop of
// the engine checks for a stop (internal/qjs/stopcheck), so each now stops
// where it is, with no limit on lengths: the status is terminated, or
// memory for those that fill the heap first, never an error.
func TestHostile_NativeLoops(t *testing.T) {
	for _, src := range []string{
		`Array.prototype.includes.call({length: 2**32}, 1)`,
		`Array.prototype.lastIndexOf.call({length: 2**32}, 1)`,
		`Array.prototype.join.call({length: 2**32}, "")`,
		`Array.prototype.copyWithin.call({length: 2**32}, 0, 1)`,
		`Array.prototype.forEach.call({length: 2**32}, () => {})`,
		`const a = []; a.length = 2**32 - 1; a.includes(1)`,
		`[].concat({length: 2**32, [Symbol.isConcatSpreadable]: true})`,
		`Array.from({length: 2**32 - 1})`,
		`const t = new Float64Array(4e6); for (;;) t.sort()`,
		`const t = new Float64Array(4e6); for (;;) t.includes(1)`,
		`const a = new Array(1e6).fill(3); for (;;) a.sort()`,
		`const s = "a".repeat(2**24); for (;;) s.indexOf("b")`,
		`(2n ** 1000000n).toString()`,
	} {
		start := time.Now()
		res := settle(t, src, airlock.Options{Language: airlock.JavaScript}, 100*time.Millisecond)
		if res.Status != airlock.StatusTerminated && res.Status != airlock.StatusMemory {
			t.Errorf("%s: status %s (%v)", src, res.Status, res.Error)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v to stop", src, d)
		}
	}
}

// One long native call ends where it is once the host has stopped the run:
// JSON.stringify of an array of 2^32 - 1 holes ran, on an engine that
// polled between bytecodes only, until its output reached the memory limit
// (54 s with a 1 GiB limit). The status is the host's, not the engine's
// out-of-memory error.
func TestHostile_StopEndsLongNativeCall(t *testing.T) {
	for _, src := range []string{
		`const a = []; a.length = 2**32 - 1; export default JSON.stringify(a).length`,
		`const a = []; a.length = 2**32 - 1; try { JSON.stringify(a) } catch (e) {} for (;;) {}`,
	} {
		start := time.Now()
		res := settle(t, src, airlock.Options{Language: airlock.JavaScript, MemoryLimitBytes: 1 << 30}, 100*time.Millisecond)
		wantStatus(t, res, airlock.StatusTerminated)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %v to stop", src, d)
		}
	}
}

// BigInts are as large as the engine makes them (2^20 bits; V8: 2^30) and
// the memory limit allows, with no bound of the sandbox's. The engine's BigInt
// arithmetic and decimal conversion are native loops, quadratic in the
// size, and they stop as every native loop does (TestHostile_NativeLoops):
// a heap of big BigInts ends at the memory limit, and a loop of decimal
// strings of million-bit BigInts ends at Terminate.
func TestHostile_BigIntsUnbounded(t *testing.T) {
	got := evalJS(t, `const big = 2n ** 300000n * 3n - 1n, text = String(big), head = text.slice(0, 32000);
		export default [text.length, String(BigInt(head)) === head, String(big % 1000n), (big / (2n ** 65000n + 7n)) > 0n, (2n ** 200000n).toString(16).length]`)
	want := []any{90310.0, true, "127", true, 50001.0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	res := runOpts(t, `const keep = []; for (let i = 0n; ; i++) keep.push(2n ** 100000n + i)`,
		airlock.Options{Language: airlock.JavaScript, MemoryLimitBytes: 16 << 20})
	wantStatus(t, res, airlock.StatusMemory)
	res = settle(t, `for (;;) String(2n ** 999999n)`, airlock.Options{Language: airlock.JavaScript}, 100*time.Millisecond)
	wantStatus(t, res, airlock.StatusTerminated)
}

// Builtins take any length the memory limit allows: no RangeError of the
// sandbox's own (the guards of an earlier engine, which could not stop
// native loops, refused arrays beyond 2^25 elements and array-likes beyond
// 2^22).
func TestHostile_NoLengthLimits(t *testing.T) {
	got := evalJS(t, `const a = Array.from({length: 5e6}, (_, i) => i);
		const b = [].concat({length: 5e6, [Symbol.isConcatSpreadable]: true});
		export default [a.length, a[4999999], a.includes(4999999), b.length, Array.prototype.indexOf.call({length: 2 ** 23, [2 ** 23 - 1]: 7}, 7)]`)
	want := []any{5e6, 4999999.0, true, 5e6, float64(1<<23 - 1)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// The builtins behave as the language says on ordinary arrays.
func TestHostile_GuardedBuiltinsStillWork(t *testing.T) {
	got := evalJS(t, `const big = new Array(70000).fill(0).map((_, i) => 70000 - i);
		big.sort();
		const t = new Float64Array([3, NaN, -0, 0, -1]); t.sort();
		export default [[3, 1, 2].sort().join(), [1, 2, 3].includes(2), big[0], big[69999],
			Array.from(t).map(x => Object.is(x, -0) ? "-0" : String(x)).join(),
			[10, 9, 1].sort().join(), (255n).toString(16), String(2n ** 200n).length, [1, [2, [3]]].flat(2).join()]`)
	want := []any{"1,2,3", true, 1.0, 9999.0, "-1,-0,0,3,NaN", "1,10,9", "ff", 61.0, "1,2,3"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// skipSortUnderRace is why the long-sort tests do not run under -race.
const skipSortUnderRace = "sorting is the engine's own, with no Go concurrency to check; the engine runs 40 times slower under -race (the test runs in go test ./...)"

// Long arrays are sorted as the specification describes, by the engine's
// own sort (which checks for a stop in its loops, as every loop of the
// engine does): holes skipped and deleted at the end, undefined last,
// stable, default order by strings, the comparator's NaN as 0, and
// toSorted reading holes as undefined. The expected orders are built by
// counting and bucketing, in linear time.
func TestHostile_LongArraySort(t *testing.T) {
	if raceEnabled {
		t.Skip(skipSortUnderRace)
	}
	got := evalJS(t, `
		let seed = 11;
		const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
		const n = 100000;
		const a = [];
		let holes = 0, undefs = 0;
		for (let i = 0; i < n; i++) {
			const r = rnd();
			if (r < 0.01) { holes++; continue }      // a hole at i
			a[i] = r < 0.02 ? (undefs++, undefined) : Math.floor(r * 1000);
		}
		a.length = n;
		const keys = Array.from({ length: 1000 }, (_, i) => String(i)).sort();
		const count = new Map();
		for (let i = 0; i < n; i++) if (i in a && a[i] !== undefined) count.set(String(a[i]), (count.get(String(a[i])) || 0) + 1);
		const want = [];
		for (const k of keys) for (let i = 0; i < (count.get(k) || 0); i++) want.push(Number(k));
		const copy = a.slice();
		const sortedCopy = a.toSorted();
		let untouched = true;
		for (let i = 0; i < n; i++) if ((i in a) !== (i in copy) || a[i] !== copy[i]) untouched = false;
		a.sort();
		let ok = true;
		for (let i = 0; i < want.length; i++) if (a[i] !== want[i]) ok = false;
		for (let i = want.length; i < want.length + undefs; i++) if (!(i in a) || a[i] !== undefined) ok = false;
		for (let i = want.length + undefs; i < n; i++) if (i in a) ok = false;
		let toSortedOk = sortedCopy.length === n && Object.getPrototypeOf(sortedCopy) === Array.prototype;
		for (let i = 0; i < want.length; i++) if (sortedCopy[i] !== want[i]) toSortedOk = false;
		for (let i = want.length; i < n; i++) if (!(i in sortedCopy) || sortedCopy[i] !== undefined) toSortedOk = false;

		const m = 270000; // more than one comparator chunk of 2^18
		const objs = Array.from({ length: m }, (_, i) => ({ k: Math.floor(rnd() * 50), i }));
		const buckets = [];
		for (const o of objs) (buckets[o.k] ||= []).push(o);
		const wantObjs = buckets.flat();
		const byK = objs.toSorted((x, y) => x.k - y.k);
		const stable = byK.every((o, i) => o === wantObjs[i]);
		const nanCmp = objs.slice().sort(() => NaN).every((o, i) => o === objs[i]);
		const like = { length: 40000 };
		for (let i = 0; i < 40000; i++) like[i] = 40000 - i;
		Array.prototype.sort.call(like, (x, y) => x - y);
		let frozen = "";
		try { Object.freeze(Array.from({ length: 40000 }, (_, i) => -i)).sort() } catch (e) { frozen = e.name }
		let badCmp = "";
		try { new Array(40000).fill(1).sort("nope") } catch (e) { badCmp = e.name }
		export default [ok, toSortedOk, untouched, stable, nanCmp, like[0] === 1 && like[39999] === 40000, frozen, badCmp, holes > 0 && undefs > 0]`)
	want := []any{true, true, true, true, true, true, "TypeError", "TypeError", true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Bridged functions are the host's C function bound to their id: the
// engine hands over the arguments with no JavaScript between (a sync call
// costs less than the wrapper's own RegisterHostFunc). They keep what the
// JavaScript proxies had: the argument count, spread, call and apply, no
// constructor, values that are not primitives through the codec, errors
// from the host, and stacks that show the user's frames only.
func TestHostile_BridgedFunctionsAreBoundNatives(t *testing.T) {
	count := func(args ...any) int { return len(args) }
	echo := func(v any) any { return v }
	fail := func() error { return errors.New("the host says no") }
	res := runOpts(t, "function g() { return fail(); }\n"+
		"let stack = ''; try { g() } catch (e) { stack = e.stack }\n"+
		"export default [count(), count(undefined), count(1, 2, 3), count(...[1, 2]), count.call({}, 1), count.apply(null, [1, 2, 3, 4]),"+
		" echo({ a: [1, 2n, new Map([[1, 'x']])] }).a[2].get(1), echo(null), echo('ü😀'), String(count),"+
		" (() => { try { new count() } catch (e) { return e.name } })(), stack.includes('__airlock'), typeof count]",
		airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"count": count, "echo": echo, "fail": fail}})
	want := []any{0.0, 1.0, 3.0, 2.0, 1.0, 4.0, "x", nil, "ü😀", "function () { [native code] }", "TypeError", false, "function"}
	wantResult(t, res, want)
	res = runOpts(t, "function g() { return fail(); }\ng();", airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"fail": fail}})
	wantStatus(t, res, airlock.StatusError)
	if res.Error.Message != "the host says no" || strings.Contains(res.Error.Stack, "native") || !strings.Contains(res.Error.Stack, "at g (") {
		t.Fatalf("%q %q", res.Error.Message, res.Error.Stack)
	}
}

// The engine's BigInt.asUintN returned a small negative BigInt unchanged for
// 32 bits or more (asUintN(64, -1n) was -1n); patch 0015 corrects it, and
// keeps the builtin's argument checks.
func TestEngineFix_BigIntAsUintN(t *testing.T) {
	got := evalJS(t, `const name = (f) => { try { f() } catch (e) { return e.name } };
		export default [String(BigInt.asUintN(64, -1n)), String(BigInt.asUintN(8, -1n)), String(BigInt.asUintN(64, -(2n ** 40n))),
			String(BigInt.asUintN(0, -5n)), BigInt.asUintN(200, -1n) === 2n ** 200n - 1n, String(BigInt.asUintN(3, 13n)),
			BigInt.asUintN.length, name(() => BigInt.asUintN(-1, 1n)), name(() => BigInt.asUintN(1n, 1n)), name(() => BigInt.asUintN(8, 1)),
			name(() => new BigInt.asUintN(8, 1n))]`)
	want := []any{"18446744073709551615", "255", "18446742974197923840", "0", true, "5", 2.0, "RangeError", "TypeError", "TypeError", "TypeError"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Long typed arrays are sorted as the specification describes, including
// NaN, -0, BigInts, comparators, stability and toSorted, by the engine's
// own sort, which checks for a stop in its loops.
func TestHostile_LongTypedArraySort(t *testing.T) {
	// 140,000 elements (once two full chunks of 2^16 and a short one, when
	// an earlier engine sorted in chunks); the expected orders are built by
	// counting, in linear time.
	if raceEnabled {
		t.Skip(skipSortUnderRace)
	}
	got := evalJS(t, `
		const n = 140000;
		let seed = 7;
		const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
		const f = new Float64Array(n).map(() => { const r = rnd(); return r < 0.01 ? NaN : r < 0.02 ? -0 : r < 0.03 ? 0 : Math.floor(r * 1000) - 500 });
		const count = new Map();
		for (const v of f) { const k = Object.is(v, -0) ? "-0" : String(v); count.set(k, (count.get(k) || 0) + 1) }
		const want = [];
		for (let v = -500; v < 500; v++) {
			if (v === 0) { for (let i = 0; i < (count.get("-0") || 0); i++) want.push(-0) }
			for (let i = 0; i < (count.get(String(v)) || 0); i++) want.push(v);
		}
		for (let i = 0; i < (count.get("NaN") || 0); i++) want.push(NaN);
		const same = (x, y) => x.length === y.length && Array.prototype.every.call(x, (v, i) => Object.is(v, y[i]));
		const sorted = f.toSorted();
		const keyed = new Int32Array(70000).map(() => Math.floor(rnd() * 1e6));
		const byHigh = (a, b) => (a >> 8) - (b >> 8);
		const buckets = [];
		for (const v of keyed) (buckets[v >> 8] ||= []).push(v);
		const wantKeyed = buckets.flat();
		const big = new BigInt64Array(70000).map(() => BigInt(Math.floor(rnd() * 1000)) - 500n);
		const bigCount = new Map();
		for (const v of big) bigCount.set(v, (bigCount.get(v) || 0) + 1);
		const wantBig = [];
		for (let v = -500n; v < 500n; v++) for (let i = 0; i < (bigCount.get(v) || 0); i++) wantBig.push(v);
		const whole = new Float64Array(70000).map((_, i) => (i * 7919) % 100003), view = new Float64Array(whole.buffer, 8, 66000);
		const seen = new Uint8Array(100003);
		for (const v of view) seen[v] = 1;
		const wantView = [whole[0]];
		for (let v = 0; v < 100003; v++) if (seen[v]) wantView.push(v);
		wantView.push(...whole.subarray(66001));
		view.sort();
		const viewSorted = same(whole, wantView);
		let typeError = "";
		try { Float64Array.prototype.sort.call(Array.from(f)) } catch (e) { typeError = e.name }
		export default [same(sorted, want), same(f.sort(), want), same(keyed.sort(byHigh), wantKeyed),
			same(big.sort(), wantBig), viewSorted, typeError]`)
	want := []any{true, true, true, true, true, "TypeError"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// A host function that calls runtime.Goexit (a test's t.FailNow, say) ends
// the goroutine it runs on; the run still settles with a clear error, the VM
// is left unfreed rather than freed in the middle of a call, and the runtime
// goes on.
func TestHostile_HostGoexit(t *testing.T) {
	quit := func() { runtime.Goexit() }
	for _, g := range []any{quit, airlock.Async(quit)} {
		res := settle(t, `await quit(); export default 1`, airlock.Options{Globals: map[string]any{"quit": g}}, 5*time.Second)
		wantStatus(t, res, airlock.StatusError)
		if !strings.Contains(res.Error.Message, "runtime.Goexit") {
			t.Fatalf("%v", res.Error)
		}
	}
	wantResult(t, runOpts(t, `export default 1`, airlock.Options{}), 1.0)
}

// Once the host decides to stop a run, the decision is sticky: no host
// function starts afterwards, whatever the program catches, and the status is
// the host's. In worker mode too (there the worker refuses calls once it has
// heard of the stop, and the host refuses those already on their way).
func TestHostile_NoHostCallAfterStop(t *testing.T) {
	for _, rt := range []*airlock.Runtime{testRuntime, workerRuntime} {
		noHostCallAfterStop(t, rt)
	}
}

func noHostCallAfterStop(t *testing.T, rt *airlock.Runtime) {
	for _, src := range []string{
		`for (let i = 0; i < 1e6; i++) { try { stopNow() } catch (e) {} }
		export default "finished";`,
		// In async code the engine turns the interrupt into a rejection the
		// program can catch.
		`async function spin() { for (let i = 0; i < 1e6; i++) { try { await stopNow() } catch (e) {} } }
		await spin().catch(() => {});
		for (let i = 0; i < 1e6; i++) { try { stopNow() } catch (e) {} }
		export default "finished";`,
	} {
		var ex *airlock.Execution
		var calls atomic.Int32
		ready := make(chan struct{})
		stopNow := func() {
			if calls.Add(1) == 1 {
				<-ready
				ex.Terminate("stopped by the host function")
			}
		}
		var err error
		ex, err = rt.Run(context.Background(), src, airlock.Options{Globals: map[string]any{"stopNow": stopNow}})
		if err != nil {
			t.Fatal(err)
		}
		close(ready)
		res := ex.Wait()
		wantStatus(t, res, airlock.StatusTerminated)
		if n := calls.Load(); n != 1 {
			t.Fatalf("the host function ran %d times", n)
		}
	}
}

// A promise that can never settle ends the run instead of hanging it.
func TestHostile_NeverSettles(t *testing.T) {
	res := settle(t, `await new Promise(() => {}); export default 1`, airlock.Options{}, 5*time.Second)
	wantStatus(t, res, airlock.StatusError)
	if !strings.Contains(res.Error.Message, "never settle") {
		t.Fatal(res.Error.Message)
	}
}

// Deep recursion is a catchable stack overflow, not a host crash.
func TestHostile_DeepRecursion(t *testing.T) {
	res := settle(t, `function f(n) { return f(n + 1) + 1 } f(0)`, airlock.Options{}, 10*time.Second)
	wantStatus(t, res, airlock.StatusError)
	if !strings.Contains(res.Error.Message, "stack overflow") {
		t.Fatal(res.Error.Message)
	}
	if n := strings.Count(res.Error.Stack, "\n"); n > 60 {
		t.Fatalf("stack has %d lines", n)
	}
}

// Allocation bombs under a small cap settle with status memory.
func TestHostile_AllocationBombs(t *testing.T) {
	for _, src := range []string{
		`const a = []; for (;;) a.push({ big: new Array(1000).fill(1) });`,
		`new ArrayBuffer(1 << 30)`,
		`"x".repeat(1 << 27)`,
		`const m = new Map(); for (let i = 0;; i++) m.set(i, String(i).repeat(100));`,
		`let s = []; for (let i = 0;; i++) s = [s, s, i];`,
	} {
		res := settle(t, src, airlock.Options{MemoryLimitBytes: 8 << 20}, 20*time.Second)
		if res.Status != airlock.StatusMemory {
			t.Errorf("%s: status %s (%v)", src, res.Status, res.Error)
		}
	}
}

// Deeply nested values are a clear error, not a host stack overflow.
func TestHostile_DeepNesting(t *testing.T) {
	res := settle(t, `let v = []; for (let i = 0; i < 200000; i++) v = [v]; export default v`, airlock.Options{}, 20*time.Second)
	if res.Status == airlock.StatusSuccess {
		t.Fatal("a 200000-deep value crossed")
	}
	res = settle(t, `let v = []; for (let i = 0; i < 1000; i++) v = [v]; export default v`, airlock.Options{}, 20*time.Second)
	wantStatus(t, res, airlock.StatusSuccess)
	res = settle(t, `export default input`, airlock.Options{Globals: map[string]any{"input": nested(5000)}}, 20*time.Second)
	if res.Status == airlock.StatusSuccess && res.Result == nil {
		t.Fatal("a nested global lost its value")
	}
}

func nested(n int) any {
	var v any = []any{}
	for i := 0; i < n; i++ {
		v = []any{v}
	}
	return v
}

// A sparse array with a huge length cannot make the host allocate it.
func TestHostile_SparseArrayExpansion(t *testing.T) {
	res := run(t, `const a = []; a[4294967294] = 1; export default a`)
	wantStatus(t, res, airlock.StatusError)
	if !strings.Contains(res.Error.Message, "too large") {
		t.Fatal(res.Error.Message)
	}
	wantResult(t, run(t, `const a = [1, , 3]; export default a`), []any{1.0, js.Undefined{}, 3.0})
}

// Console floods stop at the run's budget for values crossing to the host.
func TestHostile_OutputFlood(t *testing.T) {
	rt := airlock.NewRuntime(airlock.RuntimeConfig{MaxValueBytes: 1 << 20})
	defer rt.Close()
	ex, _ := rt.Run(context.Background(), `const s = "y".repeat(1000); for (;;) console.log(s)`, airlock.Options{})
	res := ex.Wait()
	wantStatus(t, res, airlock.StatusError)
	if len(res.Logs) > 1100 {
		t.Fatalf("%d logs kept", len(res.Logs))
	}
}

// A thrown object that is not an Error is described without running its
// code: its toString and toJSON are never called.
func TestHostile_ThrownObjectNotRun(t *testing.T) {
	res := run(t, `globalThis.calls = 0;
		throw { code: 7, toString() { globalThis.calls++; for (;;) {} }, toJSON() { for (;;) {} } }`)
	wantStatus(t, res, airlock.StatusError)
	if !strings.Contains(res.Error.Message, `"code"`) {
		t.Fatalf("message %q", res.Error.Message)
	}
}

// Forged errors do not change the status: a thrown "out of memory" with no
// memory pressure is an ordinary error, and a fake termination message is
// too.
func TestHostile_ForgedErrors(t *testing.T) {
	res := run(t, `throw new InternalError("interrupted")`)
	wantStatus(t, res, airlock.StatusError)
	res = run(t, `throw new InternalError("out of memory")`)
	wantStatus(t, res, airlock.StatusError)
	res = run(t, `const e = new InternalError("out of memory"); delete e.stack; throw e`)
	wantStatus(t, res, airlock.StatusError)
	// A real out-of-memory that the program catches and then throws past is
	// still memory: the engine refused an allocation.
	res = runOpts(t, `let a = []; try { for (;;) a.push(new Array(1e4).fill(1)) } catch (e) { a = null; throw new Error("ok") }`,
		airlock.Options{MemoryLimitBytes: 8 << 20})
	wantStatus(t, res, airlock.StatusMemory)
	res = run(t, `const e = new Error("terminated: 2s budget"); e.name = "TerminatedError"; throw e`)
	wantStatus(t, res, airlock.StatusError)
}

// Values the sandbox cannot see: bridged names are not on globalThis, and
// no name or symbol of the host's own is there either (no "__" property,
// no hand-over function).
func TestHostile_NothingOfTheHost(t *testing.T) {
	got := runOpts(t, `export default [
		Object.getOwnPropertyNames(globalThis).filter(n => n.startsWith("__")),
		typeof __airlock_host, typeof secret, "secret" in globalThis,
		Object.getOwnPropertySymbols(globalThis).filter(s => s !== Symbol.toStringTag).length,
	]`, airlock.Options{Globals: map[string]any{"secret": "s3cr3t"}}).Result
	want := []any{[]any{}, "undefined", "string", false, 0.0}
	b1, _ := json.Marshal(got)
	b2, _ := json.Marshal(want)
	if string(b1) != string(b2) {
		t.Fatalf("got %s, want %s", b1, b2)
	}
}

// hammerCase is a program and the status it must settle with.
type hammerCase struct {
	src  string
	want airlock.Status
}

// hammer runs n programs at once on rt, cycling through cases, each with
// a tick() async host function; a program that must be terminated gets
// 200 ms, the others 20 s. Every run must settle with its status.
func hammer(t *testing.T, rt *airlock.Runtime, n int, cases []hammerCase) {
	t.Helper()
	tick := airlock.Async(func() int { time.Sleep(time.Millisecond); return 1 })
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		p := cases[i%len(cases)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			ex, err := rt.Run(context.Background(), p.src, airlock.Options{
				MemoryLimitBytes: 16 << 20,
				Globals:          map[string]any{"tick": tick},
			})
			if err != nil {
				t.Error(err)
				return
			}
			budget := 20 * time.Second
			if p.want == airlock.StatusTerminated {
				budget = 200 * time.Millisecond
			}
			timer := time.AfterFunc(budget, func() { ex.Terminate("hammer") })
			res := ex.Wait()
			timer.Stop()
			if res.Status != p.want {
				t.Errorf("%s: status %s, want %s (%v)", p.src, res.Status, p.want, res.Error)
			}
		}()
	}
	wg.Wait()
}

// A mix of hostile and normal programs at once: every run settles with the
// right status, and the host's goroutines return to where they were.
func TestHostile_Hammer(t *testing.T) {
	before := runtime.NumGoroutine()
	hammer(t, testRuntime, 48, []hammerCase{
		{`export default 1 + 1`, airlock.StatusSuccess},
		{`for (;;) {}`, airlock.StatusTerminated},
		{`const a = []; for (;;) a.push(new Array(1e4).fill(1))`, airlock.StatusMemory},
		{`null.boom`, airlock.StatusError},
		{`import x from 'nowhere'; export default x`, airlock.StatusLinkError},
		{`export default await Promise.all([tick(), tick()])`, airlock.StatusSuccess},
	})
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+4 {
		t.Fatalf("%d goroutines before, %d after", before, n)
	}
}

// Getters on a value crossing to the host run once each, an object's in key
// order, each value encoded before the next is read (structured clone's
// order, depth first, as V8's serializer keeps it); the kernel once read an
// object's properties in reverse, and then all of them before any value.
func TestHostile_GetterOrder(t *testing.T) {
	var got any
	res := runOpts(t, `const order = [];
		const v = { get a() { order.push("a"); return 1 }, get b() { order.push("b"); return { get c() { order.push("c"); return 2 } } }, get d() { order.push("d"); return [3] } };
		take(v);
		export default order.join("");`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"take": func(v any) { got = v }}})
	wantResult(t, res, "abcd")
	if !reflect.DeepEqual(got, map[string]any{"a": 1.0, "b": map[string]any{"c": 2.0}, "d": []any{3.0}}) {
		t.Fatalf("host got %v", got)
	}
}

// Asynchronous calls a program starts and never awaits end with the run:
// more of them than the reply queue holds once kept the run from settling.
func TestHostile_UnawaitedAsyncCalls(t *testing.T) {
	ex, err := airlock.Run(context.Background(), `
		for (let i = 0; i < 200; i++) wait();
		export default "done";
	`, airlock.Options{Globals: map[string]any{
		"wait": airlock.Async(func(ctx context.Context) { <-ctx.Done() }),
	}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-ex.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the run never settled")
	}
	if res := ex.Wait(); res.Status != airlock.StatusSuccess || res.Result != "done" {
		t.Errorf("result %v %v", res.Status, res.Error)
	}
}

// What crosses does not depend on the globals a program can replace: a
// program that replaces Uint8Array's base64 methods or a typed array's
// constructor before a typed array crosses, or before structuredClone
// copies one, changes nothing of what crosses or of the copy (the codec
// reads and makes typed arrays in C, with the engine's own classes).
func TestHostile_TypedArrayCodecTampering(t *testing.T) {
	res := runOpts(t, `
		Uint8Array.prototype.toBase64 = function () { return "AAAA" };
		Uint8Array.fromBase64 = () => new Uint8Array([9]);
		globalThis.Float64Array = function () { return [7] };
		export default [new Uint8Array([1, 2, 3]), new Int16Array([-1, 300])]`,
		airlock.Options{Language: airlock.JavaScript})
	wantStatus(t, res, airlock.StatusSuccess)
	want := []any{[]byte{1, 2, 3}, js.Int16Array{-1, 300}}
	if !reflect.DeepEqual(res.Result, want) {
		t.Fatalf("got %#v, want %#v", res.Result, want)
	}
	got := evalJS(t, `const v = { a: new Float64Array([1.5]), b: new Uint8Array([4, 5]).buffer };
		Uint8Array.fromBase64 = () => new Uint8Array([9]); globalThis.Float64Array = null;
		const c = structuredClone(v);
		export default [c.a[0], c.a instanceof Object.getPrototypeOf(Int8Array), c.b.byteLength]`)
	if !reflect.DeepEqual(got, []any{1.5, true, 2.0}) {
		t.Fatalf("structuredClone: %v", got)
	}
}

// Index accessors on Array.prototype do not break host calls: the host
// writes the argument lists and replies it makes as own properties. (It
// once assigned them, and the setters took the elements of every reply.)
// What the setters still see is the sandbox's own: the engine's
// JSON.stringify keeps its stack of holders in an ordinary array.
func TestHostile_ArrayIndexAccessors(t *testing.T) {
	res := runOpts(t, `
		const seen = Object.create(null);
		let taken = 0;
		for (const i of ["0", "1", "2"]) {
			Object.defineProperty(Array.prototype, i, {
				set(v) { if (typeof v !== "object") seen[taken] = v; taken++; },
				get() { return "fake"; }, configurable: true });
		}
		const out = Object.create(null);
		out.object = echo({ a: 1 }).a;
		try { fail(); } catch (e) { out.error = e.message; }
		out.list = echo([1, 2]).length;
		out.json = text({ b: 2 }).b;
		export default JSON.stringify({ out, seen });`,
		airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{
			"echo": func(v any) any { return v },
			"fail": func() (int, error) { return 0, errors.New("nope") },
			"text": airlock.JSONFunc(func(_ context.Context, args json.RawMessage) (json.RawMessage, error) {
				return args[1 : len(args)-1], nil
			}),
		}})
	wantResult(t, res, `{"out":{"object":1,"error":"nope","list":2,"json":2},"seen":{}}`)
}

// The realm is hardened once, by the engine: the Function constructors
// stay the engine's own and refuse to compile (patch 0002), where the
// kernel replaced them with stand-ins of length 0; the Proxy constructor
// stays the engine's own, where the kernel wrapped it to register every
// Proxy (the codec refuses a Proxy by its class, before any trap). The
// shapes a program sees are the specification's (since test262 found it,
// Function.prototype.constructor's descriptor too: writable and
// configurable); the refusals and their messages are as before.
func TestHostile_HardenedIntrinsicsKeepTheirShape(t *testing.T) {
	got := evalJS(t, `const A = Object.getPrototypeOf(async function () {}).constructor;
		const d = Object.getOwnPropertyDescriptor(Function.prototype, "constructor");
		let msg; try { new A("await 1") } catch (e) { msg = e.name + ": " + e.message }
		export default [Function.length, A.length, A.name, Function.prototype.constructor === Function,
			(function () {}) instanceof Function, d.writable, d.configurable, "prototype" in Proxy, Proxy.length, msg]`)
	want := []any{1.0, 1.0, "AsyncFunction", true, true, true, true, false, 2.0,
		"EvalError: AsyncFunction: code generation from strings is not allowed in the sandbox"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// An exception a queueMicrotask callback threw was dropped without a word
// (the kernel queued the callback as a promise reaction, whose rejection
// nothing saw), and the run succeeded. It now fails the run, as an uncaught
// exception does in Node, its texts cut as every failure's are.
func TestHostile_QueueMicrotaskThrows(t *testing.T) {
	res := runOpts(t, `queueMicrotask(() => { throw new RangeError("in a microtask") }); export default 1`,
		airlock.Options{Language: airlock.JavaScript})
	wantStatus(t, res, airlock.StatusError)
	if res.Error.Name != "RangeError" || res.Error.Message != "in a microtask" {
		t.Fatalf("error %+v", res.Error)
	}
	res = runOpts(t, `queueMicrotask(() => { throw new Error("x".repeat(1 << 20)) }); export default 1`,
		airlock.Options{Language: airlock.JavaScript})
	wantStatus(t, res, airlock.StatusError)
	wantBounded(t, res.Error)
	res = runOpts(t, `let r = []; queueMicrotask(() => { try { throw 1 } catch { r.push("caught") } }); await 0; export default r`,
		airlock.Options{Language: airlock.JavaScript})
	wantResult(t, res, []any{"caught"})
}

// The shim's C reads values with the realm's natives it captured before
// any program ran: a program that replaces String.prototype's methods,
// Symbol.prototype.toString, Function.prototype.toString or
// WeakMap.prototype's cannot change how a failure's texts are cut, how a
// thrown value or a console argument is described, or which host function
// an error is counted against.
func TestHostile_TamperingDoesNotReachTheShim(t *testing.T) {
	tamper := `for (const k of ["slice", "charCodeAt", "indexOf", "concat"]) String.prototype[k] = () => { throw new Error("tampered " + k) };
		Symbol.prototype.toString = () => "tampered"; Function.prototype.toString = () => "class tampered {}";
		WeakMap.prototype.set = () => { throw new Error("tampered set") }; WeakMap.prototype.get = () => 7;
		Object.keys = () => ["tampered"]; JSON.stringify = () => "tampered";`
	res := runOpts(t, tamper+`throw new Error("<" + "x".repeat(1 << 20) + ">")`, airlock.Options{Language: airlock.JavaScript})
	wantStatus(t, res, airlock.StatusError)
	wantBounded(t, res.Error)
	if !strings.HasPrefix(res.Error.Message, "<xxx") || cutCount(res.Error.Message) == 0 {
		t.Errorf("message %.60q", res.Error.Message)
	}
	res = runOpts(t, tamper+`throw { s: Symbol("a"), f() {}, m: new Map(), t: "t" }`, airlock.Options{Language: airlock.JavaScript})
	wantStatus(t, res, airlock.StatusError)
	if res.Error.Message != `{"s": Symbol(a), "f": [function], "m": [map], "t": "t"}` {
		t.Errorf("thrown value's text %q", res.Error.Message)
	}
	res = runOpts(t, tamper+`console.log(function f() {}, Symbol("s"), new WeakMap())`, airlock.Options{Language: airlock.JavaScript})
	wantStatus(t, res, airlock.StatusSuccess)
	if msg := res.Logs[0].Message(); msg != "[Function: f] Symbol(s) [WeakMap]" {
		t.Errorf("log %q", msg)
	}
	ex := newExecutor(t, airlock.ExecutorOptions{Timeout: time.Minute})
	defer ex.Cleanup(context.Background())
	if err := ex.SendTools(context.Background(), map[string]any{"fail": func() error { return errors.New("tool says no") }}); err != nil {
		t.Fatal(err)
	}
	_, err := ex.Run(context.Background(), tamper+`fail()`)
	var ee *airlock.ExecutorError
	if !errors.As(err, &ee) || !strings.Contains(ee.Message, "tool says no") {
		t.Fatalf("error %v", err)
	}
	if ee.Code != airlock.CodeToolProxyFail {
		t.Errorf("code %s, want the tool's failure (%s): %v", ee.Code, airlock.CodeToolProxyFail, err)
	}
}
