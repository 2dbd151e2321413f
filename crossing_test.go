package airlock_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/airlockrun/airlock"
	"github.com/airlockrun/airlock/js"
)

// The values of issue 21's crossing: every structured-clone type, as the
// sandbox makes them. describe (below) writes what a value is and holds, so
// that a value and its copy can be compared as text.
const crossingCases = `
class MyError extends Error { constructor(m) { super(m); this.name = "MyError"; } }
const named = [1, 2]; named.total = 3; named.label = "n";
const sparseNamed = [1, , 3]; sparseNamed.extra = true;
export const cases = {
	i8: new Int8Array([-1, 2]), u8: new Uint8Array([1, 255]), u8c: new Uint8ClampedArray([0, 255]),
	i16: new Int16Array([-300, 7]), u16: new Uint16Array([65535]), f16: new Float16Array([1.5]),
	i32: new Int32Array([-5, 1 << 30]), u32: new Uint32Array([4294967295]),
	f32: new Float32Array([0.5, -Infinity]), f64: new Float64Array([Math.PI, NaN, -0]),
	b64: new BigInt64Array([-(2n ** 63n), 5n]), bu64: new BigUint64Array([2n ** 64n - 1n]),
	sub: new Int16Array(new Int16Array([1, 2, 3, 4]).buffer, 2, 2),
	dv: new DataView(new Uint8Array([1, 2, 3, 4]).buffer, 1, 2),
	num: new Number(1.5), str: new String("s\uD800"), bool: new Boolean(false), big: Object(10n), nan: new Number(NaN),
	re: /a+\/b/dgimsy, rev: /[\p{L}--[a-z]]/v, reEmpty: new RegExp(""),
	inv: new Date(NaN), max: new Date(8.64e15), min: new Date(-8.64e15), neg: new Date(-1),
	named, sparseNamed,
	te: new TypeError("t"), ra: new RangeError("r"), se: new SyntaxError("s"), ref: new ReferenceError("f"),
	ev: new EvalError("e"), ue: new URIError("u"), err: new Error("plain"), custom: new MyError("m"),
	lone: "a\uD800b", loneLow: "\uDC00", pair: "\uD83D\uDE00", reversed: "\uDC00\uD800",
};
export const describe = (v) => {
	const tag = Object.prototype.toString.call(v);
	if (typeof v === "string") return "string:" + Array.from({ length: v.length }, (_, i) => v.charCodeAt(i)).join(",");
	if (v instanceof DataView) {
		const b = [];
		for (let i = 0; i < v.byteLength; i++) b.push(v.getUint8(i));
		return "DataView:" + b.join(",");
	}
	if (ArrayBuffer.isView(v)) {
		return tag + ":" + Object.getPrototypeOf(v).constructor.name + ":" +
			Array.from(v, (x) => Object.is(x, -0) ? "-0" : String(x)).join(",");
	}
	if (v instanceof RegExp) return "RegExp:" + v.source + ":" + v.flags + ":" + v.lastIndex;
	if (v instanceof Date) return "Date:" + v.getTime();
	if (v instanceof Error) {
		// A class of the program's own cannot be found again from its name
		// (Node's structured clone makes it an Error named Error): the
		// copy is an Error that keeps the name; a built-in error keeps its
		// class.
		const kinds = [TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError]
			.filter((C) => v instanceof C).map((C) => C.name);
		return "Error:" + v.name + ":" + v.message + ":" + kinds.join(",");
	}
	if (Array.isArray(v)) {
		// A hole arrives in Go as Undefined{} and comes back as undefined;
		// named properties arrive in a Go map, which keeps no order.
		const names = Object.keys(v).filter((k) => String(k >>> 0) !== k).sort();
		return "Array:" + v.length + ":" + Array.from(v, describe).join(";") + ":" +
			names.map((k) => k + "=" + describe(v[k])).join(";");
	}
	if (typeof v === "object" && v !== null && tag !== "[object Object]") {
		const x = v.valueOf();
		return "boxed:" + tag + ":" + typeof x + ":" + (typeof x === "string" ? describe(x) : String(x));
	}
	return typeof v + ":" + String(v);
};
`

// crossingWant is how each case arrives in Go: the package documentation's
// table.
func crossingWant() map[string]any {
	return map[string]any{
		"i8": js.Int8Array{-1, 2}, "u8": []byte{1, 255}, "u8c": js.Uint8ClampedArray{0, 255},
		"i16": js.Int16Array{-300, 7}, "u16": js.Uint16Array{65535}, "f16": js.Float16Array{0x3E00},
		"i32": js.Int32Array{-5, 1 << 30}, "u32": js.Uint32Array{4294967295},
		"f32": js.Float32Array{0.5, float32(math.Inf(-1))}, "f64": js.Float64Array{math.Pi, math.NaN(), math.Copysign(0, -1)},
		"b64": js.BigInt64Array{math.MinInt64, 5}, "bu64": js.BigUint64Array{math.MaxUint64},
		"sub": js.Int16Array{2, 3},
		"dv":  js.DataView{2, 3},
		"num": &js.Boxed{Value: 1.5}, "str": &js.Boxed{Value: "s\xed\xa0\x80"},
		"bool": &js.Boxed{Value: false}, "big": &js.Boxed{Value: big.NewInt(10)},
		"nan": &js.Boxed{Value: math.NaN()},
		"re":  &js.RegExp{Source: `a+\/b`, Flags: "dgimsy"}, "rev": &js.RegExp{Source: `[\p{L}--[a-z]]`, Flags: "v"},
		"reEmpty": &js.RegExp{Source: "(?:)", Flags: ""},
		"inv":     time.Time{}, "max": time.UnixMilli(8.64e15).UTC(), "min": time.UnixMilli(-8.64e15).UTC(),
		"neg":         time.UnixMilli(-1).UTC(),
		"named":       &js.Array{Elements: []any{1.0, 2.0}, Props: map[string]any{"total": 3.0, "label": "n"}},
		"sparseNamed": &js.Array{Elements: []any{1.0, js.Undefined{}, 3.0}, Props: map[string]any{"extra": true}},
		"te":          &js.ErrorValue{Name: "TypeError", Message: "t"}, "ra": &js.ErrorValue{Name: "RangeError", Message: "r"},
		"se": &js.ErrorValue{Name: "SyntaxError", Message: "s"}, "ref": &js.ErrorValue{Name: "ReferenceError", Message: "f"},
		"ev": &js.ErrorValue{Name: "EvalError", Message: "e"}, "ue": &js.ErrorValue{Name: "URIError", Message: "u"},
		"err": &js.ErrorValue{Name: "Error", Message: "plain"}, "custom": &js.ErrorValue{Name: "MyError", Message: "m"},
		"lone": "a\xed\xa0\x80b", "loneLow": "\xed\xb0\x80", "pair": "\U0001F600", "reversed": "\xed\xb0\x80\xed\xa0\x80",
	}
}

// sameGo compares a value that arrived with the one expected, NaN equal
// to NaN and -0 told from 0.
func sameGo(got, want any) bool {
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	if !g.IsValid() || !w.IsValid() || g.Type() != w.Type() {
		return got == nil && want == nil
	}
	switch w.Kind() {
	case reflect.Float32, reflect.Float64:
		return math.Float64bits(g.Float()) == math.Float64bits(w.Float()) ||
			math.IsNaN(g.Float()) && math.IsNaN(w.Float())
	case reflect.Slice:
		if g.Len() != w.Len() {
			return false
		}
		for i := 0; i < w.Len(); i++ {
			if !sameGo(g.Index(i).Interface(), w.Index(i).Interface()) {
				return false
			}
		}
		return true
	}
	if b, ok := want.(*js.Boxed); ok {
		return sameGo(got.(*js.Boxed).Value, b.Value)
	}
	if b, ok := want.(*big.Int); ok {
		return b.Cmp(got.(*big.Int)) == 0
	}
	if t, ok := want.(time.Time); ok {
		return t.Equal(got.(time.Time)) && t.IsZero() == got.(time.Time).IsZero()
	}
	return reflect.DeepEqual(got, want)
}

// Issue 21 item 3: every structured-clone type goes through a host function
// and comes back as what it was, arriving in Go as the documented table
// says, by the encoded path (inside an object) and alone (a string alone
// crosses as a primitive).
func TestCrossing_RoundTripThroughHostFunction(t *testing.T) {
	got := map[string]any{}
	res := runOpts(t, crossingCases+`
		const out = {};
		for (const [k, v] of Object.entries(cases)) {
			const before = describe(v);
			const alone = describe(echo(k, v));
			const inside = describe(echo(k + ".in", { v }).v);
			if (alone !== before || inside !== before) out[k] = [before, alone, inside];
		}
		export default out;
	`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{
		"echo": func(k string, v any) any { got[k] = v; return v },
	}})
	wantStatus(t, res, airlock.StatusSuccess)
	for k, d := range res.Result.(map[string]any) {
		t.Errorf("%s changed crossing: before, alone, inside an object:\n%q", k, d)
	}
	for k, want := range crossingWant() {
		if !sameGo(got[k], want) {
			t.Errorf("%s arrived in Go as %#v, want %#v", k, got[k], want)
		}
		in, _ := got[k+".in"].(map[string]any)
		if !sameGo(in["v"], want) {
			t.Errorf("%s inside an object arrived in Go as %#v, want %#v", k, in["v"], want)
		}
	}
}

// A run's result holds every type as the table says.
func TestCrossing_Result(t *testing.T) {
	res := runOpts(t, crossingCases+`export default cases;`, airlock.Options{Language: airlock.JavaScript})
	wantStatus(t, res, airlock.StatusSuccess)
	got := res.Result.(map[string]any)
	for k, want := range crossingWant() {
		if !sameGo(got[k], want) {
			t.Errorf("%s = %#v, want %#v", k, got[k], want)
		}
	}
}

// Go values of each type reach the sandbox as the typed arrays, views,
// boxes, regular expressions, dates, arrays and errors they stand for.
func TestCrossing_GoToSandbox(t *testing.T) {
	globals := map[string]any{}
	for k, v := range crossingWant() {
		globals["g_"+k] = v
	}
	names := make([]string, 0, len(globals))
	for k := range globals {
		names = append(names, strings.TrimPrefix(k, "g_"))
	}
	src := crossingCases + "const got = {" + strings.Join(func() []string {
		var out []string
		for _, k := range names {
			out = append(out, k+": g_"+k)
		}
		return out
	}(), ", ") + `};
		const out = {};
		for (const k of Object.keys(got)) {
			if (describe(got[k]) !== describe(cases[k])) out[k] = [describe(cases[k]), describe(got[k])];
		}
		export default out;`
	res := runOpts(t, src, airlock.Options{Language: airlock.JavaScript, Globals: globals})
	wantStatus(t, res, airlock.StatusSuccess)
	for k, d := range res.Result.(map[string]any) {
		t.Errorf("%s from Go: want, got:\n%q", k, d)
	}
}

// Scores is a user's own named slice type of a numeric kind.
type Scores []float64

// Plain Go slices of every numeric kind, and a user's named slice type of
// one, reach the sandbox as Arrays of numbers, as encoding/json writes them
// (int64 and uint64 elements as numbers, as int64 scalars are); []byte
// stays a Uint8Array; the package's typed array types are typed arrays.
func TestCrossing_GoSlices(t *testing.T) {
	globals := map[string]any{
		"i8": []int8{-1, 2}, "i16": []int16{-1, 2}, "u16": []uint16{1, 2}, "i32": []int32{-1, 2},
		"u32": []uint32{1, 2}, "f32": []float32{-1, 2}, "f64": []float64{-1, 2}, "i64": []int64{-1, 2},
		"u64": []uint64{1, 2}, "ints": []int{-1, 2}, "uints": []uint{1, 2}, "scores": Scores{-1, 2},
		"arr3": [3]float64{-1, 2},
	}
	names := make([]string, 0, len(globals))
	for k := range globals {
		names = append(names, k)
	}
	globals["bytes"] = []byte{1, 2}
	globals["typed64"] = js.Float64Array{1.5}
	globals["typedBig"] = js.BigInt64Array{-2}
	res := runOpts(t, `
		const out = {};
		for (const [k, v] of Object.entries({ `+strings.Join(names, ", ")+` })) {
			const ok = Array.isArray(v) && Object.getPrototypeOf(v) === Array.prototype &&
				v.every((x) => typeof x === "number") && v[0] + 1 === (k[0] === "u" ? 2 : 0) &&
				v.slice(0, 2).map(String).join() === (k[0] === "u" ? "1,2" : "-1,2") &&
				v.push(3) === (k === "arr3" ? 4 : 3) &&
				JSON.stringify(v.slice(0, 2)) === (k[0] === "u" ? "[1,2]" : "[-1,2]");
			if (!ok) out[k] = Object.prototype.toString.call(v) + " " + JSON.stringify(v);
		}
		out.bytes = bytes instanceof Uint8Array;
		out.typed64 = typed64 instanceof Float64Array && typed64[0] === 1.5;
		out.typedBig = typedBig instanceof BigInt64Array && typedBig[0] === -2n;
		out.ids = i64[0] + 1;
		export default out;`,
		airlock.Options{Language: airlock.JavaScript, Globals: globals})
	wantResult(t, res, map[string]any{"bytes": true, "typed64": true, "typedBig": true, "ids": 0.0})
}

// A host function returning a plain numeric slice gives the program an
// Array it can push to, stringify and map: what a Go tool returns.
func TestCrossing_GoSliceFromHostFunction(t *testing.T) {
	res := runOpts(t, `
		const xs = scores(), ids = userIDs();
		xs.push(4);
		export default [Array.isArray(xs), JSON.stringify(xs), xs.map(String).join(" "), ids[0] + 1, typeof ids[1], JSON.stringify(named())];`,
		airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{
			"scores":  func() []float64 { return []float64{1.5, 2, 3} },
			"userIDs": func() []int64 { return []int64{41, 1 << 53} },
			"named":   func() Scores { return Scores{0.5} },
		}})
	wantResult(t, res, []any{true, "[1.5,2,3,4]", "1.5 2 3 4", 42.0, "number", "[0.5]"})
}

// A typed array passed to a host function whose parameter is the plain
// slice of its element type (or a user's named slice type of it) arrives
// as that slice, NaN kept; a plain Array of numbers converts to it as
// before.
func TestCrossing_TypedArrayToSliceParameter(t *testing.T) {
	var gotF []float64
	var gotI []int64
	var gotS Scores
	var gotB []byte
	res := runOpts(t, `
		const a = sum(new Float64Array([1.5, 2.5])), b = sum([1, 2]);
		const c = ids(new BigInt64Array([-(2n ** 63n), 7n]));
		const d = scores(new Float64Array([0.25, NaN]));
		const e = bytes(new Uint8Array([9]));
		export default [a, b, c, d, e];`,
		airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{
			"sum": func(x []float64) float64 {
				if gotF == nil {
					gotF = x
				}
				s := 0.0
				for _, v := range x {
					s += v
				}
				return s
			},
			"ids":    func(x []int64) int { gotI = x; return len(x) },
			"scores": func(x Scores) int { gotS = x; return len(x) },
			"bytes":  func(x []byte) int { gotB = x; return len(x) },
		}})
	wantResult(t, res, []any{4.0, 3.0, 2.0, 2.0, 1.0})
	if !reflect.DeepEqual(gotF, []float64{1.5, 2.5}) || !reflect.DeepEqual(gotI, []int64{math.MinInt64, 7}) ||
		len(gotS) != 2 || gotS[0] != 0.25 || !math.IsNaN(gotS[1]) || !reflect.DeepEqual(gotB, []byte{9}) {
		t.Errorf("got %#v %#v %#v %#v", gotF, gotI, gotS, gotB)
	}
}

// structuredClone inside the sandbox keeps the same types.
func TestCrossing_StructuredClone(t *testing.T) {
	res := runOpts(t, crossingCases+`
		const out = {};
		for (const [k, v] of Object.entries(cases)) {
			const c = structuredClone({ v }).v;
			if (describe(c) !== describe(v)) out[k] = [describe(v), describe(c)];
		}
		export default out;
	`, airlock.Options{Language: airlock.JavaScript})
	wantResult(t, res, map[string]any{})
}

// Inspect and JSONValue show the new types as Node and JSON.stringify do.
func TestCrossing_ShownAsNode(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{&js.RegExp{Source: "a+b", Flags: "gi"}, "/a+b/gi"},
		{&js.Boxed{Value: 1.5}, "[Number: 1.5]"},
		{&js.Boxed{Value: "s"}, "[String: 's']"},
		{&js.Boxed{Value: false}, "[Boolean: false]"},
		{&js.Boxed{Value: big.NewInt(1)}, "[BigInt: 1n]"},
		{&js.Array{Elements: []any{1.0, 2.0}, Props: map[string]any{"total": 3.0}}, "[ 1, 2, total: 3 ]"},
		{js.Float64Array{1.5, math.NaN()}, "Float64Array(2) [ 1.5, NaN ]"},
		{js.BigInt64Array{-1}, "BigInt64Array(1) [ -1n ]"},
		{js.Int8Array{-1}, "Int8Array(1) [ -1 ]"},
		{[]float64{1.5, 2}, "[ 1.5, 2 ]"},
		{[]int64{-1}, "[ -1 ]"},
		{Scores{1}, "[ 1 ]"},
		{js.DataView{1, 2}, "DataView { byteLength: 2, byteOffset: 0, buffer: ArrayBuffer { [Uint8Contents]: <01 02>, byteLength: 2 } }"},
	} {
		if got := airlock.Inspect(c.v); got != c.want {
			t.Errorf("Inspect(%#v) = %q, want %q", c.v, got, c.want)
		}
	}
	b, err := json.Marshal(js.JSONValue(map[string]any{
		"b": &js.Boxed{Value: math.NaN()}, "a": &js.Array{Elements: []any{1.0}, Props: map[string]any{"x": 1.0}},
		"d": time.Time{}, "f64": js.Float64Array{1, math.NaN()}, "f32": js.Float32Array{float32(math.Inf(1))},
		"i64": js.BigInt64Array{-1},
	}))
	if err != nil || string(b) != `{"a":[1],"b":null,"d":null,"f32":[null],"f64":[1,null],"i64":[-1]}` {
		t.Errorf("JSONValue = %s, %v", b, err)
	}
}

// Hostile values met while encoding: a getter that throws is an error in
// the sandbox, which the program can catch; getters that change what is
// being encoded (grow an array, add keys, replace a Map's entries) leave a
// value that crosses or an error, never a crash or a hang; a Proxy of any
// of the new kinds is refused before its traps run.
func TestCrossing_HostileDuringEncoding(t *testing.T) {
	res := runOpts(t, `
		const out = [];
		const thrower = { get x() { throw new RangeError("no"); } };
		try { echo(thrower); out.push("crossed"); } catch (e) { out.push(e.name + ":" + e.message); }
		const arrThrower = [1, 2]; Object.defineProperty(arrThrower, "named", { get() { throw new Error("named"); }, enumerable: true });
		try { echo(arrThrower); out.push("crossed"); } catch (e) { out.push(e.message); }
		const grow = [1, 2, 3]; grow.extra = 1;
		Object.defineProperty(grow, "late", { get() { grow.push(4); grow.more = 1; for (let i = 0; i < 1000; i++) grow["k" + i] = i; return 5; }, enumerable: true });
		const g = echo(grow);
		out.push(Array.isArray(g) && g.late === 5 && g.extra === 1);
		const m = new Map([[1, { get v() { m.clear(); m.set(2, 2); return 1; } }]]);
		out.push(echo(m) instanceof Map);
		const box = new Number(3);
		Object.defineProperty(box, "valueOf", { get() { throw new Error("read"); } });
		out.push(echo(box) + 0);
		const re = /x/g; re.lastIndex = 5;
		Object.defineProperty(re, "flags", { get() { throw new Error("flags read"); } });
		out.push(String(echo(re)));
		let trapped = false;
		for (const target of [/x/, new DataView(new ArrayBuffer(1)), new Number(1), Object.assign([1], { n: 1 })]) {
			const p = new Proxy(target, { get() { trapped = true; }, ownKeys() { trapped = true; return []; } });
			try { echo(p); out.push("proxy crossed"); } catch (e) { out.push(e.name); }
		}
		out.push(trapped);
		export default out;
	`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"echo": func(v any) any { return v }}})
	wantResult(t, res, []any{"RangeError:no", "named", true, true, 3.0, "/x/g",
		"DataCloneError", "DataCloneError", "DataCloneError", "DataCloneError", false})
}

// A typed array of 8 MiB crosses out and back under the memory limit and
// the run's value budget; one past the budget is an error in the sandbox,
// not host memory.
func TestCrossing_HugeTypedArrays(t *testing.T) {
	var got int
	res := runOpts(t, `
		const a = new Float64Array(1 << 20).fill(1.5);
		const b = echo(a);
		export default [b instanceof Float64Array, b.length, b[b.length - 1]];
	`, airlock.Options{Language: airlock.JavaScript, MemoryLimitBytes: 256 << 20, Globals: map[string]any{
		"echo": func(v []float64) js.Float64Array { got = len(v); return v },
	}})
	wantResult(t, res, []any{true, float64(1 << 20), 1.5})
	if got != 1<<20 {
		t.Fatalf("the host function got %d elements", got)
	}
	rt := airlock.NewRuntime(airlock.RuntimeConfig{MaxValueBytes: 4 << 20})
	defer rt.Close()
	ex, err := rt.Run(context.Background(), `
		let r = "crossed";
		try { echo(new BigInt64Array(1 << 20)); } catch (e) { r = e.message; }
		export default r;
	`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{"echo": func(v any) any { return v }}})
	if err != nil {
		t.Fatal(err)
	}
	if r := ex.Wait(); r.Status != airlock.StatusSuccess || !strings.Contains(fmt.Sprint(r.Result), "budget") {
		t.Fatalf("an 8 MiB typed array past a 4 MiB budget: %s %v %v", r.Status, r.Result, r.Error)
	}
}

// A string of lone surrogates, and one with every kind of unit, survives
// any path: raw argument, encoded argument, result, global, log.
func TestCrossing_LoneSurrogatePaths(t *testing.T) {
	var logged string
	res := runOpts(t, `
		const s = "x\uD800y\uDFFF\uD83D\uDE00\uDBFF";
		const units = (v) => Array.from({ length: v.length }, (_, i) => v.charCodeAt(i)).join(",");
		console.log(s);
		export default [units(echo(s)) === units(s), units(echo([s])[0]) === units(s), units(g) === units(s),
			units(echo(new Map([[s, s]])).keys().next().value) === units(s), s];
	`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{
		"echo": func(v any) any { return v },
		"g":    "x\xed\xa0\x80y\xed\xbf\xbf\U0001F600\xed\xaf\xbf",
	}, Log: func(l airlock.Log) { logged, _ = l.Args[0].(string) }})
	wantResult(t, res, []any{true, true, true, true, "x\xed\xa0\x80y\xed\xbf\xbf\U0001F600\xed\xaf\xbf"})
	if logged != "x\xed\xa0\x80y\xed\xbf\xbf\U0001F600\xed\xaf\xbf" {
		t.Fatalf("logged %q", logged)
	}
	// Bytes that are not UTF-8 and no surrogate become U+FFFD, each.
	res = runOpts(t, `export default [g.length, g.charCodeAt(1), echo(g) === g]`, airlock.Options{
		Language: airlock.JavaScript, Globals: map[string]any{"g": "a\xff\xfeb", "echo": func(v any) any { return v }}})
	wantResult(t, res, []any{4.0, 65533.0, true})
}

// A string made by concatenation is a rope in the engine (a value of its
// own tag, JS_TAG_STRING_ROPE, until it is flattened): it crosses as any
// string, alone, inside a value and in a log.
func TestCrossing_RopeStrings(t *testing.T) {
	var got []any
	var logged string
	res := runOpts(t, `
		const big = "FIRST" + "x".repeat(100000) + "LAST";
		const small = "a" + String(Math.random() > 2);
		console.log(big);
		echo(big, [small], { big });
		export default big.length;
	`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{
		"echo": func(a ...any) { got = a },
	}, Log: func(l airlock.Log) { logged, _ = l.Args[0].(string) }})
	wantResult(t, res, 100009.0)
	big := "FIRST" + strings.Repeat("x", 100000) + "LAST"
	if logged != big || len(got) != 3 || got[0] != big || !reflect.DeepEqual(got[1], []any{"afalse"}) ||
		!reflect.DeepEqual(got[2], map[string]any{"big": big}) {
		t.Fatalf("logged %d bytes, got %d values", len(logged), len(got))
	}
}

// Getters that act on what the native encoder has yet to read: a buffer
// transferred (detached) before its typed array is reached is a TypeError
// in the sandbox; a Map changed while its entries are encoded crosses as
// it was when the encoder listed them; an array grown by a getter of one
// of its elements crosses at the length it had.
func TestCrossing_NativeEncoderMutations(t *testing.T) {
	res := runOpts(t, `
		const out = [];
		const buf = new ArrayBuffer(8);
		const o = { get first() { buf.transfer(); return 1; }, view: new Uint8Array(buf) };
		try { take(o); out.push("crossed"); } catch (e) { out.push(e.name); }
		const m = new Map([["a", { get x() { m.set("b", 2); m.delete("a"); return 1; } }]]);
		out.push(echo(m).size);
		const arr = [{ get x() { arr.push(4, 5, 6); return 0; } }, 2];
		out.push(echo(arr).length);
		export default out;
	`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{
		"take": func(v any) {}, "echo": func(v any) any { return v },
	}})
	wantResult(t, res, []any{"TypeError", 1.0, 2.0})
}

// The native encoder's bytes grow in the engine's heap: a value whose
// encoding passes the memory limit ends the run with status memory, like
// any allocation over it, and the host is untouched.
func TestCrossing_EncodingOverMemoryLimit(t *testing.T) {
	res := runOpts(t, `const a = new Uint8Array(10 << 20); export default [a, a.slice(), a.slice()];`,
		airlock.Options{Language: airlock.JavaScript, MemoryLimitBytes: 48 << 20})
	wantStatus(t, res, airlock.StatusMemory)
}

// structuredClone is the native encoder and decoder: it keeps what the
// crossing keeps, and holes too, since nothing passes through Go.
func TestCrossing_StructuredCloneKeepsHoles(t *testing.T) {
	res := runOpts(t, `const a = [1, , 3]; a.n = 1; const c = structuredClone(a);
		export default [c.length, 1 in c, c.n, c !== a];`, airlock.Options{Language: airlock.JavaScript})
	wantResult(t, res, []any{3.0, false, 1.0, true})
}

// Values from Go that are not plain JSON cross in the binary format and
// are built natively: a Map keyed by an object, a shared object, a
// function inside a Map, each as it was.
func TestCrossing_NativeDecoderFromGo(t *testing.T) {
	shared := map[string]any{"k": 1}
	res := runOpts(t, `export default [m instanceof Map, m.size, typeof m.get("f"), m.get("f")(2),
		pair[0] === pair[1], Object.getPrototypeOf(pair) === Array.prototype, Object.prototype.hasOwnProperty.call(pair[0], "k")];`,
		airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{
			"m":    &js.Map{Entries: []js.MapEntry{{Key: "f", Value: func(n float64) float64 { return n * 3 }}, {Key: time.Time{}, Value: nil}}},
			"pair": []any{shared, shared},
		}})
	wantResult(t, res, []any{true, 2.0, "function", 6.0, true, true, true})
}

// The native decoder defines own properties: setters a program put on
// Object.prototype or Array.prototype never see a value from the host.
func TestCrossing_NativeDecoderIgnoresSetters(t *testing.T) {
	res := runOpts(t, `
		let seen = 0;
		Object.defineProperty(Object.prototype, "k", { set(v) { seen++; }, configurable: true });
		Object.defineProperty(Array.prototype, "0", { set(v) { seen++; }, configurable: true });
		const v = get();
		export default [seen, v.o.k, v.a[0], v.m.get("x").k];
	`, airlock.Options{Language: airlock.JavaScript, Globals: map[string]any{
		"get": func() any {
			return map[string]any{"o": map[string]any{"k": 1}, "a": []any{2.0},
				"m": &js.Map{Entries: []js.MapEntry{{Key: "x", Value: map[string]any{"k": 3}}}}}
		},
	}})
	wantResult(t, res, []any{0.0, 1.0, 2.0, 3.0})
}
